"""n-tuple networks served end to end (issue 14): best-move and evaluate with the search
depth per request (the game's default without one, within the server's maximum), batches
of the network's values, on REST and gRPC, for four-in-a-row and Connect Four; and the
precise errors of a depth asked wrongly."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import numpy as np
import pytest

from gameai.games import get_game
from gameai.models import ModelInfo, NtupleModel, TableModel
from gameai.models.ntuple import random_walks
from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import RunningServer, new_store, settings
from tests.service.test_rollout import wait_until

GAMES = ("four-in-a-row", "connect-four")
MAX_DEPTH = 3
BOARDS = {"four-in-a-row": ["----|----|----|----", "X---|-O--|--X-|----", "XX-O|O---|----|----"],
          "connect-four": ["-------|-------|-------|-------|-------|-------",
                           "-------|-------|-------|-------|---O---|--XX---",
                           "-------|-------|-------|-------|----O--|XXX-OOX"]}


def network(name: str, seed: int = 1) -> NtupleModel:
    game = get_game(name)
    states = 4 if game.gravity else 3
    rng = np.random.default_rng(seed)
    return NtupleModel(game, ModelInfo(game=name, algorithm="ntuple", seed=seed),
                       tuples=random_walks(game, 6, 5, seed),
                       weights=rng.normal(scale=0.2, size=(6, states ** 5)).astype(np.float32))


@pytest.fixture(scope="module")
def models() -> dict[str, NtupleModel]:
    return {name: network(name) for name in GAMES}


@pytest.fixture(scope="module")
def ntuple_server(redis_server: RedisServer, models: dict[str, NtupleModel],
                  perfect: TableModel) -> Iterator[RunningServer]:
    store: ModelStore = new_store(redis_server.url)
    for model in (*models.values(), perfect):
        record = store.publish(model.to_bytes(), by="tests")
        store.set_alias(game=model.game.name, alias="production", version=record.version,
                        by="tests")
    running = RunningServer(settings(store, games=(*GAMES, "tictactoe"),
                                     max_depth=MAX_DEPTH), store)
    # warming compiles the search (not cached by numba: it recurses), which may outlast
    # the server's own wait for its models on a busy machine
    wait_until(lambda: httpx.get(f"{running.http}/readyz").status_code == 200, timeout=60)
    yield running
    running.stop()
    store.close()


def post(server: RunningServer, game: str, route: str, body: dict[str, object]
         ) -> httpx.Response:
    return httpx.post(f"{server.http}/v1/games/{game}/{route}", json=body)


def _values(evaluation) -> list[tuple[int, float]]:
    return [(m.index, round(m.value, 6)) for m in evaluation.moves]


@pytest.mark.parametrize("name", GAMES)
def test_moves_and_values_by_the_search_on_both_transports(ntuple_server, models, name):
    model = models[name]
    game = model.game
    with grpc.insecure_channel(ntuple_server.grpc) as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        for text in BOARDS[name]:
            board = game.parse(text)
            default = min(model.default_depth, MAX_DEPTH)
            for depth in (None, 0, 1, MAX_DEPTH):
                want = model.search(board, default if depth is None else depth)
                extra = {} if depth is None else {"depth": depth}
                r = post(ntuple_server, name, "best-move", {"board": text, **extra})
                assert r.status_code == 200, r.text
                body = r.json()
                assert body["move"]["index"] == want.best.index
                assert body["value"] == round(want.best.value, 6)  # searched for it alone
                assert body["depth"] == (default if depth is None else depth)
                r = post(ntuple_server, name, "evaluate", {"board": text, **extra})
                assert r.status_code == 200, r.text
                got = [(m["index"], m["value"]) for m in r.json()["moves"]]
                assert got == _values(want)
                best = stub.BestMove(move_pb2.BestMoveRequest(game=name, board=text, **extra))
                assert best.move.index == want.best.index
                assert best.value == pytest.approx(want.best.value, abs=1e-6)
                e = stub.Evaluate(move_pb2.EvaluateRequest(game=name, board=text, **extra))
                assert [(m.index, round(m.value, 6)) for m in e.moves] == _values(want)


@pytest.mark.parametrize("name", GAMES)
def test_batches_give_the_network_values(ntuple_server, models, name):
    model = models[name]
    texts = BOARDS[name]
    want = model.move_values([model.game.parse(t) for t in texts])
    r = post(ntuple_server, name, "evaluate-batch", {"boards": texts,
                                                     "include_move_values": True})
    assert r.status_code == 200, r.text
    body = r.json()
    for i, values in enumerate(want):
        legal = ~np.isnan(values)
        assert body["move_index"][i] == int(np.nanargmax(values))
        got = np.array([np.nan if v is None else v for v in body["move_values"][i]], float)
        assert np.allclose(got[legal], values[legal], atol=1e-6)
        assert np.isnan(got[~legal]).all()
    with grpc.insecure_channel(ntuple_server.grpc) as channel:
        answer = move_pb2_grpc.MoveServiceStub(channel).EvaluateBatch(
            move_pb2.EvaluateBatchRequest(game=name, boards=texts))
    assert list(answer.move_index) == body["move_index"]


@pytest.mark.parametrize("name", GAMES)
def test_a_batch_with_a_depth_is_searched_that_deep(ntuple_server, models, name):
    """evaluate-batch honours depth (it used to ignore it): every board's values are its
    evaluate answer's at that depth, on both transports, and the answer says the depth."""
    texts = BOARDS[name]
    for depth in (1, 2):
        # the first searched batch compiles the batch search: more than httpx's 5 s when busy
        r = httpx.post(f"{ntuple_server.http}/v1/games/{name}/evaluate-batch", timeout=120,
                       json={"boards": texts, "depth": depth, "include_move_values": True})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["depth"] == depth
        for i, text in enumerate(texts):
            one = post(ntuple_server, name, "evaluate", {"board": text, "depth": depth}).json()
            assert body["value"][i] == pytest.approx(one["value"], abs=1e-6)
            for move in one["moves"]:
                assert body["move_values"][i][move["index"]] == pytest.approx(move["value"],
                                                                             abs=1e-6)
        with grpc.insecure_channel(ntuple_server.grpc) as channel:
            answer = move_pb2_grpc.MoveServiceStub(channel).EvaluateBatch(
                move_pb2.EvaluateBatchRequest(game=name, boards=texts, depth=depth))
        assert answer.depth == depth and list(answer.move_index) == body["move_index"]
    too_many = post(ntuple_server, name, "evaluate-batch",
                    {"boards": texts * 400, "depth": 1})  # 10,000 boards: a tenth searched
    assert too_many.status_code == 413
    assert too_many.json()["error"]["message"].startswith(
        f"boards: {len(texts) * 400} boards searched 1 deep in one request; at most 1000")
    deep = post(ntuple_server, name, "evaluate-batch", {"boards": texts, "depth": MAX_DEPTH + 1})
    assert deep.status_code == 422 and deep.json()["error"]["field"] == "depth"


