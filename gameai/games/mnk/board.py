"""Boards: parsing, printing, validation and moves. Pure and immutable.

A board prints as the seed's pattern: rows top to bottom joined by ``|``, cells ``X``,
``O`` and ``-`` (``"X--|-O-|---"``). The side to move follows from the counts, X first.
A board is the m,n,k family's :class:`~gameai.games.interface.State`; its action ids are
the cell indices.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gameai.games.errors import GameOver, IllegalMove, InvalidBoard
from gameai.games.interface import State
from gameai.games.mnk.geometry import Geometry
from gameai.games.mnk.keys import U64, base3_key, canonical, masks_of_key, transform_mask

MAX_PATTERN_LENGTH = 200  # the longest pattern of a 64-cell board is 64 + 63 separators


@dataclass(frozen=True, slots=True)
class Board(State):
    """A position: the game and one bitmask of cells per player."""

    # always the family's game, a Geometry that implements the interface; typed as its
    # geometry, which the board stands on, so that the board need not import the game
    game: Geometry  # type: ignore[assignment]
    x: int
    o: int

    @classmethod
    def empty(cls, game: Geometry) -> Board:
        return cls(game, 0, 0)

    @classmethod
    def from_key(cls, game: Geometry, key: int) -> Board:
        """The board whose :attr:`key` is ``key`` (not validated)."""
        return cls(game, *masks_of_key(game, key))

    @classmethod
    def parse(cls, game: Geometry, text: object) -> Board:
        """The board a pattern describes, validated.

        Raises:
            InvalidBoard: malformed text or a position that cannot occur; the message names
                the problem (row count, row length, character, counts, lines, gravity).
        """
        x, o = _parse_cells(game, text)
        validate(game, x, o)
        return cls(game, x, o)

    def __str__(self) -> str:
        cols = self.game.cols
        cells = "".join(self.cell(i) for i in range(self.game.cells))
        return "|".join(cells[r * cols : (r + 1) * cols] for r in range(self.game.rows))

    def cell(self, index: int) -> str:
        if self.x >> index & 1:
            return "X"
        return "O" if self.o >> index & 1 else "-"

    @property
    def occupied(self) -> int:
        return self.x | self.o

    @property
    def ply(self) -> int:
        """How many moves have been played."""
        return self.occupied.bit_count()

    @property
    def to_move(self) -> str:
        return "X" if self.x.bit_count() == self.o.bit_count() else "O"

    def winner(self) -> str | None:
        """The player with a line, if any (a valid board has at most one)."""
        if has_line(self.game, self.x):
            return "X"
        return "O" if has_line(self.game, self.o) else None

    def is_full(self) -> bool:
        return self.occupied == self.game.full_mask

    def is_over(self) -> bool:
        return self.is_full() or self.winner() is not None

    def legal_moves(self) -> list[int]:
        """Cell indices the side to move may play, ascending; empty when the game is over."""
        if self.is_over():
            return []
        return mask_cells(playable_mask(self.game, self.occupied))

    def legal_actions(self) -> list[int]:
        return self.legal_moves()

    def winning_actions(self) -> tuple[int, ...]:
        """:meth:`State.winning_actions` by the lines through each playable cell alone."""
        if self.is_over():
            return ()
        mine = self.x if self.to_move == "X" else self.o
        return tuple(cell for cell in mask_cells(playable_mask(self.game, self.occupied))
                     if line_through(self.game, mine | 1 << cell, cell))

    @property
    def key(self) -> int:
        """Seed 003's base-3 key (the side to move follows from the counts)."""
        return base3_key(self.game, self.x, self.o)

    def canonical(self) -> tuple[int, int]:
        return canonical(self.game, self.x, self.o)

    def transformed(self, sym: int) -> Board:
        """This board moved by symmetry ``sym`` (an index into ``game.symmetries``)."""
        return Board(self.game, transform_mask(self.game, self.x, sym),
                     transform_mask(self.game, self.o, sym))

    def play(self, move: int) -> Board:
        """The board after the side to move plays ``move`` (a cell index).

        Raises:
            GameOver: the game has already ended.
            IllegalMove: the cell is off the board, taken, or not playable under gravity.
        """
        self.require_playable()
        if not isinstance(move, int) or not 0 <= move < self.game.cells:
            raise IllegalMove(
                f"move {move!r} is off the board (cells are 0..{self.game.cells - 1})"
            )
        bit = 1 << move
        if self.occupied & bit:
            raise IllegalMove(f"cell {move} (row {move // self.game.cols}, column "
                              f"{move % self.game.cols}) is already taken")
        if not playable_mask(self.game, self.occupied) & bit:
            raise IllegalMove(f"cell {move} is not the lowest empty cell of its column")
        if self.to_move == "X":
            return Board(self.game, self.x | bit, self.o)
        return Board(self.game, self.x, self.o | bit)

    def require_playable(self) -> Board:
        """This board, or :class:`GameOver` if it is finished: the guard before choosing a move."""
        winner = self.winner()
        if winner is not None or self.is_full():
            raise GameOver(winner)
        return self


def has_line(game: Geometry, mask: int) -> bool:
    for line in game.lines:  # a plain loop: twice as fast as any() on this hot path  # noqa: SIM110
        if mask & line == line:
            return True
    return False


