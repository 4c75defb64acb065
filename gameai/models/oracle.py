"""A perfect table model built from the exact solver: the reference learners are judged by.

Its values are the solver's scores scaled into (-1, 1): a win in ``t`` plies is worth
``1 - t / big`` (``big`` is the game's score scale: ``cells + 1`` for m,n,k games), so
faster wins are worth more and slower losses lose less.
"""

from __future__ import annotations

import numpy as np

from gameai.games import Game
from gameai.models.info import ModelInfo
from gameai.models.model import TableModel


def solver_model(game: Game, *, info: ModelInfo | None = None) -> TableModel:
    """The exact model of ``game`` (small games only: raises ``TooLarge`` otherwise)."""
    keys, scores, legal = game.move_scores()
    values = np.where(legal, scores.astype(np.float32) / game.big, np.nan).astype(np.float32)
    info = info or ModelInfo(game=game.name, algorithm="solver")
    return TableModel.from_unsorted(game, info, keys, values)
