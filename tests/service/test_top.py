"""Top moves with their lines (issue 27, item 1): best-move and evaluate take ``top`` and
answer the N best moves in order, each with its value, its exact outcome and distance where
the solver proves the position, and its principal variation, on REST and gRPC alike, with
the same precise error for a bad ``top`` on both."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format

from gameai.games import get_game
from gameai.models import NtupleModel, TableModel
from gameai.models.oracle import solver_model
from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.service.search import MAX_TOP
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import RunningServer, new_store, settings
from tests.service.test_ntuple import network
from tests.service.test_rollout import wait_until

CONNECT_FOUR = "-------|-------|-------|-------|---O---|--XX---"


@pytest.fixture(scope="module")
def connect_four() -> NtupleModel:
    return network("connect-four")


@pytest.fixture(scope="module")
def top_server(redis_server: RedisServer, perfect: TableModel,
               connect_four: NtupleModel) -> Iterator[RunningServer]:
    store: ModelStore = new_store(redis_server.url)
    morris = solver_model(get_game("three-mens-morris"))
    for model in (perfect, connect_four, morris):
        record = store.publish(model.to_bytes(), by="tests")
        store.set_alias(game=model.game.name, alias="production", version=record.version,
                        by="tests")
    running = RunningServer(settings(store, games=("tictactoe", "connect-four",
                                                   "three-mens-morris"), max_depth=4), store)
    wait_until(lambda: httpx.get(f"{running.http}/readyz").status_code == 200, timeout=60)
    yield running
    running.stop()
    store.close()


def rest(server: RunningServer, game: str, route: str, body: dict[str, Any]) -> Any:
    r = httpx.post(f"{server.http}/v1/games/{game}/{route}", json=body, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def grpc_answer(server: RunningServer, method: str, game: str, **fields: Any) -> Any:
    """The gRPC answer as the REST API's JSON would name it (proto3's JSON mapping)."""
    request = getattr(move_pb2, f"{method}Request")(game=game, **fields)
    with grpc.insecure_channel(server.grpc) as channel:
        reply = getattr(move_pb2_grpc.MoveServiceStub(channel), method)(request, timeout=60)
    return json_format.MessageToDict(reply, preserving_proto_field_name=True)


def indices(moves: list[dict[str, Any]]) -> list[int]:
    return [m.get("index", 0) for m in moves]  # proto3's JSON leaves a 0 out


@pytest.mark.parametrize("route", ["best-move", "evaluate"])
def test_the_top_moves_come_best_first_with_lines_and_proofs(top_server, route):
    game = get_game("tictactoe")
    board = "X--|-O-|---"
    a = rest(top_server, "tictactoe", route, {"board": board, "top": 3})
    every = rest(top_server, "tictactoe", "evaluate", {"board": board})["moves"]
    assert [(m["index"], m["value"]) for m in a["top"]] == [
        (m["index"], m["value"]) for m in every[:3]]
    exact = {m.move: m for m in game.solve(game.parse(board)).moves}
    for top in a["top"]:
        assert (top["outcome"], top["distance"]) == (exact[top["index"]].outcome,
                                                     exact[top["index"]].distance)
        line = indices(top["line"])
        assert line[0] == top["index"]
        state = game.parse(board)
        for cell in line:  # a table's line: its best move each turn, to the end
            state = state.play(cell)
        assert state.is_over()
    assert a["search"]["exact"] is True  # the solver proved the position
    method = "BestMove" if route == "best-move" else "Evaluate"
    g = grpc_answer(top_server, method, "tictactoe", board=board, top=3)
    assert [indices(t["line"]) for t in g["top"]] == [indices(t["line"]) for t in a["top"]]
    assert [t["move"]["outcome"] for t in g["top"]] == [t["outcome"] for t in a["top"]]
    assert g["search"]["exact"] is True


def test_a_line_is_the_search_that_valued_its_move(top_server, connect_four):
    """A model that searches ``depth`` deep: each top move's line is the move, then the best
    reply by the search one ply shallower, and so on: ``depth + 1`` moves."""
    game = connect_four.game
    for depth in (0, 1, 2):
        a = rest(top_server, "connect-four", "best-move",
                 {"board": CONNECT_FOUR, "top": 3, "depth": depth})
        assert a["search"]["depth"] == depth and a["search"]["nodes"] > 0
        for top in a["top"]:
            line = indices(top["line"])
            assert len(line) == depth + 1 and line[0] == top["index"]
            state = game.parse(CONNECT_FOUR)
            for ply, cell in enumerate(line):
                if ply:
                    expected = connect_four.search(state, depth - ply, best_only=True).best
                    assert cell == expected.index
                state = state.play(cell)
        g = grpc_answer(top_server, "BestMove", "connect-four", board=CONNECT_FOUR, top=3,
                        depth=depth)
        assert [indices(t["line"]) for t in g["top"]] == [indices(t["line"])
                                                         for t in a["top"]]


def test_top_beyond_the_legal_moves_lists_them_all(top_server):
    a = rest(top_server, "tictactoe", "evaluate", {"board": "XOX|XO-|O--", "top": MAX_TOP})
    assert sorted(indices(a["top"])) == [5, 7, 8]


def test_an_answer_that_asks_nothing_new_is_as_it_was(top_server):
    a = rest(top_server, "tictactoe", "best-move", {"board": "X--|-O-|---"})
    assert set(a) == {"game", "model_version", "move", "value", "level", "exact"}
    g = grpc_answer(top_server, "BestMove", "tictactoe", board="X--|-O-|---")
    assert "top" not in g and "search" not in g
    searched = rest(top_server, "connect-four", "best-move", {"board": CONNECT_FOUR})
    assert set(searched) == {"game", "model_version", "move", "value", "level", "depth",
                             "exact"}


@pytest.mark.parametrize("top", [0, -1, MAX_TOP + 1, "2", True, 2.5])
def test_a_bad_top_is_named_alike_on_both_transports(top_server, top):
    for route in ("best-move", "evaluate"):
        r = httpx.post(f"{top_server.http}/v1/games/tictactoe/{route}",
                       json={"board": "---|---|---", "top": top})
        assert r.status_code == 422, r.text
        error = r.json()["error"]
        assert error["field"] == "top"
        assert error["message"].startswith(f"top: must be a whole number of moves from 1 to "
                                           f"{MAX_TOP}, got "), error
        if isinstance(top, int) and not isinstance(top, bool):
            method = "BestMove" if route == "best-move" else "Evaluate"
            with pytest.raises(grpc.RpcError) as caught:
                grpc_answer(top_server, method, "tictactoe", board="---|---|---", top=top)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert caught.value.details() == error["message"]
            assert ("gameai-field", "top") in caught.value.trailing_metadata()


def test_lines_of_pieces_that_move_carry_their_origins(top_server):
    """Three Men's Morris after the placements: a top move's line moves pieces (each step
    with its ``from``), ends where the game does or at a third repetition, and replays."""
    moves = "5 1 9 7 3 2"  # all six pieces down: X to move a piece
    a = rest(top_server, "three-mens-morris", "best-move", {"moves": moves, "top": 3})
    game = get_game("three-mens-morris")
    assert 1 <= len(a["top"]) <= 3
    for top in a["top"]:
        assert all("from" in step for step in top["line"])
        assert top["line"][0] == {k: top[k] for k in ("row", "col", "index", "from")}
        state = game.parse_moves(moves)
        for step in top["line"]:
            action = game.cells + step["from"]["index"] * game.cells + step["index"]
            state = state.play(action)
        assert "outcome" in top  # the morris solver proves every position
    g = grpc_answer(top_server, "BestMove", "three-mens-morris", moves=moves, top=3)
    assert [[(m.get("from_index", 0), m.get("index", 0)) for m in t["line"]]
            for t in g["top"]] == [[(m["from"]["index"], m["index"]) for m in t["line"]]
                                   for t in a["top"]]
