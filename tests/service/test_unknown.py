"""A move the model has no value for is marked ``unknown`` over REST and gRPC, never passed
off as a draw; moves it knows answer exactly as before."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import numpy as np
import pytest

from gameai.games import get_game
from gameai.games.mnk.board import Board
from gameai.models import ModelInfo, TableModel
from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import RunningServer, new_store, settings

GAME = get_game("tictactoe")
EMPTY = [0.2, np.nan, 0.2, 0.1, 0.5, 0.1, 0.2, 0.1, 0.2]  # it never tried the top edge


def half_known() -> TableModel:
    """A model that knows only the empty board, and not every move of it."""
    return TableModel(GAME, ModelInfo(game="tictactoe", algorithm="partial"),
                      np.zeros(1, np.uint64), np.array([EMPTY], np.float32))


@pytest.fixture(scope="module")
def server(redis_server: RedisServer) -> Iterator[RunningServer]:
    store: ModelStore = new_store(redis_server.url)
    version = store.publish(half_known().to_bytes(), by="tests").version
    store.set_alias(game="tictactoe", alias="production", version=version, by="tests")
    running = RunningServer(settings(store), store)
    yield running
    running.stop()
    store.close()


def test_the_model_marks_what_it_does_not_know() -> None:
    known = half_known().evaluate(Board.empty(GAME))
    assert [m.index for m in known.moves if m.unknown] == [1]
    unseen = half_known().evaluate(Board.parse(GAME, "X--|---|---"))
    assert all(m.unknown and m.value == 0.0 for m in unseen.moves)


def test_rest_marks_unknown_moves_and_leaves_known_ones_as_they_were(server) -> None:
    with httpx.Client(base_url=server.http, timeout=10) as http:
        empty = http.post("/v1/games/tictactoe/evaluate", json={"board": "---|---|---"}).json()
        unseen = http.post("/v1/games/tictactoe/evaluate", json={"board": "X--|---|---"}).json()
    by_cell = {m["index"]: m for m in empty["moves"]}
    assert by_cell[1] == {"row": 0, "col": 1, "index": 1, "value": 0.0, "unknown": True}
    assert by_cell[4] == {"row": 1, "col": 1, "index": 4, "value": 0.5}  # no new key
    assert all(m["unknown"] is True and m["value"] == 0.0 for m in unseen["moves"])
    assert len(unseen["moves"]) == 8


def test_grpc_marks_unknown_moves(server) -> None:
    with grpc.insecure_channel(server.grpc) as channel:
        moves = move_pb2_grpc.MoveServiceStub(channel)
        empty = moves.Evaluate(move_pb2.EvaluateRequest(game="tictactoe", board="---|---|---"))
        unseen = moves.Evaluate(move_pb2.EvaluateRequest(game="tictactoe", board="X--|---|---"))
    assert [m.index for m in empty.moves if m.unknown] == [1]
    assert all(m.unknown for m in unseen.moves) and len(unseen.moves) == 8
