"""The Hexapawn family: one game, ``hexapawn``, plugged into gameai from outside.

**Rules** (Martin Gardner, *Scientific American*, March 1962). A 3x3 board in the seed's
pattern (``X``, ``O``, ``-``, rows from the top joined by ``|``). X has three pawns on the
bottom row and moves first; O has three on the top row: ``OOO|---|XXX``. A pawn moves one
square straight forward (X up, O down) to an empty square, or one square diagonally forward
to capture an enemy pawn, which leaves the board. A side wins by getting a pawn to the far
row, by capturing every enemy pawn, or when its opponent, to move, has no legal move. Every
move advances a pawn, so no position repeats and no game is longer than 7 moves; there are
no draws. With perfect play the second player, O, wins.

**The family** is this module: the ``NAMES``, ``PATTERNS`` and :func:`find` that gameai's
registry asks of every family (:mod:`gameai.games.registry`). The distribution names it
under the ``gameai.games`` entry point group; nothing in gameai names Hexapawn.

**Actions** (:mod:`gameai.games.interface`): every move is a movement ``from -> to``, action
``9 + from * 9 + to``, cells numbered 0-8 row by row; 90 action ids, of which the
placements 0-8 are never legal.

**Whose turn.** Captures break the counts, but every position that legal play reaches
arises with one side to move only, so the board tells: ``to_move`` may be left out, and a
given one must agree.

**Keys** are seed 003's base-3 key of the cells plus ``3**9`` when O is to move; the one
symmetry is the left-right mirror.

**Solving** is :mod:`gameai.games.retrograde`'s, over the state graph of every position
reachable from the start (the interface's generic walk builds it).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt
from gameai.games.errors import GameError
from gameai.games.graph import StateGraph
from gameai.games.interface import U64, Game, Solution, State

from gameai_hexapawn.board import CELLS, PAWNS, SIZE, SYMMETRIES, HexapawnBoard, initial

NAMES = ("hexapawn",)
PATTERNS = ""  # no names made from parameters
# no game is longer than 7 plies (each pawn advances at most twice, and a second advance
# reaches the far row): cells + 1, as for the m,n,k games, is a safe score scale
BIG = CELLS + 1


class HexapawnGame(Game):
    """Hexapawn. Build it with :func:`gameai.games.get_game`; immutable."""

    name = "hexapawn"
    rows = cols = SIZE
    k = 0  # no line wins
    gravity = False

    def __repr__(self) -> str:
        return "HexapawnGame()"

    @property
    def num_actions(self) -> int:
        return CELLS + CELLS * CELLS

    @property
    def big(self) -> int:
        return BIG

    @property
    def symmetries(self) -> tuple[tuple[int, ...], ...]:
        return SYMMETRIES

    def describe(self) -> str:
        return ("hexapawn (3x3, three pawns a side; a pawn steps straight forward to an "
                "empty square or captures diagonally forward; the far row, taking every "
                "enemy pawn or leaving the opponent no move wins)")

    def rules(self) -> dict[str, Any]:
        return {
            "pieces": PAWNS,
            "forward": {"X": -1, "O": 1},  # rows a pawn advances: X up, O down
            "captures": "diagonally forward; the captured pawn leaves the board",
            "goal": "a pawn on the far row, every enemy pawn captured, or the opponent "
                    "without a move",
            "to_move": "optional: every reachable position arises with one side to move",
        }

    # -- positions -----------------------------------------------------------------------

    def initial(self) -> HexapawnBoard:
        return initial(self)

    def parse(self, text: object, *, to_move: object = None) -> HexapawnBoard:
        from gameai_hexapawn.text import parse

        return parse(self, text, to_move, reachable=self.reachable.__contains__)

    def parse_moves(self, text: object) -> HexapawnBoard:
        """The position after ``text``: pawn moves ``from-to`` from the start, the points
        numbered 1-9 row by row (``"8-5 3-5 9-5"``); the empty list is the start
        (:func:`gameai_hexapawn.text.parse_moves`)."""
        from gameai_hexapawn.text import parse_moves

        return parse_moves(self, text)

    @cached_property
    def reachable(self) -> frozenset[int]:
        """The key of every position legal play reaches from the start (a few hundred)."""
        return frozenset(int(k) for k in self.state_graph().raw_keys)

    # -- whole-game views: the retrograde solver over the state graph ------------------

    def state_graph(self, *, limit: int | None = None) -> StateGraph:
        return self._graph

    @cached_property
    def _graph(self) -> StateGraph:
        return super().state_graph()

    def solve(self, state: State, *, time_limit: float | None = None) -> Solution:
        from gameai.games.retrograde import solve_state

        if not isinstance(state, HexapawnBoard) or state.game is not self:
            raise GameError(f"not a position of {self.name}")
        return solve_state(state)

    def move_scores(self) -> tuple[U64, npt.NDArray[np.int16], npt.NDArray[np.bool_]]:
        from gameai.games.retrograde import move_scores

        return move_scores(self)

    def analyze(self) -> dict[str, Any]:
        from gameai.games.retrograde import analyze

        return analyze(self)


HEXAPAWN = HexapawnGame()


def find(key: str) -> HexapawnGame | None:
    """The game a normalised name (lowercase, stripped) names, or None."""
    return HEXAPAWN if key == "hexapawn" else None
