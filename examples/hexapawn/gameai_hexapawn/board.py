"""A Hexapawn position (:class:`HexapawnBoard`): the family's
:class:`~gameai.games.interface.State`, with the rules of moving and capturing.

Cells are numbered 0-8 row by row from the top left, as in the seed's pattern; X's pawns
start on the bottom row (6, 7, 8) and move up, O's on the top row (0, 1, 2) and move down.
Every move is a movement ``from -> to``, action ``9 + from * 9 + to`` of the interface
(:mod:`gameai.games.interface`); the placements 0-8 are never legal.
"""

from __future__ import annotations

from dataclasses import dataclass

from gameai.games.errors import GameOver, IllegalMove
from gameai.games.interface import Game, State

SIZE = 3
CELLS = SIZE * SIZE
PAWNS = 3  # each side's
FULL = (1 << CELLS) - 1
TOP = 0b000000111  # O's starting row, X's goal
BOTTOM = 0b111000000  # X's starting row, O's goal
START_X, START_O = BOTTOM, TOP
SIDE_KEY = 3 ** CELLS  # added to the key when O is to move
MIRROR = tuple(r * SIZE + (SIZE - 1 - c) for r in range(SIZE) for c in range(SIZE))
SYMMETRIES = (tuple(range(CELLS)), MIRROR)  # the identity, then left-right


def point_name(index: int) -> str:
    """A cell as people read it: its point number 1-9 (the move notation) and its place."""
    return f"{index + 1} (row {index // SIZE}, column {index % SIZE})"


def base3(x: int, o: int) -> int:
    """Seed 003's key: cell ``i`` is digit ``i`` in base 3 (0 empty, 1 X, 2 O)."""
    key = 0
    for i in range(CELLS - 1, -1, -1):
        key = key * 3 + (1 if x >> i & 1 else 2 if o >> i & 1 else 0)
    return key


def mirrored(mask: int) -> int:
    out = 0
    for i in range(CELLS):
        if mask >> i & 1:
            out |= 1 << MIRROR[i]
    return out


@dataclass(frozen=True, slots=True)
class HexapawnBoard(State):
    """A Hexapawn position: one bitmask of pawns per side and whose turn it is."""

    game: Game
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
        key = self.key
        image = base3(mirrored(self.x), mirrored(self.o)) + (0 if self.x_to_move else SIDE_KEY)
        return (image, 1) if image < key else (key, 0)

    def cell(self, index: int) -> str:
        if self.x >> index & 1:
            return "X"
        return "O" if self.o >> index & 1 else "-"

    def winner(self) -> str | None:
        """The side that reached the far row or took every enemy pawn; else, when the side
        to move has no legal move, its opponent."""
        if self.x & TOP or not self.o:
            return "X"
        if self.o & BOTTOM or not self.x:
            return "O"
        if not self._movements():
            return "O" if self.x_to_move else "X"
        return None

    def is_over(self) -> bool:
        return self.winner() is not None

    def legal_actions(self) -> list[int]:
        if self.is_over():
            return []
        return [CELLS + frm * CELLS + to for frm, to in self._movements()]

    def _movements(self) -> list[tuple[int, int]]:
        """Every ``(from, to)`` of the side to move, ascending: one square straight forward
        to an empty square, or one diagonally forward onto an enemy pawn."""
        mine, theirs = (self.x, self.o) if self.x_to_move else (self.o, self.x)
        step = -SIZE if self.x_to_move else SIZE
        out = []
        for frm in range(CELLS):
            if not mine >> frm & 1:
                continue
            row, col = divmod(frm + step, SIZE)
            if not 0 <= frm + step < CELLS:
                continue  # on the far row (the game is over)
            for dc in (-1, 0, 1):
                if not 0 <= col + dc < SIZE:
                    continue
                to = row * SIZE + col + dc
                occupied = (self.x | self.o) >> to & 1
                if (dc == 0 and not occupied) or (dc != 0 and theirs >> to & 1):
                    out.append((frm, to))
        return sorted(out)

    def play(self, action: int) -> HexapawnBoard:
        """The position after the side to move plays ``action``.

        Raises:
            GameOver: the game has ended.
            IllegalMove: an action id out of range, a placement, no pawn of the mover's on
                the origin, a move that is not one row forward, straight onto a pawn, or
                diagonally onto an empty square or the mover's own pawn; the message says
                which.
        """
        if self.is_over():
            raise GameOver(self.winner())
        game = self.game
        if isinstance(action, bool) or not isinstance(action, int) \
                or not 0 <= action < game.num_actions:
            raise IllegalMove(f"move {action!r} is out of range (actions are 0.."
                              f"{game.num_actions - 1}: a move from -> to is "
                              f"{CELLS} + from * {CELLS} + to)")
        frm, to = game.split_action(action)
        side, other = self.to_move, "O" if self.x_to_move else "X"
        mine, theirs = (self.x, self.o) if self.x_to_move else (self.o, self.x)
        if frm is None:
            raise IllegalMove(f"a placement on {point_name(to)}: Hexapawn has no placements; "
                              "every move takes a pawn from one square to another")
        if theirs >> frm & 1:
            raise IllegalMove(f"the pawn on {point_name(frm)} is {other}'s; {side} is to move")
        if not mine >> frm & 1:
            raise IllegalMove(f"there is no pawn on {point_name(frm)} to move")
        forward = "up" if self.x_to_move else "down"
        step = -SIZE if self.x_to_move else SIZE
        (fr, fc), (tr, tc) = divmod(frm, SIZE), divmod(to, SIZE)
        if tr - fr != step // SIZE or abs(tc - fc) > 1:
            raise IllegalMove(f"{point_name(to)} is not one row forward of {point_name(frm)}: "
                              f"{side}'s pawns move one row {forward}, straight or diagonally")
        if tc == fc and (self.x | self.o) >> to & 1:
            raise IllegalMove(f"{point_name(to)} is taken: a pawn moves straight forward only "
                              "to an empty square (it captures diagonally)")
        if tc != fc and not theirs >> to & 1:
            whose = "empty" if not mine >> to & 1 else f"{side}'s own pawn"
            raise IllegalMove(f"{point_name(to)} is {whose}: a pawn moves diagonally only to "
                              f"capture an {other} pawn")
        mine = (mine & ~(1 << frm)) | 1 << to
        theirs &= ~(1 << to)
        if self.x_to_move:
            return HexapawnBoard(game, mine, theirs, False)
        return HexapawnBoard(game, theirs, mine, True)


def initial(game: Game) -> HexapawnBoard:
    """The start: X's pawns on the bottom row, O's on the top row, X to move."""
    return HexapawnBoard(game, START_X, START_O, True)
