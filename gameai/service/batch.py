"""Many m,n,k boards at once as bitmask arrays: the helpers of the batch path's tests and
fuzzing (:func:`gameai.service.core.evaluate_batch` itself asks the game, ``game.parse_batch``,
whose m,n,k form is :mod:`gameai.games.mnk.batch`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from gameai.games.mnk.batch import parse_masks
from gameai.games.mnk.batch import to_move as to_move
from gameai.games.mnk.game import MnkGame as Game
from gameai.games.mnk.keys import U64
from gameai.models import Model
from gameai.service.errors import InvalidRequest

F64 = npt.NDArray[np.float64]


def parse_boards(game: Game, texts: Sequence[object]) -> tuple[U64, U64]:
    """The X and O bitmasks of the boards, each checked valid and unfinished.

    Raises:
        InvalidRequest, InvalidBoard, GameOver: with ``field`` naming ``boards[i]``, the
            first bad board.
    """
    require_text(texts)
    return parse_masks(game, texts)


def require_text(texts: Sequence[object]) -> None:
    """Raise :class:`InvalidRequest` naming the first board that is not text."""
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InvalidRequest(f"must be text, got {type(text).__name__}",
                                 field=f"boards[{i}]")


def move_values(model: Model, x: U64, o: U64) -> F64:
    """``model.move_values`` for boards given as bitmasks that :func:`parse_boards` has
    already checked: the same numbers without building and re-checking a ``Board`` for
    each (which costs more than the lookup itself). ``tests/service/test_batch.py``
    holds the two equal on every live position.
    """
    return model.move_values_of_masks(x, o).astype(np.float64)


def best_moves(values: F64) -> tuple[npt.NDArray[np.intp], F64]:
    """Per row the best legal move (the lowest index among equals) and its value; illegal
    moves are NaN."""
    filled = np.where(np.isnan(values), -np.inf, values)
    best = np.argmax(filled, axis=1)
    return best, filled[np.arange(len(values)), best]
