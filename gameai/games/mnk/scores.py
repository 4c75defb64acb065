"""The m,n,k family's scores: negamax values from the side to move's view.

    win in t plies   ->  BIG - t      (BIG = cells + 1, so every win scores > 0)
    draw             ->  0
    loss in t plies  ->  t - BIG

so the best move maximises the negated, one-ply-older score of its child (:func:`back_up`):
a faster win and a slower loss score higher. Both solvers (tables and search) use them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gameai.games.mnk.board import Board
from gameai.games.mnk.geometry import Geometry


def big(game: Geometry) -> int:
    return game.cells + 1


def back_up(game: Geometry, child_scores: npt.NDArray[np.integer]) -> npt.NDArray[np.int16]:
    """The score of a move, from the mover's view, given its child's score."""
    v = -child_scores.astype(np.int16)
    return np.where(v > 0, v - 1, np.where(v < 0, v + 1, 0)).astype(np.int16)


def describe_score(game: Geometry, score: int, board: Board) -> tuple[str, int]:
    """``(outcome, distance)`` of a score; a draw's distance is the plies left to fill ``board``."""
    if score > 0:
        return "win", big(game) - score
    if score < 0:
        return "loss", big(game) + score
    return "draw", game.cells - board.ply