def test_the_search_takes_the_win_the_network_alone_may_miss(ntuple_server):
    # X to move wins at cell 38 (bottom row, column 3): every depth plays it
    text = "-------|-------|-------|-------|-------|XXX-OOO"
    for depth in range(MAX_DEPTH + 1):
        r = post(ntuple_server, "connect-four", "best-move", {"board": text, "depth": depth})
        assert r.json()["move"]["index"] == 38


@pytest.mark.parametrize(("game", "depth", "message"), [
    ("four-in-a-row", MAX_DEPTH + 1, f"depth: must be a whole number from 0 to {MAX_DEPTH}"),
    ("four-in-a-row", -1, "depth: must be a whole number from 0"),
    ("four-in-a-row", "2", "depth: must be a whole number"),
    ("four-in-a-row", True, "depth: must be a whole number"),
    ("tictactoe", 1, "depth: version 1 is a table model, which does not search"),
])
def test_a_depth_asked_wrongly_is_named(ntuple_server, game, depth, message):
    board = "----|----|----|----" if game == "four-in-a-row" else "---|---|---"
    for route in ("best-move", "evaluate"):
        r = post(ntuple_server, game, route, {"board": board, "depth": depth})
        assert r.status_code == 422, r.text
        error = r.json()["error"]
        assert error["field"] == "depth", error
        assert error['message'].startswith(message), error
    if isinstance(depth, int) and not isinstance(depth, bool):
        with grpc.insecure_channel(ntuple_server.grpc) as channel, \
                pytest.raises(grpc.RpcError) as caught:
            move_pb2_grpc.MoveServiceStub(channel).BestMove(
                move_pb2.BestMoveRequest(game=game, board=board, depth=depth))
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert ("gameai-field", "depth") in caught.value.trailing_metadata()
