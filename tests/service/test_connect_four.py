"""Connect Four served end to end over REST and gRPC: a 42-cell game (past base-3 keys)
answered by a model of exact values, positions given as boards or as column moves, and the
notation's precise errors on both transports."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import numpy as np
import pytest

from gameai.games import get_game
from gameai.games.mnk.board import Board
from gameai.games.mnk.search import searcher
from gameai.models import ModelInfo, TableModel
from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import RunningServer, new_store, settings

GAME = "connect-four"
C4 = get_game(GAME)
# A full centre column, then five stones in column 3: O must answer in column 2 or 5.
LINE = "44444433333"
THREE = "445566"  # X has three in the bottom row, both ends open: it wins at either end


def exact_model(boards: list[Board]) -> TableModel:
    """A model whose values are the search's exact scores (``score / big``) for ``boards``
    and all their children, stored in canonical orientation."""
    rows: dict[int, np.ndarray] = {}
    for board in boards:
        for position in [board, *(board.play(m) for m in board.legal_moves())]:
            if position.is_over():
                continue
            key, sym = position.canonical()
            image = position.transformed(sym)
            values = np.full(C4.cells, np.nan, dtype=np.float32)
            for m in searcher(C4).solve(image).moves:
                values[m.move] = m.score / C4.big
            rows[key] = values
    keys = np.array(list(rows), dtype=np.uint64)
    return TableModel.from_unsorted(C4, ModelInfo(game=GAME, algorithm="solver"), keys,
                                    np.array(list(rows.values())))


@pytest.fixture(scope="module")
def c4_server(redis_server: RedisServer) -> Iterator[RunningServer]:
    store: ModelStore = new_store(redis_server.url)
    model = exact_model([C4.parse_moves(LINE), C4.parse_moves(THREE)])
    record = store.publish(model.to_bytes(), by="tests")
    store.set_alias(game=GAME, alias="production", version=record.version, by="tests")
    running = RunningServer(settings(store, games=(GAME,)), store)
    yield running
    running.stop()
    store.close()


def post(server: RunningServer, route: str, body: dict[str, object]) -> httpx.Response:
    return httpx.post(f"{server.http}/v1/games/{GAME}/{route}", json=body, timeout=30)


def test_connect_four_is_listed_with_its_rules(c4_server):
    games = httpx.get(f"{c4_server.http}/v1/games").json()["games"]
    (c4,) = [g for g in games if g["name"] == GAME]
    assert (c4["rows"], c4["cols"], c4["k"], c4["gravity"], c4["ready"]) == (6, 7, 4, True,
                                                                              True)


def test_moves_and_the_board_they_reach_get_the_same_answer(c4_server):
    r = post(c4_server, "evaluate", {"moves": LINE})
    body = r.json()
    assert r.status_code == 200, r.text
    board = C4.parse_moves(LINE)
    assert body["board"] == str(board) and body["to_move"] == "O"
    assert {m["col"] for m in body["moves"] if m["value"] == body["value"]} == {1, 4}
    assert body["value"] == pytest.approx(-13 / 43, abs=1e-6)  # a loss in 30 plies
    again = post(c4_server, "evaluate", {"board": str(board)}).json()
    assert again["moves"] == body["moves"]
    best = post(c4_server, "best-move", {"moves": LINE}).json()
    assert best["move"]["col"] in (1, 4) and best["move"]["row"] == 5


@pytest.mark.parametrize(("body", "status", "message"), [
    ({"moves": "4448"}, 422, "moves: move 4 (8): column 8 is out of range (columns are 1-7)"),
    ({"moves": "4444444"}, 422, "moves: move 7 (4): column 4 is full"),
    ({"moves": "44556677"}, 422,
     "moves: move 8 (7): the game was already over: X won at move 7"),
    ({"moves": "4455667"}, 409, "moves: the game is over: X has won"),
    ({"moves": "44z"}, 422, "moves: move 3 ('z') is not a column number 1-7"),
    ({"moves": "4", "board": "-------|-------|-------|-------|-------|-------"}, 422,
     "moves: give either moves or a board"),
])
def test_notation_errors_on_both_transports(c4_server, body, status, message):
    r = post(c4_server, "best-move", body)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["field"] == "moves" and error["message"].startswith(message), error
    with grpc.insecure_channel(c4_server.grpc) as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.Evaluate(move_pb2.EvaluateRequest(game=GAME, **body))
    code = {422: grpc.StatusCode.INVALID_ARGUMENT, 409: grpc.StatusCode.FAILED_PRECONDITION}
    assert caught.value.code() == code[status]
    assert caught.value.details().startswith(message)
    assert ("gameai-field", "moves") in caught.value.trailing_metadata()


def test_board_errors_name_the_gravity_rule(c4_server):
    floating = "-------|-------|-------|-------|---X---|-------"
    r = post(c4_server, "evaluate", {"board": floating})
    assert r.status_code == 422
    assert "floating piece at row 4, column 3" in r.json()["error"]["message"]


def test_grpc_answers_moves_with_the_board(c4_server):
    with grpc.insecure_channel(c4_server.grpc) as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        e = stub.Evaluate(move_pb2.EvaluateRequest(game=GAME, moves=LINE))
        best = stub.BestMove(move_pb2.BestMoveRequest(game=GAME, moves=THREE))
    assert e.board == str(C4.parse_moves(LINE)) and e.to_move == "O"
    assert {m.col for m in e.moves if m.value == e.value} == {1, 4}
    assert best.move.row == 5 and best.move.col in (2, 6)


def test_batch_of_connect_four_boards(c4_server):
    boards = [str(C4.parse_moves(LINE)), str(C4.parse_moves(THREE))]
    r = post(c4_server, "evaluate-batch", {"boards": boards})
    body = r.json()
    assert r.status_code == 200, r.text
    assert body["to_move"] == ["O", "X"]
    assert body["move_col"][0] in (1, 4) and body["move_col"][1] in (2, 6)


def test_analysis_gives_the_searched_outcome_or_says_why_not(c4_server):
    body = post(c4_server, "analyze", {"moves": LINE}).json()
    assert (body["outcome"], body["distance"]) == ("loss", 30)
    assert {m["col"] for m in body["moves"] if m["outcome"] == "loss"
            and m["distance"] == 30} == {1, 4}
    early = post(c4_server, "analyze", {"moves": "4"}).json()
    assert early["outcome"] is None
    assert "could not prove this position within 2 s" in early["unsolved"]


@pytest.mark.parametrize("route", ["best-move", "evaluate", "analyze"])
def test_the_empty_move_list_is_the_start_position(c4_server, route):
    r = post(c4_server, route, {"moves": ""})
    assert r.status_code == 200, r.text
    if route != "best-move":
        assert r.json()["board"] == str(C4.initial())
    else:
        assert r.json()["move"]["row"] == 5  # a first move lands on the bottom row


def test_grpc_tells_an_empty_move_list_from_none(c4_server):
    with grpc.insecure_channel(c4_server.grpc) as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        start = stub.Evaluate(move_pb2.EvaluateRequest(game=GAME, moves=""))
        with pytest.raises(grpc.RpcError) as caught:
            stub.Evaluate(move_pb2.EvaluateRequest(game=GAME))
    assert start.board == str(C4.initial())
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details().startswith("board: is required")
    assert ("gameai-field", "board") in caught.value.trailing_metadata()
