"""A game that plugs in (Hexapawn, from examples/hexapawn) served over REST and gRPC by a
server that knows nothing of it: best moves and values, move lists, batches, the listing a
client plays from, and the precise errors, a finished game's with its winner."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import pytest

from gameai.games import get_game
from gameai.models import TableModel
from gameai.models.oracle import solver_model
from gameai.service.gen.gameai.v1 import models_pb2, models_pb2_grpc, move_pb2, move_pb2_grpc
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import RunningServer, new_store, settings

GAME = "hexapawn"
AFTER_CENTRE = "OOO|-X-|X-X"  # X went up the middle: O to move (the counts cannot say)


@pytest.fixture(scope="module")
def oracle() -> TableModel:
    return solver_model(get_game(GAME))


@pytest.fixture(scope="module")
def hexapawn_server(redis_server: RedisServer, oracle: TableModel) -> Iterator[RunningServer]:
    store: ModelStore = new_store(redis_server.url)
    record = store.publish(oracle.to_bytes(), by="tests")
    store.set_alias(game=GAME, alias="production", version=record.version, by="tests")
    running = RunningServer(settings(store, games=(GAME,)), store)
    yield running
    running.stop()
    store.close()


def post(server: RunningServer, route: str, body: dict[str, object]) -> httpx.Response:
    return httpx.post(f"{server.http}/v1/games/{GAME}/{route}", json=body)


def test_the_listing_gives_the_start_and_the_rules(hexapawn_server):
    games = httpx.get(f"{hexapawn_server.http}/v1/games").json()["games"]
    assert [g["name"] for g in games] == [GAME]
    listed = games[0]
    assert listed["start"] == "OOO|---|XXX" and listed["pieces"] == 3
    assert (listed["rows"], listed["cols"], listed["ready"]) == (3, 3, True)
    with grpc.insecure_channel(hexapawn_server.grpc) as channel:
        info = models_pb2_grpc.ModelServiceStub(channel).ListGames(
            models_pb2.ListGamesRequest()).games[0]
    assert (info.name, info.rows, info.cols, info.ready) == (GAME, 3, 3, True)


def test_best_move_up_the_middle_and_o_takes_it(hexapawn_server, oracle):
    r = post(hexapawn_server, "best-move", {"board": "OOO|---|XXX"})
    assert r.status_code == 200, r.text
    assert r.json()["move"] == {"row": 1, "col": 1, "index": 4,
                                "from": {"row": 2, "col": 1, "index": 7}}
    assert r.json()["value"] < 0  # X loses, however it plays
    r = post(hexapawn_server, "best-move", {"board": AFTER_CENTRE})
    body = r.json()
    assert r.status_code == 200, r.text
    assert body["move"]["index"] == 4 and body["move"]["from"]["index"] in (0, 2)  # a capture
    assert body["value"] > 0


def test_evaluate_lists_every_move_with_its_origin(hexapawn_server, oracle):
    r = post(hexapawn_server, "evaluate", {"moves": "8-5"})
    body = r.json()
    assert r.status_code == 200, r.text
    assert body["board"] == AFTER_CENTRE and body["to_move"] == "O"
    state = get_game(GAME).parse(AFTER_CENTRE)
    expected = oracle.evaluate(state)
    assert [(m["from"]["index"], m["index"]) for m in body["moves"]] == [
        (m.from_index, m.index) for m in expected.moves]
    assert {(m["from"]["index"] + 1, m["index"] + 1) for m in body["moves"]} == {
        (1, 4), (1, 5), (3, 5), (3, 6)}
    again = post(hexapawn_server, "evaluate", {"board": AFTER_CENTRE, "to_move": "O"}).json()
    assert again["moves"] == body["moves"]


def test_analyze_gives_each_move_its_exact_outcome(hexapawn_server):
    r = post(hexapawn_server, "analyze", {"board": "OOO|---|XXX"})
    body = r.json()
    assert r.status_code == 200, r.text
    assert (body["outcome"], body["distance"]) == ("loss", 6)
    assert body["line_end"] == "O wins"


@pytest.mark.parametrize(("body", "status", "field", "message"), [
    ({"board": AFTER_CENTRE, "to_move": "X"}, 422, "to_move",
     "to_move: 'X' is impossible: this position arises only with O to move"),
    ({"board": "OOO|XXX|---"}, 422, "board", "board: this position cannot arise in hexapawn"),
    ({"board": "OOO|-K-|XXX"}, 422, "board", "board: unknown character 'K' at row 1"),
    ({"moves": "8-5 2-5"}, 422, "moves",
     "moves: move 2 (2-5): 5 (row 1, column 1) is taken: a pawn moves straight forward"),
    ({"moves": "5"}, 422, "moves", "moves: move 1 ('5') is not a move like '8-5'"),
    ({"moves": "8-5 1-5 7-4 5-8"}, 409, "moves", "moves: the game is over: O has won"),
    ({"board": "-O-|-X-|---"}, 409, "board", "board: the game is over: X has won"),
])
def test_precise_errors_on_both_transports(hexapawn_server, body, status, field, message):
    r = post(hexapawn_server, "best-move", body)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["field"] == field and error["message"].startswith(message), error
    with grpc.insecure_channel(hexapawn_server.grpc) as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.Evaluate(move_pb2.EvaluateRequest(game=GAME, **body))
    code = {422: grpc.StatusCode.INVALID_ARGUMENT, 409: grpc.StatusCode.FAILED_PRECONDITION}
    assert caught.value.code() == code[status]
    assert caught.value.details().startswith(message)
    metadata = dict(caught.value.trailing_metadata())
    assert metadata["gameai-field"] == field
    if status == 409:  # a finished game says who won, on both transports
        winner = message.split(": ")[-1][0]
        assert error["winner"] == winner and metadata["gameai-winner"] == winner
    else:
        assert "winner" not in error and "gameai-winner" not in metadata


def test_grpc_best_move_and_evaluate(hexapawn_server, oracle):
    with grpc.insecure_channel(hexapawn_server.grpc) as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        best = stub.BestMove(move_pb2.BestMoveRequest(game=GAME, board="OOO|---|XXX"))
        reply = stub.BestMove(move_pb2.BestMoveRequest(game=GAME, moves="8-5"))
        e = stub.Evaluate(move_pb2.EvaluateRequest(game=GAME, moves="8-5 1-5"))
    assert (best.move.from_index, best.move.index) == (7, 4) and best.value < 0
    assert reply.move.index == 4 and reply.move.from_index in (0, 2) and reply.value > 0
    state = get_game(GAME).parse_moves("8-5 1-5")
    assert e.board == str(state) == "-OO|-O-|X-X" and e.to_move == "X"
    assert [(m.from_index, m.index) for m in e.moves] == [
        (m.from_index, m.index) for m in oracle.evaluate(state).moves]


def test_batches_answer_positions_of_either_side(hexapawn_server, oracle):
    boards = ["OOO|---|XXX", AFTER_CENTRE, "-OO|-O-|X-X"]
    r = post(hexapawn_server, "evaluate-batch", {"boards": boards})
    body = r.json()
    assert r.status_code == 200, r.text
    assert body["to_move"] == ["X", "O", "X"] and body["actions"] == 90
    game = get_game(GAME)
    for i, text in enumerate(boards):
        best = oracle.evaluate(game.parse(text)).best
        assert (body["move_from_index"][i], body["move_index"][i]) == (best.from_index,
                                                                       best.index)
    with grpc.insecure_channel(hexapawn_server.grpc) as channel:
        g = move_pb2_grpc.MoveServiceStub(channel).EvaluateBatch(
            move_pb2.EvaluateBatchRequest(game=GAME, boards=boards))
    assert list(g.move_from_index) == body["move_from_index"] and list(g.to_move) == [
        "X", "O", "X"]
