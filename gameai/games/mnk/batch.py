"""Many m,n,k boards at once: parsed into bitmask arrays with numpy, for
:meth:`Geometry.parse_batch <gameai.games.mnk.game.Geometry.parse_batch>`.

The common case, a well-formed unfinished board of a game without gravity, is parsed and
checked for the whole batch with numpy (a fraction of a microsecond a board). Every other
board goes through :meth:`Board.parse` and :meth:`Board.require_playable`, so its error is
exactly the one a single request gets, with ``field`` naming ``boards[i]``. Gravity games
always take that path.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from gameai.games.errors import GameError, GameOver, InvalidBoard
from gameai.games.interface import U64
from gameai.games.mnk.board import Board
from gameai.games.mnk.geometry import Geometry

_X, _O, _EMPTY, _SEPARATOR = (ord(c) for c in "XO-|")


def parse_masks(game: Geometry, texts: Sequence[object]) -> tuple[U64, U64]:
    """The X and O bitmasks of the boards, each checked valid and unfinished.

    Raises:
        InvalidBoard, GameOver, GameError: the first bad board's error, its ``field``
            naming ``boards[i]``.
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


def _plainly_playable(game: Geometry, x: U64, o: U64) -> npt.NDArray[np.bool_]:
    """Boards whose counts are right, with no line and an empty cell: valid and unfinished."""
    nx, no = np.bitwise_count(x), np.bitwise_count(o)
    ok = ((nx == no) | (nx == no + 1)) & ((x & o) == 0)
    ok &= (x | o) != np.uint64(game.full_mask)
    for line in game.lines:
        mask = np.uint64(line)
        ok &= ((x & mask) != mask) & ((o & mask) != mask)
    return ok


def _parse_one(game: Geometry, text: object, i: int) -> Board:
    error: GameError
    try:
        return Board.parse(game, text).require_playable()
    except GameOver as e:
        error = GameOver(e.winner)
    except InvalidBoard as e:
        error = InvalidBoard(e.reason)
    except GameError as e:
        error = GameError(str(e))
    error.field = f"boards[{i}]"  # read by the transports
    raise error


def to_move(x: U64, o: U64) -> list[str]:
    return np.where(np.bitwise_count(x) == np.bitwise_count(o), "X", "O").tolist()
