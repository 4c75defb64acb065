"""Hostile requests and the answer each must get, sent to a real server.

Every probe names what it sends and what it wants: an HTTP status and the error's
``field`` (REST), or a gRPC status and the ``gameai-field`` trailer. A REST error body must
also have our shape (``{"error": {"status", "code", "field", "message"}}``, the message
starting with the field), except where the HTTP parser refuses the request before the
application sees it (an oversized header, a broken ``Content-Length``): those get a bare
400 and the connection closed, which is all HTTP allows there.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import grpc
import httpx

from gameai.stress.harness import ServerProcess

MOVE = "/v1/games/tictactoe/best-move"
BATCH = "/v1/games/tictactoe/evaluate-batch"
BOARD = "X--|-O-|---"
MIB = 1 << 20
GRPC_CODES = {413: "RESOURCE_EXHAUSTED", 422: "INVALID_ARGUMENT", 409: "FAILED_PRECONDITION",
              404: "NOT_FOUND"}


@dataclass(frozen=True)
class Shared:
    """A hostile request that both transports can carry (its fields are text, as the
    protobuf messages declare them): sent as JSON to REST and as a message to gRPC, it
    must get the same error and the same field on both."""

    name: str
    method: str  # BestMove, Evaluate, Analyze or EvaluateBatch
    fields: dict[str, Any]
    status: int
    field: str
    game: str = "tictactoe"
    grpc_field: str | None = None  # where gRPC's differs (a transport refusal has none)

    @property
    def path(self) -> str:
        route = {"BestMove": "best-move", "Evaluate": "evaluate", "Analyze": "analyze",
                 "EvaluateBatch": "evaluate-batch"}[self.method]
        return f"/v1/games/{self.game}/{route}"


SHARED = [
    Shared("board missing", "BestMove", {"model": ""}, 422, "board"),
    Shared("board empty", "Evaluate", {"board": ""}, 422, "board"),
    Shared("board of 900,000 characters", "BestMove", {"board": "X" * 900_000}, 422, "board"),
    Shared("board with NUL", "BestMove", {"board": "X\x00-|-O-|---"}, 422, "board"),
    Shared("board with control characters", "BestMove", {"board": "X\x1b[2J|-O-|---"}, 422,
           "board"),
    Shared("board with right-to-left override", "BestMove", {"board": "X\u202e-|-O-|---"},
           422, "board"),
    Shared("board with emoji", "Evaluate", {"board": "X😀-|-O-|---"}, 422, "board"),
    Shared("board with full-width X", "Analyze", {"board": "Ｘ--|-O-|---"}, 422, "board"),
    Shared("finished game", "BestMove", {"board": "XXX|OO-|---"}, 409, "board"),
    Shared("moves on a game without a move notation", "BestMove", {"moves": "1 2"}, 422,
           "moves"),
    Shared("both moves and a board", "Evaluate", {"moves": "", "board": BOARD}, 422, "moves"),
    Shared("client_id of 300,000 characters", "BestMove",
           {"board": BOARD, "client_id": "c" * 300_000}, 422, "client_id"),
    Shared("model a path", "BestMove", {"board": BOARD, "model": "../../etc/passwd"}, 404,
           "model"),
    Shared("unknown version", "BestMove", {"board": BOARD, "model": "9" * 20}, 404, "model"),
    Shared("unknown level", "BestMove", {"board": BOARD, "level": "expert"}, 422, "level"),
    Shared("game with NUL", "BestMove", {"board": BOARD}, 404, "game", game="tic%00tactoe"),
    Shared("game with unicode", "BestMove", {"board": BOARD}, 404, "game",
           game="t%C3%AFctactoe"),
    Shared("body over 1 MiB", "BestMove", {"board": "X" * (MIB + 10)}, 413, "body",
           grpc_field=""),
    Shared("batch of 10,001 boards", "EvaluateBatch", {"boards": [BOARD] * 10_001}, 413,
           "boards"),
    Shared("batch with an empty board", "EvaluateBatch", {"boards": [BOARD, ""]}, 422,
           "boards[1]"),
    Shared("batch with a finished board", "EvaluateBatch",
           {"boards": [BOARD, BOARD, "XXX|OO-|---"]}, 409, "boards[2]"),
]


@dataclass(frozen=True)
class Probe:
    name: str
    want: str  # "422 board", "INVALID_ARGUMENT body", "400"
    got: str

    @property
    def ok(self) -> bool:
        return self.got == self.want


def rest_probes(server: ServerProcess) -> list[Probe]:
    """Every REST probe's outcome."""
    cases: list[tuple[str, str, Callable[[httpx.Client], str]]] = []

    def post(name: str, want: str, path: str, body: object = None, *, raw: bytes | None = None,
             headers: dict[str, str] | None = None) -> None:
        content = raw if raw is not None else json.dumps(body).encode()
        cases.append((name, want, lambda c: _shape(c.post(path, content=content, headers={
            "content-type": "application/json", **(headers or {})}))))

    def get(name: str, want: str, path: str) -> None:
        cases.append((name, want, lambda c: _shape(c.get(path))))

    get("unknown route", "404 path", "/v1/no-such-route")
    get("wrong method", "405 method", MOVE)
    get("route that does not exist under a game", "404 path", "/v1/games/tictactoe/secret")
    post("not JSON", "422 body", MOVE, raw=b'{"board": ')
    post("JSON array instead of an object", "422 body", MOVE, [BOARD])
    post("200,000 nested arrays", "422 body", MOVE,
         raw=b'{"board": ' + b"[" * 200_000 + b"]" * 200_000 + b"}")
    post("invalid UTF-8", "422 body", MOVE, raw=b'{"board": "\xff\xfe"}')
    post("a 5,000-digit number", "422 body", MOVE, raw=b'{"board": ' + b"9" * 5000 + b"}")
    for label, value in (("a number", 7), ("null", None), ("an object", {"x": 1}),
                         ("a list", [BOARD]), ("true", True)):
        post(f"board {label}", "422 board", MOVE, {"board": value})
    post("board NaN", "422 board", MOVE, raw=b'{"board": NaN}')
    post("board 1e999999 (infinity)", "422 board", MOVE, raw=b'{"board": 1e999999}')
    post("board with a lone surrogate", "422 board", MOVE, raw=b'{"board": "\\ud800--|---|---"}')
    post("client_id an object", "422 client_id", MOVE, {"board": BOARD, "client_id": {"a": 1}})
    post("model a number", "422 model", MOVE, {"board": BOARD, "model": 2})
    post("game of 10,000 characters", "422 game", "/v1/games/" + "g" * 10_000 + "/best-move",
         {"board": BOARD})
    cases.append(("chunked body over 1 MiB", "413 body", lambda c: _shape(c.post(
        MOVE, content=iter([b'{"board": "' + b"X" * 65536] * 20 + [b'"}']),
        headers={"content-type": "application/json"}))))
    post("batch not a list", "422 boards", BATCH, {"boards": BOARD})
    post("batch with a number inside", "422 boards[1]", BATCH, {"boards": [BOARD, 5]})
    for case in SHARED:
        post(case.name, f"{case.status} {case.field}", case.path, case.fields)
    post("include_move_values a string", "422 include_move_values", BATCH,
         {"boards": [BOARD], "include_move_values": "yes"})
    get("version of 30 digits", "404 version", "/v1/games/tictactoe/models/" + "9" * 30)
    get("version of 5,000 characters", "422 version", "/v1/games/tictactoe/models/" + "9" * 5000)
    cases.append(("admin route without a token", "401 authorization", lambda c: _shape(
        c.put("/v1/games/tictactoe/aliases/production", json={"version": 1}))))
    cases.append(("admin route with a wrong token", "401 authorization", lambda c: _shape(
        c.put("/v1/games/tictactoe/aliases/production", json={"version": 1},
              headers={"authorization": "Bearer " + "x" * 36}))))
    cases.append(("admin body nested 200,000 deep", "400 body", lambda c: _shape(c.put(
        "/v1/games/tictactoe/canary", content=b"[" * 200_000 + b"]" * 200_000,
        headers={"content-type": "application/json"}))))
    outcomes = []
    with httpx.Client(base_url=server.http, timeout=30) as client:
        for name, want, send in cases:
            outcomes.append(Probe(name, want, _guard(partial(send, client))))
    raw = [("header of 2 MB", "400", b"X-Big: " + b"a" * 2_000_000 + b"\r\n"),
           ("Content-Length not a number", "400", b"Content-Length: many\r\n"),
           ("two Content-Length headers", "400",
            b"Content-Length: 5\r\nContent-Length: 25\r\n")]
    for name, want, header in raw:
        outcomes.append(Probe(name, want, _guard(partial(_raw_status, server, header))))
    return outcomes


