"""Fixtures of the trainer tests: trained models are made once per session (they take a
fraction of a second each once numba's cache is warm)."""

from __future__ import annotations

import numpy as np
import pytest

from gameai.games import Game, get_game
from gameai.games.mnk.board import Board
from gameai.models import Model, TableModel
from gameai.models.oracle import solver_model
from gameai.trainer.training import TrainResult, make_learner, train


def pytest_configure(config: pytest.Config) -> None:
    """pytest resets the warning filters for each test: keep gameai.trainer.learners.stores'
    silencing of numba's pedantic warning about inlined walker and store functions."""
    config.addinivalue_line("filterwarnings", r"ignore:variable '_\w+_impl_v\d+_"
                            ":numba.core.errors.NumbaIRAssumptionWarning")


@pytest.fixture(scope="session")
def ttt() -> Game:
    return get_game("tictactoe")


@pytest.fixture(scope="session")
def oracle(ttt: Game) -> TableModel:
    return solver_model(ttt)


@pytest.fixture(scope="session")
def td_result(ttt: Game) -> TrainResult:
    """td on tic-tac-toe, seed 1, trained until unbeatable."""
    return train(make_learner(ttt, "td", seed=1), games=100_000, until_unbeatable=True)


@pytest.fixture(scope="session")
def td_model(td_result: TrainResult) -> Model:
    return td_result.model


def prefer(model: TableModel, pattern: str, cell: int, **info: object) -> TableModel:
    """``model``, except that on the board ``pattern`` it plays ``cell``."""
    board = Board.parse(model.game, pattern)
    key, sym = board.canonical()
    values = model.values.copy()
    row = int(np.searchsorted(model.keys, np.uint64(key)))
    assert model.keys[row] == key
    values[row, model.game.symmetries[sym][cell]] = 1.0
    return TableModel(model.game, model.info.with_updates(**info), model.keys, values)


def random_boards(game: Game, count: int, seed: int) -> list[Board]:
    """Live boards reached by random legal moves."""
    rng = np.random.default_rng(seed)
    boards = []
    while len(boards) < count:
        board = Board.empty(game)
        for _ in range(rng.integers(0, game.cells)):
            moves = board.legal_moves()
            if not moves:
                break
            nxt = board.play(int(rng.choice(moves)))
            if nxt.is_over():
                break
            board = nxt
        boards.append(board)
    return boards
