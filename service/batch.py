"""Many boards at once: parsed into bitmask arrays and answered vectorised.

The common case, a well-formed unfinished board of a game without gravity, is parsed and
checked for the whole batch with numpy (a fraction of a microsecond a board). Every other
board goes through :meth:`Board.parse` and :meth:`Board.require_playable`, so its error is
exactly the one a single request gets, naming ``boards[i]``. Gravity games always take
that path.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from gameai.games import Board, GameError, GameOver, InvalidBoard
from gameai.games.game import MnkGame as Game
from gameai.games.keys import U64
from gameai.models import Model
from service.errors import InvalidRequest

F64 = npt.NDArray[np.float64]
_X, _O, _EMPTY, _SEPARATOR = (ord(c) for c in "XO-|")


def parse_boards(game: Game, texts: Sequence[object]) -> tuple[U64, U64]:
    """The X and O bitmasks of the boards, each checked valid and unfinished.

    Raises:
        InvalidRequest, InvalidBoard, GameOver: with ``field`` naming ``boards[i]``, the
            first bad board.
    """
    n = len(texts)
    x = np.zeros(n, dtype=np.uint64)
    o = np.zeros(n, dtype=np.uint64)
    slow = np.ones(n, dtype=bool)
    length = game.rows * (game.cols + 1) - 1
    if not game.gravity and n:
        shaped = np.flatnonzero([isinstance(t, str) and len(t) == length for t in texts])
        if len(shaped):
            # non-ASCII characters become "?" so every board keeps its length in bytes
            joined = "".join([str(texts[i]) for i in shaped.tolist()]).encode("ascii", "replace")
            grid = np.frombuffer(joined, dtype=np.uint8).reshape(len(shaped), length)
            columns = np.arange(length)
            is_cell = (columns + 1) % (game.cols + 1) != 0
            cells, separators = grid[:, is_cell], grid[:, ~is_cell]
            bits = np.uint64(1) << np.arange(game.cells, dtype=np.uint64)
            xs = np.bitwise_or.reduce(np.where(cells == _X, bits, np.uint64(0)), axis=1)
            os_ = np.bitwise_or.reduce(np.where(cells == _O, bits, np.uint64(0)), axis=1)
            good = (separators == _SEPARATOR).all(axis=1)
            good &= ((cells == _X) | (cells == _O) | (cells == _EMPTY)).all(axis=1)
            good &= _plainly_playable(game, xs, os_)
            x[shaped[good]], o[shaped[good]] = xs[good], os_[good]
            slow[shaped[good]] = False
    for i in np.flatnonzero(slow).tolist():
        board = _parse_one(game, texts[i], i)
        x[i], o[i] = board.x, board.o
    return x, o


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


def to_move(x: U64, o: U64) -> list[str]:
    return np.where(np.bitwise_count(x) == np.bitwise_count(o), "X", "O").tolist()