def _shape(response: httpx.Response) -> str:
    """``"STATUS FIELD"`` for an error in our shape; says what is wrong otherwise."""
    if response.status_code < 400:
        return str(response.status_code)
    try:
        error = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        return f"{response.status_code} not our error shape: {response.text[:80]!r}"
    field, message = error.get("field", ""), error.get("message", "")
    if error.get("status") != response.status_code or (field and not message.startswith(field)):
        return f"{response.status_code} inconsistent error {error}"
    return f"{response.status_code} {field}".strip()


def _guard(send: Callable[[], str]) -> str:
    try:
        return send()
    except (httpx.HTTPError, OSError, grpc.RpcError) as e:
        return f"{type(e).__name__}: {e}"[:120]


def _post_status(http: httpx.Client, body: bytes) -> str:
    return str(http.post(MOVE, content=body, headers={"content-type": "application/json"})
               .status_code)


def _raw_status(server: ServerProcess, header: bytes) -> str:
    """The status line's code for a request with ``header`` sent byte for byte."""
    body = json.dumps({"board": BOARD}).encode()
    length = b"" if b"Content-Length" in header else b"Content-Length: %d\r\n" % len(body)
    request = (b"POST " + MOVE.encode() + b" HTTP/1.1\r\nHost: stress\r\n"
               b"Content-Type: application/json\r\n" + length + header + b"\r\n" + body)
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=10) as sock:
        # the server may close before reading it all; its answer is still there
        with contextlib.suppress(OSError):
            sock.sendall(request)
        reply = sock.recv(200)
    return reply.split(b" ", 2)[1].decode() if reply.startswith(b"HTTP/1.1") else repr(reply)


