"""The m,n,k family's board geometry: a ``rows x cols`` board where ``k`` in a row wins.

Everything in the family stands on this module: the board's size, its winning lines as
bitmasks and its symmetries as cell permutations. Cells are numbered row-major from the
top-left corner (``index = row * cols + col``), as the seed's ``(i, j)``. The family's
:class:`~gameai.games.mnk.game.MnkGame` is a :class:`Geometry` that also implements the
game interface, so the rules below it (board, keys, solvers) take a geometry and never
import the game.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from gameai.games.errors import GameError

MAX_CELLS = 64  # a position is two machine words
_DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


@dataclass(frozen=True)
class Geometry:
    """A board of ``rows x cols`` cells where ``k`` in a row wins; pieces fall to the
    lowest empty cell of their column when ``gravity`` is set."""

    name: str
    rows: int
    cols: int
    k: int
    gravity: bool = False

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    @property
    def big(self) -> int:
        """The score scale: a win in ``t`` plies scores ``big - t``."""
        return self.cells + 1

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


def geometry_of(game: object) -> Geometry:
    """``game`` as an m,n,k board, for the family's code written for positions as two
    bitmasks.

    Raises:
        GameError: ``game`` is of another family.
    """
    if not isinstance(game, Geometry):
        name = getattr(game, "name", type(game).__name__)
        raise GameError(f"{name}: positions of this game are not two bitmasks of "
                        "placed pieces (this path is for m,n,k games)")
    return game
