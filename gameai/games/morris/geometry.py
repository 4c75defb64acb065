"""The morris family's board geometry: the 3x3 board, its lines, its neighbours and its
symmetries, per variant.

Everything in the family stands on this module; the family's
:class:`~gameai.games.morris.game.MorrisGame` is a :class:`Geometry` that also implements the
game interface, so the board and the text parser take a geometry and never import the game.
Rules in full: :mod:`gameai.games.morris.game`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

SIZE = 3
CELLS = SIZE * SIZE
PIECES = 3  # each side's
CENTRE = 4
SIDE_KEY = 3 ** CELLS  # added to the key when O is to move
BIG = 32  # score scale: every variant's longest forced win is 9 plies or fewer (docs/games.md)
FULL = (1 << CELLS) - 1

def _square_symmetries() -> tuple[tuple[int, ...], ...]:
    """The square's eight symmetries as cell permutations, in the order of the m,n,k
    family's (the identity first)."""
    n = SIZE - 1
    maps = (lambda r, c: (r, c), lambda r, c: (r, n - c), lambda r, c: (n - r, c),
            lambda r, c: (n - r, n - c), lambda r, c: (c, r), lambda r, c: (n - c, r),
            lambda r, c: (c, n - r), lambda r, c: (n - c, n - r))
    perms = []
    for fn in maps:
        images = (fn(*divmod(i, SIZE)) for i in range(CELLS))
        perms.append(tuple(r * SIZE + c for r, c in images))
    return tuple(perms)


SYMMETRIES = _square_symmetries()



@dataclass(frozen=True)
class Geometry:
    """One variant's board: which points a piece may move to and which lines win."""

    name: str
    anywhere: bool = False  # a piece may move to any empty point ("nine holes")
    diagonals_win: bool = True
    centre_opening: bool = True  # X's first placement may be the centre
    rows: int = SIZE
    cols: int = SIZE
    k: int = PIECES
    gravity: bool = False

    @property
    def cells(self) -> int:
        return CELLS

    @property
    def num_actions(self) -> int:
        return CELLS + CELLS * CELLS

    @property
    def big(self) -> int:
        return BIG

    @property
    def symmetries(self) -> tuple[tuple[int, ...], ...]:
        return SYMMETRIES

    @cached_property
    def lines(self) -> tuple[int, ...]:
        """Every winning line as a bitmask."""
        rows = [0b111 << (SIZE * r) for r in range(SIZE)]
        cols = [0b001001001 << c for c in range(SIZE)]
        diagonals = [0b100010001, 0b001010100] if self.diagonals_win else []
        return tuple(rows + cols + diagonals)

    @cached_property
    def neighbours(self) -> tuple[int, ...]:
        """For each point, the points a piece there may move to (before emptiness)."""
        out = []
        for i in range(CELLS):
            r, c = divmod(i, SIZE)
            if self.anywhere:
                out.append(FULL & ~(1 << i))
                continue
            mask = 0
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                rr, cc = r + dr, c + dc
                if 0 <= rr < SIZE and 0 <= cc < SIZE:
                    mask |= 1 << (rr * SIZE + cc)
            out.append(mask)
        return tuple(out)

    def split_action(self, action: int) -> tuple[int | None, int]:
        """``(from, to)`` of an action id (``from`` is None for a placement)."""
        if action < CELLS:
            return None, action
        frm, to = divmod(action - CELLS, CELLS)
        return frm, to

    def action_of(self, to: int, frm: int | None = None) -> int:
        """The action id of a placement on ``to`` or a movement ``frm -> to``."""
        return to if frm is None else CELLS + frm * CELLS + to


def point_name(index: int) -> str:
    return f"(row {index // SIZE}, column {index % SIZE})"


def base3(x: int, o: int) -> int:
    key = 0
    for i in range(CELLS - 1, -1, -1):
        key = key * 3 + (1 if x >> i & 1 else 2 if o >> i & 1 else 0)
    return key


def move_mask(mask: int, perm: tuple[int, ...]) -> int:
    out = 0
    while mask:
        low = mask & -mask
        out |= 1 << perm[low.bit_length() - 1]
        mask ^= low
    return out


