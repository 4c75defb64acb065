"""Three Men's Morris served end to end over REST and gRPC: moves that carry an origin,
to_move, move lists, and the precise errors; tic-tac-toe answers stay as they were."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import numpy as np
import pytest

from gameai.games import get_game
from gameai.models import TableModel
from gameai.models.oracle import solver_model
from gameai.service.gen.gameai.v1 import models_pb2, models_pb2_grpc, move_pb2, move_pb2_grpc
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import RunningServer, new_store, settings

GAME = "three-mens-morris"
MOVEMENT = "XO-|XOX|O--"  # X to move: X at 0, 3, 5; O at 1, 4, 6


@pytest.fixture(scope="module")
def oracle() -> TableModel:
    return solver_model(get_game(GAME))


@pytest.fixture(scope="module")
def morris_server(redis_server: RedisServer, oracle: TableModel,
                  perfect: TableModel) -> Iterator[RunningServer]:
    """A server of tic-tac-toe and Three Men's Morris, each with its solver model."""
    store: ModelStore = new_store(redis_server.url)
    for model in (oracle, perfect):
        record = store.publish(model.to_bytes(), by="tests")
        store.set_alias(game=model.game.name, alias="production", version=record.version,
                        by="tests")
    running = RunningServer(settings(store, games=(GAME, "tictactoe")), store)
    yield running
    running.stop()
    store.close()


def post(server: RunningServer, route: str, body: dict[str, object],
         game: str = GAME) -> httpx.Response:
    return httpx.post(f"{server.http}/v1/games/{game}/{route}", json=body)


def test_the_opening_is_the_centre_and_a_movement_carries_its_origin(morris_server, oracle):
    r = post(morris_server, "best-move", {"board": "---|---|---"})
    assert r.status_code == 200, r.text
    assert r.json()["move"] == {"row": 1, "col": 1, "index": 4}  # a placement: no "from"
    r = post(morris_server, "evaluate", {"board": MOVEMENT, "to_move": "X"})
    body = r.json()
    assert r.status_code == 200 and body["to_move"] == "X"
    state = get_game(GAME).parse(MOVEMENT, to_move="X")
    expected = oracle.evaluate(state)
    assert [(m["from"]["index"], m["index"]) for m in body["moves"]] == [
        (m.from_index, m.index) for m in expected.moves]
    first = body["moves"][0]
    assert first["from"] == {"row": expected.best.from_row, "col": expected.best.from_col,
                             "index": expected.best.from_index}
    assert first["value"] == pytest.approx(expected.value, abs=1e-6)


def test_moves_give_the_game_from_its_start(morris_server):
    r = post(morris_server, "evaluate", {"moves": "1 2 4 5 9 7 9-6"})
    body = r.json()
    assert r.status_code == 200, r.text
    assert body["board"] == "XO-|XOX|O--" and body["to_move"] == "O"
    again = post(morris_server, "evaluate", {"board": body["board"], "to_move": "O"}).json()
    assert again["moves"] == body["moves"]


@pytest.mark.parametrize(("body", "status", "field", "message"), [
    ({"board": MOVEMENT}, 422, "to_move",
     "to_move: required once all six pieces are down"),
    ({"board": "XO-|---|---", "to_move": "O"}, 422, "to_move",
     "to_move: 'O' is impossible: pieces are still being placed"),
    ({"board": MOVEMENT, "to_move": "Z"}, 422, "to_move", "to_move: must be 'X' or 'O'"),
    ({"moves": "1 2 4 5 9 7 3"}, 422, "moves",
     "moves: move 7 (3): placing a fourth piece: X has all three pieces"),
    ({"moves": "1 2 1-3"}, 422, "moves", "moves: move 3 (1-3): moving during placement"),
    ({"moves": "1 2 4 5 9 7 2-3"}, 422, "moves",
     "moves: move 7 (2-3): the piece at (row 0, column 1) is O's; X is to move"),
    ({"moves": "1 2 4 5 9 7 9-7"}, 422, "moves",
     "moves: move 7 (9-7): point (row 2, column 0) is taken"),
    ({"moves": "1 2 4 5 9 7 9-3"}, 422, "moves",
     "moves: move 7 (9-3): point (row 0, column 2) is not next to (row 2, column 2)"),
    ({"moves": "1 2 4 x"}, 422, "moves", "moves: move 4 ('x') is not a point 1-9"),
    ({"moves": "5 2 1 3 9"}, 409, "moves", "moves: the game is over: X has won"),
    ({"moves": "1", "board": "---|---|---"}, 422, "moves",
     "moves: give either moves or a board"),
    ({"moves": "1 2 4 5 9 7 9-6 5-8 6-9 8-5 9-6 5-8 6-9 8-5"}, 409, "moves",
     "moves: the game is over: a draw: move 14 (8-5) brought the position round"),
    ({}, 422, "board", "board: is required"),
    ({"board": "XXX|OO-|O--", "to_move": "X"}, 422, "to_move",
     "to_move: 'X' is impossible: X has three in a row"),
])
def test_precise_errors_on_both_transports(morris_server, body, status, field, message):
    r = post(morris_server, "best-move", body)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["field"] == field and error["message"].startswith(message), error
    with grpc.insecure_channel(morris_server.grpc) as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.Evaluate(move_pb2.EvaluateRequest(game=GAME, **body))
    code = {422: grpc.StatusCode.INVALID_ARGUMENT, 409: grpc.StatusCode.FAILED_PRECONDITION}
    assert caught.value.code() == code[status]
    if body:  # (an empty gRPC board is a board of no rows: the parse error names it)
        assert caught.value.details().startswith(message)
        assert ("gameai-field", field) in caught.value.trailing_metadata()


