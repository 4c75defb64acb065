"""The base of the table learners (td, qlearning, tally): values in a position store,
self-play through the walker the game asks for.

Each table learner is one module and one compiled kernel written against the walker
interface (:mod:`gameai.trainer.walkers.interface`) and the store interface
(:mod:`gameai.trainer.learners.stores`); the walker the game names
(:attr:`gameai.games.Game.walker`) is chosen here, at construction, and numba compiles
the kernel for it. The walker also makes the learner's store, may add a parameter (the
position-graph walker's ``random_starts``), and reads the store back into a model.
"""

from __future__ import annotations

from typing import ClassVar

from gameai.games import Game
from gameai.trainer.learners.base import Learner, Params
from gameai.trainer.learners.export import ExportShape
from gameai.trainer.learners.stores import PositionStore
from gameai.trainer.walkers.interface import Walker
from gameai.trainer.walkers.registry import walker_for, walker_type


class TabularLearner(Learner):
    """A learner whose values are rows of a position store (:attr:`table`), played by
    :attr:`walker`."""

    # whether the learner's afterstate keys are shared by symmetric images (td) or its
    # keys are positions as played (seed 003's tables and seed 000's tallies)
    symmetric: ClassVar[bool] = False
    # how the learner exports: the table grows only while that export still fits
    export_shape: ClassVar[ExportShape]
    table: PositionStore

    def __init__(self, game: Game, *, seed: int = 0, params: Params | None = None,
                 walker: str | None = None) -> None:
        """``walker``: the walker's name, where not the one ``game`` asks for (tests)."""
        if params is None:
            params = self.params_type_for(game, walker)()
        super().__init__(game, seed=seed, params=params)
        self.walker: Walker = walker_for(game, symmetric=self.symmetric, method=walker)

    @classmethod
    def params_type_for(cls, game: Game, walker: str | None = None) -> type[Params]:
        return walker_type(game, walker).params_type(cls.params_type)

    def _reserve(self, games: int) -> None:
        self.walker.reserve(self.table, games, self.export_shape)

    @property
    def start_share(self) -> float:
        """The share of games that are exploring starts (as the walker makes them)."""
        return self.walker.start_share(self.params)
