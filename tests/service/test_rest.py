"""The REST API against a real server and a real Redis: answers, every error, admin, docs."""

from __future__ import annotations

import time

import httpx
import pytest

from gameai.store import ModelStore
from tests.service.cases import ERROR_CASES, Case
from tests.service.conftest import ADMIN_TOKEN, RunningServer, variant

PATHS = {"BestMove": "best-move", "Evaluate": "evaluate", "EvaluateBatch": "evaluate-batch",
         "Analyze": "analyze", "Review": "review", "AnalyzeStream": "analyze/stream"}


@pytest.fixture(scope="module")
def http(limited_server: RunningServer):
    with httpx.Client(base_url=limited_server.http, timeout=10) as client:
        yield client


def post(http: httpx.Client, case: Case) -> httpx.Response:
    return http.post(f"/v1/games/{case.game}/{PATHS[case.method]}", json=case.body)


def test_best_move_answers_with_the_version(http: httpx.Client) -> None:
    r = http.post("/v1/games/tictactoe/best-move",
                  json={"board": "XX-|OO-|---", "model": "production", "client_id": "c1"})
    assert r.status_code == 200
    assert r.json() == {"game": "tictactoe", "model_version": 1,
                        "move": {"row": 0, "col": 2, "index": 2}, "value": r.json()["value"],
                        "level": "best", "exact": False}
    assert r.json()["value"] > 0.5


def test_evaluate_lists_moves_best_first(http: httpx.Client) -> None:
    r = http.post("/v1/games/tictactoe/evaluate", json={"board": "XX-|OO-|---"})
    body = r.json()
    assert r.status_code == 200 and body["to_move"] == "X" and body["model_version"] == 1
    assert body["moves"][0]["index"] == 2
    assert {m["index"] for m in body["moves"]} == {2, 5, 6, 7, 8}
    assert body["value"] == body["moves"][0]["value"]
    assert set(body["moves"][0]) == {"row", "col", "index", "value"}


def test_batch_returns_one_result_per_board(http: httpx.Client) -> None:
    r = http.post("/v1/games/tictactoe/evaluate-batch",
                  json={"boards": ["XX-|OO-|---", "X--|-O-|---"], "include_move_values": True})
    body = r.json()
    assert r.status_code == 200 and body["model_version"] == 1
    assert (body["move_row"], body["move_col"], body["move_index"]) == ([0, 0], [2, 1], [2, 1])
    assert body["to_move"] == ["X", "X"] and body["value"][0] > 0.5
    second = body["move_values"][1]
    assert len(second) == 9 and second[0] is None and second[4] is None
    assert second[1] == body["value"][1]


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: c.name)
def test_errors_follow_the_table(http: httpx.Client, case: Case) -> None:
    r = post(http, case)
    assert r.status_code == case.http, r.text
    error = r.json()["error"]
    assert error["code"] == case.grpc and error["status"] == case.http
    assert error["field"] == case.field
    assert error["message"].startswith(f"{case.field}: ") and len(error["message"]) > 12


@pytest.mark.parametrize(("body", "field"), [
    ({}, "board"),
    ({"board": 5}, "board"),
    ({"board": "---|---|---", "client_id": ["x"]}, "client_id"),
])
def test_request_shape_errors_name_the_field(http: httpx.Client, body: dict[str, object],
                                             field: str) -> None:
    r = http.post("/v1/games/tictactoe/best-move", json=body)
    assert r.status_code == 422
    assert r.json()["error"]["field"] == field
    assert r.json()["error"]["code"] == "INVALID_ARGUMENT"


def test_broken_json_is_a_422_naming_the_body(http: httpx.Client) -> None:
    r = http.post("/v1/games/tictactoe/best-move", content=b'{"board',
                  headers={"content-type": "application/json"})
    assert r.status_code == 422 and r.json()["error"]["field"] == "body"


def test_oversized_body_is_a_413(http: httpx.Client) -> None:
    r = http.post("/v1/games/tictactoe/best-move", json={"board": "-" * 5000})
    assert r.status_code == 413
    assert r.json()["error"] == {"status": 413, "code": "RESOURCE_EXHAUSTED", "field": "body",
                                 "message": "body: the request body is over 4096 bytes"}


def test_chunked_oversized_body_is_a_413(http: httpx.Client) -> None:
    def chunks():
        yield b'{"board": "'
        for _ in range(10):
            yield b"-" * 1000
        yield b'"}'
    r = http.post("/v1/games/tictactoe/best-move", content=chunks(),
                  headers={"content-type": "application/json"})
    assert r.status_code == 413


def raw_exchange(server: RunningServer, requests: list[bytes]) -> list[bytes]:
    """Send ``requests`` one after another on one keep-alive connection, byte for byte;
    each answer's status line, or b"" once the server closed the connection."""
    import socket

    host, port = server.http.removeprefix("http://").split(":")
    answers = []
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        reader = sock.makefile("rb")
        for request in requests:
            try:
                sock.sendall(request)
            except OSError:  # closed under the request: that is the answer
                answers.append(b"")
                continue
            status = reader.readline()
            answers.append(status.strip())
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            body = reader.read(length)
            if status.startswith(b"HTTP/1.1 400"):
                answers.append(body)
    return answers


