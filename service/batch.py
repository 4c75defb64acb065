"""Many boards at once: parse them into bitmask arrays fast, answer them vectorised.

The common case (a well-formed, unfinished board of a game without gravity) is checked
with string and numpy operations in a few microseconds a board; every other board goes
through :meth:`Board.parse` and :meth:`Board.require_playable`, so its error is exactly the
one a single request gets. Gravity games always take that path.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from gameai.games import Board, Game, GameError, GameOver, InvalidBoard
from gameai.games.keys import U64
from service.errors import InvalidRequest

_TO_X = str.maketrans("XO-", "100")
_TO_O = str.maketrans("XO-", "010")


def parse_boards(game: Game, texts: Sequence[object]) -> list[Board]:
    """The boards, each valid and unfinished.

    Raises:
        InvalidRequest, InvalidBoard, GameOver: with ``field`` naming ``boards[i]``, the
            first bad board.
    """
    n = len(texts)
    x = np.zeros(n, dtype=np.uint64)
    o = np.zeros(n, dtype=np.uint64)
    slow = np.zeros(n, dtype=bool)
    fast = not game.gravity and game.cells <= 64
    length = game.rows * (game.cols + 1) - 1
    separators = "|" * (game.rows - 1)
    step = game.cols + 1
    for i, text in enumerate(texts):
        if (not fast or not isinstance(text, str) or len(text) != length
                or text[game.cols::step] != separators):
            slow[i] = True
            continue
        cells = text.replace("|", "")[::-1]
        if cells.strip("XO-"):
            slow[i] = True
            continue
        x[i] = int(cells.translate(_TO_X), 2)
        o[i] = int(cells.translate(_TO_O), 2)
    slow |= ~_plainly_playable(game, x, o)
    boards = [Board(game, int(a), int(b)) for a, b in zip(x.tolist(), o.tolist(), strict=True)]
    for i in np.flatnonzero(slow).tolist():
        boards[i] = _parse_one(game, texts[i], i)
    return boards


def _plainly_playable(game: Game, x: U64, o: U64) -> npt.NDArray[np.bool_]:
    """Boards whose counts are right, with no line and an empty cell: valid and unfinished."""
    nx, no = np.bitwise_count(x), np.bitwise_count(o)
    ok = ((nx == no) | (nx == no + 1)) & ((x & o) == 0)
    ok &= (x | o) != np.uint64(game.full_mask)
    for line in game.lines:
        mask = np.uint64(line)
        ok &= ((x & mask) != mask) & ((o & mask) != mask)
    return ok


def _parse_one(game: Game, text: object, i: int) -> Board:
    field = f"boards[{i}]"
    if not isinstance(text, str):
        raise InvalidRequest(f"must be text, got {type(text).__name__}", field=field)
    error: GameError
    try:
        return Board.parse(game, text).require_playable()
    except GameOver as e:
        error = GameOver(e.winner)
    except InvalidBoard as e:
        error = InvalidBoard(e.reason)
    except GameError as e:
        raise InvalidRequest(str(e), field=field) from e
    setattr(error, "field", field)  # noqa: B010  (read by service.errors.classify)
    raise error


def best_moves(values: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.intp],
                                                          npt.NDArray[np.float64]]:
    """Per row the best legal move (the lowest index among equals) and its value; illegal
    moves are NaN."""
    filled = np.where(np.isnan(values), -np.inf, values)
    best = np.argmax(filled, axis=1)
    return best, filled[np.arange(len(values)), best]