def test_grpc_moves_carry_their_origin(morris_server):
    with grpc.insecure_channel(morris_server.grpc) as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        best = stub.BestMove(move_pb2.BestMoveRequest(game=GAME, board=MOVEMENT, to_move="X"))
        placement = stub.BestMove(move_pb2.BestMoveRequest(game=GAME, board="---|---|---"))
        e = stub.Evaluate(move_pb2.EvaluateRequest(game=GAME, moves="1 2 4 5 6 7"))
        ttt = stub.BestMove(move_pb2.BestMoveRequest(game="tictactoe", board="XX-|OO-|---"))
    assert best.move.HasField("from_index") and best.move.from_index in (0, 3, 5)
    assert (best.move.from_row, best.move.from_col) == divmod(best.move.from_index, 3)
    assert not placement.move.HasField("from_index") and placement.move.index == 4
    assert e.board == MOVEMENT and e.to_move == "X"
    assert all(m.HasField("from_index") for m in e.moves)
    assert not ttt.move.HasField("from_index") and ttt.move.index == 2  # m,n,k: as before


def test_batch_answers_movements_with_their_origin(morris_server, oracle):
    boards = [MOVEMENT, "XO-|-OX|O-X", "X-O|-XO|OX-"]
    r = post(morris_server, "evaluate-batch", {"boards": boards, "to_move": "X",
                                              "include_move_values": True})
    body = r.json()
    assert r.status_code == 200, r.text
    assert body["actions"] == 90 and len(body["move_values"][0]) == 90
    for i, text in enumerate(boards):
        best = oracle.evaluate(get_game(GAME).parse(text, to_move="X")).best
        assert (body["move_from_index"][i], body["move_index"][i]) == (best.from_index,
                                                                       best.index)
        assert body["value"][i] == pytest.approx(best.value, abs=1e-6)
    r = post(morris_server, "evaluate-batch", {"boards": boards})
    assert r.status_code == 422 and r.json()["error"]["field"] == "boards[0]"
    assert "to_move: required" in r.json()["error"]["message"]
    with grpc.insecure_channel(morris_server.grpc) as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        g = stub.EvaluateBatch(move_pb2.EvaluateBatchRequest(game=GAME, boards=boards,
                                                             to_move="X"))
        t = stub.EvaluateBatch(move_pb2.EvaluateBatchRequest(game="tictactoe",
                                                             boards=["XX-|OO-|---"]))
    assert list(g.move_from_index) == body["move_from_index"] and g.actions == 90
    assert list(t.move_from_index) == [] and t.actions == 0  # m,n,k: unchanged


def test_games_list_the_rules_a_client_needs(morris_server):
    games = {g["name"]: g for g in httpx.get(f"{morris_server.http}/v1/games").json()["games"]}
    morris, ttt = games[GAME], games["tictactoe"]
    assert morris["pieces"] == 3 and morris["neighbours"][4] == [1, 3, 5, 7]
    assert [0, 4, 8] in morris["lines"] and morris["barred_first_placement"] == []
    assert set(ttt) == {"name", "rows", "cols", "k", "gravity", "aliases", "canary_weight",
                        "shadow_share", "loaded_versions", "ready", "pin",
                        "start"}  # m,n,k: + pin, start
    assert ttt["start"] == "---|---|---" and morris["start"] == "---|---|---"
    with grpc.insecure_channel(morris_server.grpc) as channel:
        listed = models_pb2_grpc.ModelServiceStub(channel).ListGames(
            models_pb2.ListGamesRequest())
    assert {g.name for g in listed.games} == {GAME, "tictactoe"}


def test_tictactoe_answers_are_unchanged(morris_server, perfect):
    r = post(morris_server, "evaluate", {"board": "X--|-O-|---"}, game="tictactoe").json()
    assert set(r) == {"game", "model_version", "to_move", "value", "moves"}
    assert all(set(m) == {"row", "col", "index", "value"} for m in r["moves"])
    r = post(morris_server, "evaluate-batch", {"boards": ["X--|-O-|---"]}, game="tictactoe")
    assert set(r.json()) == {"game", "model_version", "to_move", "value", "move_row",
                             "move_col", "move_index"}
    wrong = post(morris_server, "evaluate", {"board": "X--|---|---", "to_move": "X"},
                 game="tictactoe")
    assert wrong.status_code == 422 and wrong.json()["error"]["field"] == "to_move"
    assert np.isclose(post(morris_server, "best-move", {"board": "XX-|OO-|---"},
                           game="tictactoe").json()["value"], perfect.evaluate(
        get_game("tictactoe").parse("XX-|OO-|---")).value)
