"""The morris family: Three Men's Morris and its variants, games whose pieces move.

**Rules** (the standard game, ``three-mens-morris``). The 3x3 board of the seed's pattern
(``X``, ``O``, ``-``). X moves first. Each side places its three pieces, one per turn, on
empty points; once a side has all three down, each of its turns moves one of its pieces
to an empty point next to it along the board's lines: the orthogonal neighbour in a row
or a column. Three of a side in a row, a column or a diagonal wins, in either phase. A
side that cannot move loses.

**Draw rule.** A position (the board and the side to move) that occurs for the third time
in a game ends it in a draw: threefold repetition. It is the rule under which the
retrograde solver's values are the game's values. A winning side's optimal play steps to
a position one ply closer to the end at every move, so it never repeats a position and
the rule never takes its win away; a side that can only hold the draw keeps to drawn
positions, and in a finite game that stays in them some position comes round a third
time. So "cycles are draws" in the solver is exactly "repetition is a draw" in play. A
cap on the number of moves would not do that: a win longer than the cap would become a
draw, and a position's value would depend on the moves already played. Positions carry
no history: every answer is about the game that starts from the position given.

**Variants** are parameters of the name:

    three-mens-morris                      the standard game above
    nine-holes                             a piece moves to any empty point
    three-mens-morris-no-diagonals         only rows and columns win
    three-mens-morris-no-centre-opening    X's first placement may not be the centre

and any combination in that order (``nine-holes-no-diagonals-no-centre-opening``;
``three-mens-morris-anywhere`` is ``nine-holes``; ``center`` is accepted for ``centre``).

**Whose turn.** While pieces are being placed the counts tell whose turn it is (X when
the counts are equal). Once all six are down they no longer do, so a position then needs
``to_move`` (``"X"`` or ``"O"``); a missing or impossible one is an ``InvalidBoard``.

**Actions** (:mod:`gameai.games.interface`): a placement on point ``to`` is action ``to``
(0-8, row-major); a movement ``from -> to`` is ``9 + from * 9 + to``; 90 in all.

**Keys.** Seed 003's base-3 key of the cells plus ``3**9`` when O is to move.

Reading positions and move lists (and their precise errors): :mod:`gameai.games.morris_text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from gameai.games.errors import GameOver, IllegalMove, UnknownGame
from gameai.games.interface import U64, Game, State

if TYPE_CHECKING:
    from gameai.games.graph import StateGraph
    from gameai.games.solver import Solution

SIZE = 3
CELLS = SIZE * SIZE
PIECES = 3  # each side's
CENTRE = 4
SIDE_KEY = 3 ** CELLS  # added to the key when O is to move
BIG = 32  # score scale: every variant's longest forced win is 9 plies or fewer (docs/games.md)
FULL = (1 << CELLS) - 1

NAMED = ("three-mens-morris", "nine-holes")
_OPTIONS = ("-anywhere", "-no-diagonals", "-no-centre-opening")
_NAME = re.compile(r"(three-mens-morris|nine-holes)((?:-anywhere|-no-diagonals"
                   r"|-no-cent(?:re|er)-opening)*)")


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
class MorrisGame(Game):
    """One morris variant. Build it with :func:`gameai.games.get_game`; immutable."""

    name: str
    anywhere: bool = False  # a piece may move to any empty point ("nine holes")
    diagonals_win: bool = True
    centre_opening: bool = True  # X's first placement may be the centre
    rows: int = SIZE
    cols: int = SIZE
    k: int = PIECES
    gravity: bool = False
    cyclic: ClassVar[bool] = True

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

    def describe(self) -> str:
        moves = "to any empty point" if self.anywhere else "to an orthogonal neighbour"
        lines = "rows, columns and diagonals" if self.diagonals_win else "rows and columns"
        opening = "" if self.centre_opening else "; X may not open in the centre"
        return (f"{self.name} (3x3, three pieces each, placed then moved {moves}; "
                f"{lines} win{opening}; a third repetition draws)")

    # -- positions -----------------------------------------------------------------------

    def initial(self) -> MorrisBoard:
        return MorrisBoard(self, 0, 0, True)

    def parse(self, text: object, *, to_move: object = None) -> MorrisBoard:
        from gameai.games.morris_text import parse

        return parse(self, text, to_move)

    def parse_moves(self, text: object) -> MorrisBoard:
        """The position after ``text``: moves from the empty board separated by spaces or
        commas, a placement as its point numbered 1-9 row by row (seed 000's numbering), a
        movement as ``from-to`` (``"5 1 9 3 7 2 9-6"``); the draw rule applies on the way
        (:func:`gameai.games.morris_text.parse_moves`)."""
        from gameai.games.morris_text import parse_moves

        return parse_moves(self, text)

    def rules(self) -> dict[str, Any]:
        return {
            "pieces": PIECES,
            "neighbours": [[t for t in range(CELLS) if self.neighbours[f] >> t & 1]
                           for f in range(CELLS)],
            "lines": [[c for c in range(CELLS) if line >> c & 1] for line in self.lines],
            "barred_first_placement": [] if self.centre_opening else [CENTRE],
            "draw_rule": "threefold repetition: a position that occurs for the third time "
                         "draws",
            "to_move": "required once all six pieces are down",
        }

    @cached_property
    def reachable(self) -> frozenset[int]:
        """The keys of every position reachable from the empty board (the exact test of
        :meth:`parse`; a few thousand)."""
        return frozenset(int(k) for k in self.state_graph().raw_keys)

    def state_graph(self, *, limit: int | None = None) -> StateGraph:
        return _graph(self)

    def solve(self, state: State, *, time_limit: float | None = None) -> Solution:
        from gameai.games.retrograde import solve_state

        return solve_state(self._board(state))

    def analyze(self) -> dict[str, Any]:
        from gameai.games.retrograde import analyze

        return analyze(self)

    def move_scores(self) -> tuple[U64, npt.NDArray[np.int16], npt.NDArray[np.bool_]]:
        from gameai.games.retrograde import move_scores

        return move_scores(self)

    def _board(self, state: State) -> MorrisBoard:
        from gameai.games.errors import GameError

        if not isinstance(state, MorrisBoard) or state.game is not self:
            raise GameError(f"not a position of {self.name}")
        return state


@dataclass(frozen=True, slots=True)
class MorrisBoard(State):
    """A morris position: one bitmask of points per side and whose turn it is."""

    game: MorrisGame
    x: int
    o: int
    x_to_move: bool

    @property
    def to_move(self) -> str:
        return "X" if self.x_to_move else "O"

    @property
    def key(self) -> int:
        return _base3(self.x, self.o) + (0 if self.x_to_move else SIDE_KEY)

    def canonical(self) -> tuple[int, int]:
        side = 0 if self.x_to_move else SIDE_KEY
        best, best_sym = -1, 0
        for sym, perm in enumerate(SYMMETRIES):
            key = _base3(_move_mask(self.x, perm), _move_mask(self.o, perm)) + side
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
                raise IllegalMove(f"point {_point(to)} is taken")
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
                raise IllegalMove(f"the piece at {_point(frm)} is "
                                  f"{'O' if self.x_to_move else 'X'}'s; {side} is to move")
            if not mine >> frm & 1:
                raise IllegalMove(f"there is no piece at {_point(frm)} to move")
            if (self.x | self.o) >> to & 1:
                raise IllegalMove(f"point {_point(to)} is taken")
            if not game.neighbours[frm] >> to & 1:
                raise IllegalMove(f"point {_point(to)} is not next to {_point(frm)}: a "
                                  "piece moves one step along a row or a column")
            mine = (mine & ~(1 << frm)) | 1 << to
        if self.x_to_move:
            return MorrisBoard(game, mine, self.o, False)
        return MorrisBoard(game, self.x, mine, True)


def find(key: str) -> MorrisGame | None:
    """The morris game a normalised name (lowercase, stripped) names, or None."""
    match = _NAME.fullmatch(key)
    if match is None:
        return None
    options = re.findall(r"-anywhere|-no-diagonals|-no-cent(?:re|er)-opening", match.group(2))
    options = [o.replace("center", "centre") for o in options]
    if len(set(options)) != len(options):
        raise UnknownGame(f"game {key!r} names an option twice")
    anywhere = match.group(1) == "nine-holes" or "-anywhere" in options
    diagonals = "-no-diagonals" not in options
    centre = "-no-centre-opening" not in options
    return _make(anywhere, diagonals, centre)


_CACHE: dict[tuple[bool, bool, bool], MorrisGame] = {}


def _make(anywhere: bool, diagonals_win: bool, centre_opening: bool) -> MorrisGame:
    params = (anywhere, diagonals_win, centre_opening)
    game = _CACHE.get(params)
    if game is None:
        name = ("nine-holes" if anywhere else "three-mens-morris") \
            + ("" if diagonals_win else "-no-diagonals") \
            + ("" if centre_opening else "-no-centre-opening")
        game = _CACHE.setdefault(params, MorrisGame(name, anywhere, diagonals_win,
                                                    centre_opening))
    return game


def variants() -> tuple[MorrisGame, ...]:
    """Every combination of the options: eight games."""
    return tuple(_make(a, d, c) for a in (False, True) for d in (True, False)
                 for c in (True, False))


# -- helpers -----------------------------------------------------------------------------

def _point(index: int) -> str:
    return f"(row {index // SIZE}, column {index % SIZE})"


def _base3(x: int, o: int) -> int:
    key = 0
    for i in range(CELLS - 1, -1, -1):
        key = key * 3 + (1 if x >> i & 1 else 2 if o >> i & 1 else 0)
    return key


def _move_mask(mask: int, perm: tuple[int, ...]) -> int:
    out = 0
    while mask:
        low = mask & -mask
        out |= 1 << perm[low.bit_length() - 1]
        mask ^= low
    return out


def _graph(game: MorrisGame) -> StateGraph:
    from gameai.games.morris_graph import morris_graph

    return _GRAPHS.get(game) or _GRAPHS.setdefault(game, morris_graph(game))


_GRAPHS: dict[MorrisGame, StateGraph] = {}
