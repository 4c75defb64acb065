"""The m,n,k family: a ``rows x cols`` board, ``k`` in a row wins, X moves first.

A game is its four parameters. Cells are numbered row-major from the top-left corner
(``index = row * cols + col``), as the seed's ``(i, j)``. A position is a pair of
bitmasks, one per player, so the rules below are integer arithmetic.

Named games:

    tictactoe       3x3, k=3
    four-in-a-row   4x4, k=4 (seed 002)
    mnk-4x5-4       4 rows x 5 columns, k=4 (seed 004's larger board)
    connect-four    6 rows x 7 columns, k=4, with gravity

Any ``mnk-RxC-K`` and ``connect-RxC-K`` (gravity) parses too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from gameai.games.errors import UnknownGame

MAX_CELLS = 64  # a position is two machine words

_NAMED = {
    "tictactoe": (3, 3, 3, False),
    "four-in-a-row": (4, 4, 4, False),
    "connect-four": (6, 7, 4, True),
}
_NAME_OF = {params: name for name, params in _NAMED.items()}
_PATTERN = re.compile(r"(mnk|connect)-(\d+)x(\d+)-(\d+)")
_DIGITS = 6  # sizes longer than this are refused as too large without parsing them
_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


@dataclass(frozen=True)
class Game:
    """One game of the family. Build it with :func:`get_game`; it is immutable and hashable."""

    name: str
    rows: int
    cols: int
    k: int
    gravity: bool = False

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    @property
    def full_mask(self) -> int:
        return (1 << self.cells) - 1

    @cached_property
    def bottom_row(self) -> int:
        """The bottom row's cells as a bitmask: the floor that gravity pieces rest on."""
        return ((1 << self.cols) - 1) << (self.cols * (self.rows - 1))

    @cached_property
    def lines(self) -> tuple[int, ...]:
        """Every winning line as a bitmask: rows, columns and both diagonals of length k."""
        found = []
        for r in range(self.rows):
            for c in range(self.cols):
                for dr, dc in _DIRECTIONS:
                    end_r, end_c = r + dr * (self.k - 1), c + dc * (self.k - 1)
                    if 0 <= end_r < self.rows and 0 <= end_c < self.cols:
                        mask = 0
                        for step in range(self.k):
                            mask |= 1 << ((r + dr * step) * self.cols + c + dc * step)
                        found.append(mask)
        return tuple(found)

    @cached_property
    def lines_through(self) -> tuple[tuple[int, ...], ...]:
        """For each cell, the lines that contain it (the only ones a move there can complete)."""
        return tuple(
            tuple(line for line in self.lines if line >> cell & 1) for cell in range(self.cells)
        )

    @cached_property
    def symmetries(self) -> tuple[tuple[int, ...], ...]:
        """The board's symmetries as cell permutations; ``perm[i]`` is where cell ``i`` goes.

        Eight for a square board, four for a rectangle, and only the left-right mirror for a
        gravity game (turning the board over would turn gravity too). The identity is first.
        """
        rows, cols = self.rows, self.cols
        maps = [lambda r, c: (r, c), lambda r, c: (r, cols - 1 - c)]
        if not self.gravity:
            maps += [lambda r, c: (rows - 1 - r, c), lambda r, c: (rows - 1 - r, cols - 1 - c)]
            if rows == cols:
                maps += [
                    lambda r, c: (c, r),
                    lambda r, c: (cols - 1 - c, r),
                    lambda r, c: (c, rows - 1 - r),
                    lambda r, c: (cols - 1 - c, rows - 1 - r),
                ]
        perms = []
        for fn in maps:
            perm = []
            for i in range(self.cells):
                r, c = fn(*divmod(i, cols))
                perm.append(r * cols + c)
            perms.append(tuple(perm))
        return tuple(dict.fromkeys(perms))  # a 1xN board's mirrors can coincide

    @cached_property
    def inverse_symmetries(self) -> tuple[tuple[int, ...], ...]:
        """``inverse[s][perm[s][i]] == i``: maps a cell of the transformed board back."""
        result = []
        for perm in self.symmetries:
            inverse = [0] * self.cells
            for i, j in enumerate(perm):
                inverse[j] = i
            result.append(tuple(inverse))
        return tuple(result)

    def describe(self) -> str:
        kind = "gravity, " if self.gravity else ""
        return f"{self.name} ({self.rows}x{self.cols}, {kind}{self.k} in a row)"


def known_games() -> tuple[str, ...]:
    """The named games, for help texts and error messages."""
    return (*_NAMED, "mnk-4x5-4")


def get_game(name: str) -> Game:
    """The game called ``name``: a named game, ``mnk-RxC-K`` or ``connect-RxC-K``.

    Names are normalised: ``mnk-3x3-3`` is ``tictactoe``, and a game is one object per name.

    Raises:
        UnknownGame: the name matches nothing, or its sizes are out of range.
    """
    if not isinstance(name, str):
        raise UnknownGame(f"game name must be text, got {type(name).__name__}")
    key = name.strip().lower()
    if key in _NAMED:
        return _make(*_NAMED[key])
    match = _PATTERN.fullmatch(key)
    if not match:
        shown = name if len(name) <= 40 else name[:40] + "..."
        raise UnknownGame(
            f"unknown game {shown!r}: known games are {', '.join(known_games())}, "
            "or any mnk-RxC-K (R rows, C columns, K in a row) or connect-RxC-K (with gravity)"
        )
    shown = key if len(key) <= 40 else key[:40] + "..."
    if any(len(digits) > _DIGITS for digits in match.group(2, 3, 4)):
        raise UnknownGame(f"game {shown!r}: a board has at most {MAX_CELLS} cells")
    family, rows, cols, k = match.group(1), *map(int, match.group(2, 3, 4))
    if rows * cols > MAX_CELLS:
        raise UnknownGame(f"game {shown!r}: a board has at most {MAX_CELLS} cells "
                          f"({rows}x{cols} is {rows * cols:,})")
    if rows < 1 or cols < 1:
        raise UnknownGame(f"game {shown!r}: a board has at least one row and one column")
    if not 1 <= k <= max(rows, cols):
        raise UnknownGame(f"game {key!r}: k must be between 1 and {max(rows, cols)}")
    return _make(rows, cols, k, family == "connect")


_CACHE: dict[tuple[int, int, int, bool], Game] = {}


def _make(rows: int, cols: int, k: int, gravity: bool) -> Game:
    params = (rows, cols, k, gravity)
    game = _CACHE.get(params)
    if game is None:
        name = _NAME_OF.get(params, f"{'connect' if gravity else 'mnk'}-{rows}x{cols}-{k}")
        game = _CACHE.setdefault(params, Game(name, rows, cols, k, gravity))
    return game
