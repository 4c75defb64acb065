"""A perfect table model built from the exact solver: the reference learners are judged by.

Its values are the solver's scores scaled into (-1, 1): a win in ``t`` plies is worth
``1 - t / (cells + 1)``, so faster wins are worth more and slower losses lose less.
"""

from __future__ import annotations

import numpy as np

from gameai.games import Board, Game
from gameai.games.positions import enumerate_positions
from gameai.games.solver import back_up, big, score_layers
from gameai.models.info import ModelInfo
from gameai.models.model import TableModel


def solver_model(game: Game, *, info: ModelInfo | None = None) -> TableModel:
    """The exact model of ``game`` (small games only: raises ``TooLarge`` otherwise)."""
    positions = enumerate_positions(Board.empty(game))
    scores = score_layers(positions)
    keys, rows = [], []
    for d, layer in enumerate(positions.layers[:-1]):
        live = ~layer.over
        children = layer.children[live]
        child_scores = scores[d + 1][np.maximum(children, 0)]
        values = back_up(game, child_scores).astype(np.float32) / big(game)
        keys.append(layer.keys[live])
        rows.append(np.where(children >= 0, values, np.nan).astype(np.float32))
    info = info or ModelInfo(game=game.name, algorithm="solver")
    return TableModel.from_unsorted(game, info, np.concatenate(keys), np.concatenate(rows))