def line_through(game: Geometry, mask: int, cell: int) -> bool:
    """Whether ``mask`` holds a line through ``cell``: whether a move there has just won
    (the scalar twin of :func:`gameai.games.mnk.positions.has_line_through`)."""
    for line in game.lines_through[cell]:  # noqa: SIM110  (a plain loop, as has_line)
        if mask & line == line:
            return True
    return False


def mask_cells(mask: int) -> list[int]:
    """The set bits of ``mask`` as ascending cell indices."""
    cells = []
    while mask:
        low = mask & -mask
        cells.append(low.bit_length() - 1)
        mask ^= low
    return cells


def playable_mask(game: Geometry, occupied: int) -> int:
    """Empty cells a move may go to: all of them, or under gravity the lowest of each column."""
    empty = game.full_mask & ~occupied
    if not game.gravity:
        return empty
    supported = (occupied >> game.cols) | game.bottom_row  # the cell below is filled, or the floor
    return empty & supported


def playable_masks(game: Geometry, occupied: U64) -> U64:
    """Vectorised :func:`playable_mask`."""
    empty = np.uint64(game.full_mask) & ~occupied
    if not game.gravity:
        return empty
    return empty & ((occupied >> np.uint64(game.cols)) | np.uint64(game.bottom_row))


def validate(game: Geometry, x: int, o: int) -> None:
    """Raise :class:`InvalidBoard` unless ``(x, o)`` can arise in a game played by the rules."""
    if x & o or (x | o) & ~game.full_mask:
        raise InvalidBoard("the two players' cells overlap or lie off the board")
    nx, no = x.bit_count(), o.bit_count()
    if nx not in (no, no + 1):
        raise InvalidBoard(
            f"impossible piece counts: {nx} X and {no} O (X moves first, so X has as many "
            "pieces as O or one more)"
        )
    if game.gravity:
        floating = _floating(game, x | o)
        if floating:
            cell = (floating & -floating).bit_length() - 1
            raise InvalidBoard(
                f"floating piece at row {cell // game.cols}, column {cell % game.cols}: in a "
                "gravity game every piece rests on the floor or on another piece"
            )
    x_line, o_line = has_line(game, x), has_line(game, o)
    if x_line and o_line:
        raise InvalidBoard("both players have a line; the game ends at the first one")
    last_mover = "X" if nx > no else "O"
    for player, line, mask in (("X", x_line, x), ("O", o_line, o)):
        if line and player != last_mover:
            raise InvalidBoard(
                f"{player} has a line but {last_mover} moved last; "
                f"the game ended at {player}'s line"
            )
        if line:
            _check_single_last_move(game, player, mask, x, o)
    if game.gravity:
        _check_gravity_ends(game, x, o)


def _floating(game: Geometry, occupied: int) -> int:
    return occupied & ~((occupied >> game.cols) | game.bottom_row)


def _check_single_last_move(game: Geometry, player: str, mask: int, x: int, o: int) -> None:
    """A won position must have a last move that completed every one of the winner's lines."""
    common = mask
    for line in game.lines:
        if mask & line == line:
            common &= line
    if game.gravity:  # the last piece must be on top of its column
        common &= ~((x | o) << game.cols)
    if not common:
        raise InvalidBoard(
            f"{player}'s lines could not all have been completed by one last move; "
            "the game would have ended earlier"
        )


def _check_gravity_ends(game: Geometry, x: int, o: int) -> None:
    """Gravity boards: the first move (an X) lies on the floor, the last on top of a column.

    These are exact necessary conditions, checked in time linear in the board. Whether
    some alternating order builds every column is not searched for: that search is
    exponential in the number of columns, and validation must stay cheap on any input.
    """
    occupied = x | o
    if not occupied:
        return
    if not x & game.bottom_row:
        raise InvalidBoard("no X on the bottom row: X's first move must have landed there")
    who, last = ("X", x) if x.bit_count() > o.bit_count() else ("O", o)
    tops = occupied & ~(occupied << game.cols)  # occupied cells with nothing above
    if not last & tops:
        raise InvalidBoard(f"{who} moved last, but no column has an {who} on top")


def _parse_cells(game: Geometry, text: object) -> tuple[int, int]:
    if not isinstance(text, str):
        raise InvalidBoard(f"board must be text like 'X--|-O-|---', got {type(text).__name__}")
    if len(text) > MAX_PATTERN_LENGTH:
        raise InvalidBoard(
            f"board is {len(text)} characters long; the limit is {MAX_PATTERN_LENGTH}"
        )
    rows = text.split("|")
    if len(rows) != game.rows:
        raise InvalidBoard(
            f"expected {game.rows} rows separated by '|', got {len(rows)} (for {game.name}, a "
            f"row has {game.cols} cells of X, O or -)"
        )
    x = o = 0
    for r, row in enumerate(rows):
        if len(row) != game.cols:
            raise InvalidBoard(f"row {r} has {len(row)} cells, expected {game.cols}")
        for c, ch in enumerate(row):
            bit = 1 << (r * game.cols + c)
            if ch == "X":
                x |= bit
            elif ch == "O":
                o |= bit
            elif ch != "-":
                raise InvalidBoard(
                    f"unknown character {ch!r} at row {r}, column {c} (cells are X, O or -)"
                )
    return x, o