def grpc_probes(server: ServerProcess) -> list[Probe]:
    """Every gRPC probe's outcome."""
    from gameai.service.gen.gameai.v1 import models_pb2, models_pb2_grpc, move_pb2, move_pb2_grpc

    options = [("grpc.max_send_message_length", 64 * MIB)]
    with grpc.insecure_channel(server.grpc, options=options) as channel:
        moves = move_pb2_grpc.MoveServiceStub(channel)
        models = models_pb2_grpc.ModelServiceStub(channel)
        raw = channel.unary_unary("/gameai.v1.MoveService/BestMove",
                                  request_serializer=lambda b: b,
                                  response_deserializer=lambda b: b)
        unknown = channel.unary_unary("/gameai.v1.MoveService/Nope",
                                      request_serializer=lambda b: b,
                                      response_deserializer=lambda b: b)
        best = move_pb2.BestMoveRequest
        cases: list[tuple[str, str, Callable[[], Any]]] = [
            # refused by the transport before the server reads it (docs/api.md): no field
            ("message of 2.6 MB", "RESOURCE_EXHAUSTED", lambda: moves.EvaluateBatch(
                move_pb2.EvaluateBatchRequest(game="tictactoe", boards=[BOARD] * 200_000))),
            ("board not UTF-8", "INVALID_ARGUMENT body", lambda: raw(
                bytes([0x0A, 9]) + b"tictactoe" + bytes([0x12, 3]) + b"\xff\xfe\xfd")),
            ("bytes that are no protobuf", "INVALID_ARGUMENT body",
             lambda: raw(b"\xff\xff\xff\xff\xff")),
            ("unknown method", "UNIMPLEMENTED", lambda: unknown(b"")),
            ("empty game", "INVALID_ARGUMENT game", lambda: moves.BestMove(
                best(game="", board=BOARD))),
            ("unknown game", "NOT_FOUND game", lambda: moves.BestMove(
                best(game="chess", board=BOARD))),
            ("game of 100,000 characters", "INVALID_ARGUMENT game", lambda: moves.BestMove(
                best(game="g" * 100_000, board=BOARD))),
            ("client_id of 100,000 characters", "INVALID_ARGUMENT client_id",
             lambda: moves.BestMove(best(game="tictactoe", board=BOARD,
                                         client_id="c" * 100_000))),
            ("finished game", "FAILED_PRECONDITION board", lambda: moves.Evaluate(
                move_pb2.EvaluateRequest(game="tictactoe", board="XOX|XOO|OXX"))),
            ("unknown version", "NOT_FOUND model", lambda: moves.BestMove(
                best(game="tictactoe", board=BOARD, model="99999999999999999999"))),
            ("version of 150 digits", "NOT_FOUND version", lambda: models.GetModel(
                models_pb2.GetModelRequest(game="tictactoe", version="9" * 150))),
        ]
        for case in SHARED:
            request = getattr(move_pb2, f"{case.method}Request")(
                game=urllib.parse.unquote(case.game), **case.fields)
            field = case.field if case.grpc_field is None else case.grpc_field
            cases.append((case.name, f"{GRPC_CODES[case.status]} {field}".strip(),
                          partial(getattr(moves, case.method), request)))
        return [Probe(name, want, _guard(partial(_grpc_outcome, send)))
                for name, want, send in cases]


