"""A morris position (:class:`MorrisBoard`): the family's
:class:`~gameai.games.interface.State`, with the rules of placing and moving."""

from __future__ import annotations

from dataclasses import dataclass

from gameai.games.errors import GameOver, IllegalMove
from gameai.games.interface import State
from gameai.games.morris.geometry import (
    CELLS,
    CENTRE,
    FULL,
    PIECES,
    SIDE_KEY,
    SYMMETRIES,
    Geometry,
    base3,
    move_mask,
    point_name,
)


@dataclass(frozen=True, slots=True)
class MorrisBoard(State):
    """A morris position: one bitmask of points per side and whose turn it is."""

    # always the family's game, a Geometry that implements the interface; typed as its
    # geometry, which the board stands on, so that the board need not import the game
    game: Geometry  # type: ignore[assignment]
    x: int
    o: int
    x_to_move: bool

    @property
    def to_move(self) -> str:
        return "X" if self.x_to_move else "O"

    @property
    def key(self) -> int:
        return base3(self.x, self.o) + (0 if self.x_to_move else SIDE_KEY)

    def canonical(self) -> tuple[int, int]:
        side = 0 if self.x_to_move else SIDE_KEY
        best, best_sym = -1, 0
        for sym, perm in enumerate(SYMMETRIES):
            key = base3(move_mask(self.x, perm), move_mask(self.o, perm)) + side
            if best < 0 or key < best:
                best, best_sym = key, sym
        return best, best_sym

    def cell(self, index: int) -> str:
        if self.x >> index & 1:
            return "X"
        return "O" if self.o >> index & 1 else "-"

    @property
    def placing(self) -> bool:
        """Whether the side to move still has pieces to place."""
        return (self.x if self.x_to_move else self.o).bit_count() < PIECES

    def winner(self) -> str | None:
        """The side with a line; else, once it must move a piece and cannot, the side
        whose opponent is stuck."""
        game = self.game
        for line in game.lines:
            if self.x & line == line:
                return "X"
            if self.o & line == line:
                return "O"
        if not self.placing and not self._movements():
            return "O" if self.x_to_move else "X"
        return None

    def is_over(self) -> bool:
        return self.winner() is not None

    def legal_actions(self) -> list[int]:
        if self.is_over():
            return []
        empty = FULL & ~(self.x | self.o)
        if self.placing:
            if not self.game.centre_opening and not (self.x | self.o):
                empty &= ~(1 << CENTRE)
            return [to for to in range(CELLS) if empty >> to & 1]
        return [CELLS + frm * CELLS + to for frm, to in self._movements()]

    def _movements(self) -> list[tuple[int, int]]:
        mine = self.x if self.x_to_move else self.o
        empty = FULL & ~(self.x | self.o)
        return [(frm, to) for frm in range(CELLS) if mine >> frm & 1
                for to in range(CELLS) if (self.game.neighbours[frm] & empty) >> to & 1]

    def play(self, action: int) -> MorrisBoard:
        """The position after the side to move plays ``action``.

        Raises:
            GameOver: the game has ended.
            IllegalMove: placing a fourth piece, moving during placement, moving a piece
                that is not the mover's, to a taken or non-adjacent point, or an action
                id out of range; the message says which.
        """
        if self.is_over():
            raise GameOver(self.winner())
        game = self.game
        if isinstance(action, bool) or not isinstance(action, int) \
                or not 0 <= action < game.num_actions:
            raise IllegalMove(f"move {action!r} is out of range (actions are 0.."
                              f"{game.num_actions - 1}: a placement is the point 0-8, a "
                              f"movement 9 + from * 9 + to)")
        frm, to = game.split_action(action)
        side = self.to_move
        mine = self.x if self.x_to_move else self.o
        if frm is None:
            if not self.placing:
                raise IllegalMove(f"placing a fourth piece: {side} has all three pieces on "
                                  "the board and must move one (from -> to)")
            if (self.x | self.o) >> to & 1:
                raise IllegalMove(f"point {point_name(to)} is taken")
            if to == CENTRE and not game.centre_opening and not (self.x | self.o):
                raise IllegalMove("the first placement may not be the centre in "
                                  f"{game.name}")
            mine |= 1 << to
        else:
            if self.placing:
                raise IllegalMove(f"moving during placement: {side} has placed "
                                  f"{mine.bit_count()} of 3 pieces and must place the next")
            theirs = self.o if self.x_to_move else self.x
            if theirs >> frm & 1:
                raise IllegalMove(f"the piece at {point_name(frm)} is "
                                  f"{'O' if self.x_to_move else 'X'}'s; {side} is to move")
            if not mine >> frm & 1:
                raise IllegalMove(f"there is no piece at {point_name(frm)} to move")
            if (self.x | self.o) >> to & 1:
                raise IllegalMove(f"point {point_name(to)} is taken")
            if not game.neighbours[frm] >> to & 1:
                raise IllegalMove(f"point {point_name(to)} is not next to {point_name(frm)}: a "
                                  "piece moves one step along a row or a column")
            mine = (mine & ~(1 << frm)) | 1 << to
        if self.x_to_move:
            return MorrisBoard(game, mine, self.o, False)
        return MorrisBoard(game, self.x, mine, True)


def initial(game: Geometry) -> MorrisBoard:
    """The empty board, X to place first."""
    return MorrisBoard(game, 0, 0, True)