def head_of(size: int) -> bytes:
    """A best-move request whose head carries a header of ``size`` bytes."""
    body = b'{"board": "XX-|OO-|---"}'
    return (b"POST /v1/games/tictactoe/best-move HTTP/1.1\r\nHost: test\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\nX-Pad: %s\r\n\r\n%s"
            % (len(body), b"a" * size, body))


def test_a_request_head_over_16_kib_is_a_400_naming_the_limit(
        limited_server: RunningServer) -> None:
    """httptools (the C parser the server runs) buffers a header whole, however long; the
    server refuses a head past 16 KiB, as h11 did, and closes the connection."""
    from gameai.service.http_protocol import MAX_HEAD_BYTES

    assert raw_exchange(limited_server, [head_of(8_000)]) == [b"HTTP/1.1 200 OK"]
    # heads under the bound, one after another on one connection: the count is per request
    assert raw_exchange(limited_server, [head_of(10_000)] * 3) == [b"HTTP/1.1 200 OK"] * 3
    refused = raw_exchange(limited_server, [head_of(2_000_000)])
    assert refused[:2] == [b"HTTP/1.1 400 Bad Request",
                           b"Request head over %d bytes: refused." % MAX_HEAD_BYTES]
    # after a refused head the connection is closed; the server goes on answering others
    assert raw_exchange(limited_server, [head_of(100)]) == [b"HTTP/1.1 200 OK"]


def test_games_and_models_are_listed(http: httpx.Client, module_store: ModelStore,
                                     perfect) -> None:
    games = http.get("/v1/games").json()["games"]
    assert [g["name"] for g in games] == ["tictactoe"]
    assert games[0]["aliases"]["production"] == 1 and games[0]["ready"] is True
    assert (games[0]["rows"], games[0]["cols"], games[0]["k"]) == (3, 3, 3)
    models = http.get("/v1/games/tictactoe/models").json()
    assert models["versions"][0]["version"] == 1
    assert models["versions"][0]["aliases"] == ["production"]
    one = http.get("/v1/games/tictactoe/models/1").json()
    assert one["sha256"] == models["versions"][0]["sha256"] and one["kind"] == "table"
    assert http.get("/v1/games/tictactoe/models/production").json()["version"] == 1
    for ref in ("42", "\u00b2"):  # "²" passes str.isdigit() but is no version number
        missing = http.get(f"/v1/games/tictactoe/models/{ref}")
        assert missing.status_code == 404 and missing.json()["error"]["field"] == "version"


def test_admin_needs_the_token(http: httpx.Client, module_store: ModelStore) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"},
                    {"Authorization": ADMIN_TOKEN}):
        r = http.put("/v1/games/tictactoe/aliases/production", json={"version": 1},
                     headers=headers)
        assert r.status_code == 401 and r.json()["error"]["code"] == "UNAUTHENTICATED"
        assert r.headers["www-authenticate"] == "Bearer"
        assert ADMIN_TOKEN not in r.text


def test_admin_sets_aliases_and_the_canary(http: httpx.Client, module_store: ModelStore,
                                           perfect) -> None:
    auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    two = module_store.publish(variant(perfect, games_played=2), by="tests").version
    r = http.put("/v1/games/tictactoe/aliases/staging", json={"version": two}, headers=auth)
    assert r.status_code == 200 and r.json()["to"] == two
    assert module_store.rollout(game="tictactoe").aliases["staging"] == two
    r = http.put("/v1/games/tictactoe/aliases/staging", json={"version": 77}, headers=auth)
    assert r.status_code == 404 and r.json()["error"]["field"] == "version"
    r = http.put("/v1/games/tictactoe/aliases/Bad Name", json={"version": two}, headers=auth)
    assert r.status_code == 422 and r.json()["error"]["field"] == "alias"
    r = http.put("/v1/games/tictactoe/canary", json={"version": two, "weight": 101},
                 headers=auth)
    assert r.status_code == 422 and r.json()["error"]["field"] == "weight"
    r = http.put("/v1/games/tictactoe/canary", json={"version": two, "weight": 0},
                 headers=auth)
    assert r.status_code == 200
    assert module_store.rollout(game="tictactoe").canary == two