def _grpc_outcome(send: Callable[[], Any]) -> str:
    try:
        send()
    except grpc.RpcError as e:
        field = dict(e.trailing_metadata() or ()).get("gameai-field", "")
        details = e.details() or ""
        if field and not details.startswith(f"{field}:"):
            return f"{e.code().name} {field} (message {details[:60]!r})"
        return f"{e.code().name} {field}".strip()
    return "OK"


def memory_burst(server: ServerProcess, *, clients: int = 16,
                 rounds: int = 4) -> tuple[int, int]:
    """``clients`` threads each sending near-limit and over-limit requests on both
    transports; returns (requests sent, peak RSS seen while they ran)."""
    near = json.dumps({"board": "X" * (MIB - 100)}).encode()
    over = b'{"board": "' + b"X" * (2 * MIB) + b'"}'
    sent, peak, done = [0], [server.rss_bytes()], threading.Event()

    def client() -> None:
        from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc

        with httpx.Client(base_url=server.http, timeout=30) as http, grpc.insecure_channel(
                server.grpc, options=[("grpc.max_send_message_length", 64 * MIB)]) as channel:
            stub = move_pb2_grpc.MoveServiceStub(channel)
            for _ in range(rounds):
                for body in (near, over):
                    _guard(partial(_post_status, http, body))
                    sent[0] += 1
                _guard(lambda: _grpc_outcome(lambda: stub.EvaluateBatch(
                    move_pb2.EvaluateBatchRequest(game="tictactoe", boards=["X" * 1000] * 2000))))
                sent[0] += 1

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], server.rss_bytes())
            done.wait(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    done.set()
    watcher.join()
    return sent[0], peak[0]
