"""The old learners' base (before issue 23): the m,n,k engine's learner, and the two
table-model helpers that every learner then had."""

from __future__ import annotations

import abc

import numpy as np

from gameai.games import Game
from gameai.games.mnk.game import MnkGame, as_mnk
from gameai.models import Model, ModelInfo, TableModel
from gameai.trainer.learners import base
from gameai.trainer.learners.base import Params
from gameai.trainer.learners.hashtable import HashTable
from tests.trainer.reference.bitboard import Spec, make_spec


class Learner(base.Learner):
    """:class:`gameai.trainer.learners.base.Learner` with its old table-model helpers."""

    def table_model(self, keys: np.ndarray, rows: np.ndarray, info: ModelInfo | None) -> Model:
        """A :class:`TableModel` of canonical ``keys`` and ``rows``, dropping empty rows."""
        keep = ~np.isnan(rows).all(axis=1)
        rows = np.clip(rows[keep], -1.0, 1.0).astype(np.float32)
        return TableModel.from_unsorted(self.game, info or self.info(), keys[keep], rows)

    def sorted_table_model(self, keys: np.ndarray, rows: np.ndarray,
                           info: ModelInfo | None) -> Model:
        """A :class:`TableModel` of strictly ascending canonical ``keys`` and float32
        ``rows`` in [-1, 1] (a streaming export's), without copying them."""
        return TableModel(self.game, info or self.info(), keys, rows)


class CellLearner(Learner):
    """A learner of an m,n,k game: kernels over bitmasks, values in a growable hash table."""

    game: MnkGame

    def __init__(self, game: Game, *, seed: int = 0, params: Params | None = None) -> None:
        super().__init__(as_mnk(game), seed=seed, params=params)
        self.spec: Spec = make_spec(self.game)
        self.table = self._new_table()

    @abc.abstractmethod
    def _new_table(self) -> HashTable:
        """The empty value table."""

    def _reserve(self, games: int) -> None:
        self.table.reserve(games * self.game.cells)