def test_admin_promotion_pins_production_and_release_frees_it(
        http: httpx.Client, module_store: ModelStore, perfect, limited_server) -> None:
    auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    r = http.put("/v1/games/tictactoe/aliases/production", json={"version": 1}, headers=auth)
    assert r.status_code == 200 and r.json()["pinned"] is True
    pin = module_store.pinned(game="tictactoe")
    assert pin.version == 1 and pin.by.startswith("rest-admin@")  # pinned where it was
    listing = http.get("/v1/games/tictactoe/models").json()
    assert listing["pin"] == pin.to_json()
    limited_server.registry.wake()
    deadline = time.monotonic() + 5
    while http.get("/v1/games").json()["games"][0]["pin"] is None:
        assert time.monotonic() < deadline, "the server never saw the pin"
        time.sleep(0.05)
    assert "gameai_production_pinned{game=\"tictactoe\"} 1.0" in http.get("/metrics").text
    r = http.delete("/v1/games/tictactoe/pin", headers=auth)
    assert r.status_code == 200 and r.json()["released"]["version"] == 1
    assert module_store.pinned(game="tictactoe") is None
    assert http.delete("/v1/games/tictactoe/pin", headers=auth).json()["released"] is None
    r = http.put("/v1/games/tictactoe/pin", headers=auth)
    assert r.status_code == 200 and r.json()["pin"]["action"] == "pin"
    http.delete("/v1/games/tictactoe/pin", headers=auth)
    r = http.put("/v1/games/tictactoe/aliases/production", json={"version": 1, "pin": False},
                 headers=auth)
    assert r.status_code == 200 and "pinned" not in r.json()
    assert module_store.pinned(game="tictactoe") is None
    assert http.delete("/v1/games/tictactoe/pin").status_code == 401
    r = http.put("/v1/games/tictactoe/aliases/production", json={"version": 1, "pin": "maybe"},
                 headers=auth)
    assert r.status_code == 422 and r.json()["error"]["field"] == "pin"


def test_admin_routes_are_off_without_a_token(module_store: ModelStore, start_server) -> None:
    running = start_server(module_store, admin_token=None)
    r = httpx.put(f"{running.http}/v1/games/tictactoe/aliases/production",
                  json={"version": 1}, headers={"Authorization": "Bearer anything"})
    assert r.status_code == 404


def test_health_readiness_docs_and_board(http: httpx.Client) -> None:
    assert http.get("/healthz").status_code == 200
    ready = http.get("/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    assert ready.json()["games"]["tictactoe"]["aliases"]["production"] == 1
    assert http.get("/docs").status_code == 200
    spec = http.get("/openapi.json").json()
    assert "/v1/games/{game}/best-move" in spec["paths"]
    page = http.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]


def test_unknown_routes_and_methods_answer_in_the_error_shape(http: httpx.Client) -> None:
    r = http.get("/v1/no-such-thing")
    assert r.status_code == 404
    assert r.json()["error"] == {"status": 404, "code": "NOT_FOUND", "field": "path",
                                 "message": "path: no such resource: /v1/no-such-thing"}
    r = http.get("/v1/games/tictactoe/best-move")
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert r.json()["error"]["code"] == "UNIMPLEMENTED"
    assert r.json()["error"]["field"] == "method"
    assert http.get("/web/no-such-file.js").json()["error"]["field"] == "path"


def test_deeply_nested_json_is_refused_not_a_500(http: httpx.Client) -> None:
    deep = "[" * 2000 + "]" * 2000  # within the 4 KiB limit of this server
    r = http.post("/v1/games/tictactoe/best-move", content=f'{{"board": {deep}}}')
    assert r.status_code == 422, r.text
    assert r.json()["error"]["field"] == "body" and "nested" in r.json()["error"]["message"]
    r = http.put("/v1/games/tictactoe/aliases/production", content=f'{{"version": {deep}}}',
                 headers={"Authorization": f"Bearer {ADMIN_TOKEN}",
                          "Content-Type": "application/json"})
    assert r.status_code in (400, 422), r.text
    assert r.json()["error"]["field"] == "body"


def test_openapi_documents_every_error_answer(http: httpx.Client) -> None:
    spec = http.get("/openapi.json").json()
    best = spec["paths"]["/v1/games/{game}/best-move"]["post"]["responses"]
    assert set(best) == {"200", "404", "409", "413", "422", "503"}
    assert best["422"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorOut")
    shape = spec["components"]["schemas"]["ErrorDetail"]["properties"]
    assert set(shape) == set(http.get("/v1/games/chess/models").json()["error"])
    models = spec["paths"]["/v1/games/{game}/models"]["get"]["responses"]
    assert {"404", "422", "503"} <= set(models) and "HTTPValidationError" not in str(models)
    health = spec["paths"]["/healthz"]["get"]["responses"]["200"]["content"]
    assert list(health) == ["text/plain"]


def test_a_missing_version_gets_the_same_answer_every_time(http: httpx.Client) -> None:
    """The first ask loads (and refuses) the version, later asks hit the refusal it left:
    both say the same."""
    answers = [http.post("/v1/games/tictactoe/best-move",
                         json={"board": "---|---|---", "model": "12345"}) for _ in range(3)]
    assert [a.status_code for a in answers] == [404, 404, 404]
    errors = [a.json()["error"] for a in answers]
    assert errors[0]["message"] == "model: tictactoe has no version 12345", errors[0]
    assert errors[1:] == errors[:1] * 2
