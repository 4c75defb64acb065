"""Batch parsing and values agree with the one-board path on every position."""

from __future__ import annotations

import numpy as np
import pytest

from gameai.games import GameError, get_game
from gameai.games.mnk.board import Board
from gameai.games.mnk.positions import enumerate_positions
from gameai.models.oracle import solver_model
from gameai.service.batch import best_moves, move_values, parse_boards, to_move
from gameai.service.errors import classify


def live(game_name: str) -> list[Board]:
    game = get_game(game_name)
    boards = []
    for layer in enumerate_positions(Board.empty(game)).layers:
        for x, o, over in zip(layer.x.tolist(), layer.o.tolist(), layer.over.tolist(),
                              strict=True):
            if not over:
                boards.append(Board(game, x, o))
    return boards


@pytest.mark.parametrize("name", ["tictactoe", "mnk-2x3-2", "connect-3x3-3", "mnk-3x2-2"])
def test_batch_values_equal_the_models_own(name: str) -> None:
    game = get_game(name)
    model = solver_model(game)
    boards = live(name)
    x, o = parse_boards(game, [str(b) for b in boards])
    assert x.tolist() == [b.x for b in boards] and o.tolist() == [b.o for b in boards]
    ours = move_values(model, x, o)
    theirs = model.move_values(boards).astype(np.float64)
    assert np.array_equal(np.isnan(ours), np.isnan(theirs))
    assert np.allclose(np.nan_to_num(ours), np.nan_to_num(theirs))
    best, value = best_moves(ours)
    for i, board in enumerate(boards):
        evaluation = model.evaluate(board)
        assert int(best[i]) == evaluation.best.index
        assert value[i] == pytest.approx(evaluation.value, abs=1e-6)
    assert to_move(x, o) == [b.to_move for b in boards]


def test_every_bad_board_gets_the_single_board_error() -> None:
    game = get_game("tictactoe")
    rng = np.random.default_rng(7)
    texts = ["".join(rng.choice(list("XO-|?é "), size=int(rng.integers(9, 13))))
             for _ in range(400)]
    texts += ["XXX|OO-|---", "XOX|XOO|OXX", "XX-|OO-|---", "XXX|OOO|---", "OO-|---|---"]
    for text in texts:
        try:
            expected = Board.parse(game, text).require_playable()
        except GameError as e:
            with pytest.raises(GameError) as caught:
                parse_boards(game, ["---|---|---", text])
            status, single = classify(caught.value), classify(e)
            assert status is not None and single is not None
            assert (status.http, status.field) == (single.http, "boards[1]")
            assert status.message == f"boards[1]: {str(e).removeprefix('board: ')}"
        else:
            x, o = parse_boards(game, [text])
            assert (int(x[0]), int(o[0])) == (expected.x, expected.o)
