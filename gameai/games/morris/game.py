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

Reading positions and move lists (and their precise errors): :mod:`gameai.games.morris.text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from gameai.games.errors import UnknownGame
from gameai.games.graph import StateGraph, assemble
from gameai.games.interface import U64, Game, Solution, State
from gameai.games.morris.board import MorrisBoard, initial
from gameai.games.morris.geometry import CELLS, CENTRE, PIECES, Geometry

NAMES = ("three-mens-morris", "nine-holes")
PATTERNS = ""  # the options are in the module docstring
_OPTIONS = ("-anywhere", "-no-diagonals", "-no-centre-opening")
_NAME = re.compile(r"(three-mens-morris|nine-holes)((?:-anywhere|-no-diagonals"
                   r"|-no-cent(?:re|er)-opening)*)")



@dataclass(frozen=True)
class MorrisGame(Geometry, Game):
    """One morris variant. Build it with :func:`gameai.games.get_game`; immutable."""

    cyclic: ClassVar[bool] = True
    walker: ClassVar[str] = "position_graph"  # a state graph of a few thousand positions

    def describe(self) -> str:
        moves = "to any empty point" if self.anywhere else "to an orthogonal neighbour"
        lines = "rows, columns and diagonals" if self.diagonals_win else "rows and columns"
        opening = "" if self.centre_opening else "; X may not open in the centre"
        return (f"{self.name} (3x3, three pieces each, placed then moved {moves}; "
                f"{lines} win{opening}; a third repetition draws)")

    # -- positions -----------------------------------------------------------------------

    def initial(self) -> MorrisBoard:
        return initial(self)

    def parse(self, text: object, *, to_move: object = None) -> MorrisBoard:
        from gameai.games.morris.text import parse

        return parse(self, text, to_move, reachable=self.reachable)

    def parse_moves(self, text: object) -> MorrisBoard:
        """The position after ``text``: moves from the empty board separated by spaces or
        commas, a placement as its point numbered 1-9 row by row (seed 000's numbering), a
        movement as ``from-to`` (``"5 1 9 3 7 2 9-6"``); the draw rule applies on the way
        (:func:`gameai.games.morris.text.parse_moves`)."""
        from gameai.games.morris.text import parse_moves

        return parse_moves(self, text)

    def parse_game(self, text: object) -> list[int]:
        from gameai.games.morris.text import play_moves

        return play_moves(self, text)[1]

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


def _graph(game: MorrisGame) -> StateGraph:
    from gameai.games.morris.graph import walk

    found = _GRAPHS.get(game)
    if found is None:
        found = _GRAPHS.setdefault(game, assemble(game, *walk(game)))
    return found


_GRAPHS: dict[MorrisGame, StateGraph] = {}
