"""The m,n,k family's game: a ``rows x cols`` board, ``k`` in a row wins, X moves first.

A game is its four parameters (:class:`~gameai.games.mnk.geometry.Geometry`); it implements
:class:`gameai.games.interface.Game`, its action ids are cell indices, and its positions are
:class:`gameai.games.mnk.board.Board`. A position is a pair of bitmasks, one per player, so
the rules are integer arithmetic. This module is the top of the family: it fronts the
board, the solvers, the statistics and the batch parser, and none of them imports it.

Named games:

    tictactoe       3x3, k=3
    four-in-a-row   4x4, k=4 (seed 002)
    mnk-4x5-4       4 rows x 5 columns, k=4 (seed 004's larger board)
    connect-four    6 rows x 7 columns, k=4, with gravity

Any ``mnk-RxC-K`` and ``connect-RxC-K`` (gravity) parses too (:func:`find`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from gameai.games.errors import InvalidBoard, UnknownGame
from gameai.games.interface import U64, Batch, Game, OptimalMoves, OwnSolvers, Solution, State
from gameai.games.mnk.geometry import MAX_CELLS, Geometry

if TYPE_CHECKING:
    from gameai.games.mnk.board import Board
    from gameai.games.mnk.search import Searcher

_NAMED = {
    "tictactoe": (3, 3, 3, False),
    "four-in-a-row": (4, 4, 4, False),
    "connect-four": (6, 7, 4, True),
}
_NAME_OF = {params: name for name, params in _NAMED.items()}
_PATTERN = re.compile(r"(mnk|connect)-(\d+)x(\d+)-(\d+)")
_DIGITS = 6  # sizes longer than this are refused as too large without parsing them


@dataclass(frozen=True)
class MnkGame(Geometry, Game):
    """One game of the family: its :class:`Geometry` and the game interface over it. Find
    it by name with :func:`find` (or :func:`gameai.games.get_game`); it is immutable and
    hashable, one object per name."""

    cell_kernels: ClassVar[bool] = True
    walker: ClassVar[str] = "bitboard"

    @property
    def num_actions(self) -> int:
        return self.cells

    def split_action(self, action: int) -> tuple[int | None, int]:
        return None, action

    @cached_property
    def action_symmetries(self) -> tuple[tuple[int, ...], ...]:
        """Actions are cells, so they move as the cells do."""
        return self.symmetries

    def describe(self) -> str:
        kind = "gravity, " if self.gravity else ""
        return f"{self.name} ({self.rows}x{self.cols}, {kind}{self.k} in a row)"

    # -- the interface -------------------------------------------------------------------

    def initial(self) -> Board:
        from gameai.games.mnk.board import Board

        return Board.empty(self)

    def parse(self, text: object, *, to_move: object = None) -> Board:
        from gameai.games.mnk.board import Board

        board = Board.parse(self, text)
        if to_move is not None and to_move != "":
            if to_move not in ("X", "O"):
                raise InvalidBoard(f"to_move: must be 'X' or 'O', got {_shown(to_move)}",
                                   field="to_move")
            if to_move != board.to_move:
                raise InvalidBoard(f"to_move: {to_move!r} is impossible: {board.to_move} is "
                                   "to move on this board (the counts tell: X moves first)",
                                   field="to_move")
        return board

    def parse_moves(self, text: object) -> Board:
        """Gravity games: the position after a column sequence (``"4453"``, columns from 1;
        :mod:`gameai.games.mnk.columns`). Other m,n,k games take a board only."""
        if not self.gravity:
            return super().parse_moves(text)  # type: ignore[return-value]
        from gameai.games.mnk.columns import parse_moves

        return parse_moves(self, text)

    def parse_game(self, text: object) -> list[int]:
        if not self.gravity:
            return super().parse_game(text)
        from gameai.games.mnk.columns import play_columns

        return play_columns(self, text)[1]

    def solve(self, state: State, *, time_limit: float | None = None) -> Solution:
        from gameai.games.mnk.solver import solve

        return solve(self._board(state), time_limit=time_limit)

    def own_solvers(self, *, table_bits: int) -> OwnSolvers | None:
        from gameai.games.mnk import search
        from gameai.games.mnk.solver import searches

        if not searches(self):
            return None
        searcher = search.Searcher(self, tt_bits=table_bits)
        return OwnSolvers(
            lambda state, seconds: self._optimal(searcher, state, seconds),
            lambda state, seconds: searcher.solve(self._board(state), time_limit=seconds))

    def prove_optimal(self, state: State, *, time_limit: float | None = None
                      ) -> OptimalMoves:
        from gameai.games.mnk import search
        from gameai.games.mnk.solver import searches

        if not searches(self):  # an enumerated table: every move's score is at hand
            return super().prove_optimal(state, time_limit=time_limit)
        return self._optimal(search.searcher(self), state, time_limit)

    def _optimal(self, searcher: Searcher, state: State, seconds: float | None
                 ) -> OptimalMoves:
        score, moves = searcher.optimal_moves(self._board(state), time_limit=seconds)
        return OptimalMoves(state, (score > 0) - (score < 0), moves)

    def optimal_actions(self, state: State, *, time_limit: float | None = None
                        ) -> tuple[int, ...]:
        from gameai.games.mnk import search
        from gameai.games.mnk.solver import searches

        if not searches(self):
            return super().optimal_actions(state, time_limit=time_limit)
        board = self._board(state)
        return search.searcher(self).optimal_moves(board, time_limit=time_limit)[1]

    def non_losing_actions(self, state: State, *, time_limit: float | None = None
                           ) -> tuple[int, ...]:
        from gameai.games.mnk import search
        from gameai.games.mnk.solver import searches

        if not searches(self):
            return super().non_losing_actions(state, time_limit=time_limit)
        board = self._board(state)
        return search.searcher(self).non_losing_moves(board, time_limit=time_limit)

    def forced_win_actions(self, state: State, *, time_limit: float | None = None
                           ) -> tuple[int, ...]:
        from gameai.games.mnk import search
        from gameai.games.mnk.solver import searches

        if not searches(self):
            return super().forced_win_actions(state, time_limit=time_limit)
        return search.searcher(self).winning_moves(self._board(state), time_limit=time_limit)

    def analyze(self) -> dict[str, Any]:
        from gameai.games.mnk.stats import analyze

        return analyze(self)

    def move_scores(self) -> tuple[U64, npt.NDArray[np.int16], npt.NDArray[np.bool_]]:
        from gameai.games.mnk.positions import enumerate_positions
        from gameai.games.mnk.scores import back_up
        from gameai.games.mnk.solver import score_layers

        positions = enumerate_positions(self.initial())
        scores = score_layers(positions)
        keys, rows, legal = [], [], []
        for d, layer in enumerate(positions.layers[:-1]):
            live = ~layer.over
            children = layer.children[live]
            keys.append(layer.keys[live])
            rows.append(back_up(self, scores[d + 1][np.maximum(children, 0)]))
            legal.append(children >= 0)
        return np.concatenate(keys), np.concatenate(rows), np.concatenate(legal)

    def parse_batch(self, texts: Sequence[object], *, to_move: object = None) -> Batch:
        """Parsed and checked with numpy (:mod:`gameai.games.mnk.batch`), no board objects:
        a fraction of a microsecond a board."""
        from gameai.games.mnk.batch import parse_masks
        from gameai.games.mnk.board import playable_masks
        from gameai.games.mnk.keys import MAX_VECTOR_CELLS, canonical_keys_and_syms, column_keys

        x, o = parse_masks(self, texts)
        sides = np.where(np.bitwise_count(x) == np.bitwise_count(o), "X", "O")
        if to_move is not None and to_move != "":
            if to_move not in ("X", "O"):
                raise InvalidBoard(f"to_move: must be 'X' or 'O', got {_shown(to_move)}",
                                   field="to_move")
            wrong = np.flatnonzero(sides != to_move)
            if len(wrong):
                i = int(wrong[0])
                raise InvalidBoard(f"to_move: {to_move!r} is impossible for boards[{i}]: "
                                   f"{sides[i]} is to move there (the counts tell: X moves "
                                   "first)", field="to_move")
        if self.cells <= MAX_VECTOR_CELLS or column_keys(self):
            keys, syms = canonical_keys_and_syms(self, x, o)
        else:  # no 64-bit key: only models that read the masks answer these
            keys, syms = np.zeros(len(x), np.uint64), np.zeros(len(x), np.int8)
        shifts = np.arange(self.cells, dtype=np.uint64)
        legal = ((playable_masks(self, x | o)[:, None] >> shifts) & np.uint64(1)) == 1
        return Batch(keys, syms, legal, sides.tolist(), (x, o))

    def canonical_many(self, states: Sequence[State]) -> tuple[U64, npt.NDArray[np.int8]]:
        from gameai.games.mnk.keys import canonical_keys_and_syms

        x, o = self._masks(states)
        return canonical_keys_and_syms(self, x, o)

    def legal_many(self, states: Sequence[State]) -> npt.NDArray[np.bool_]:
        from gameai.games.mnk.board import playable_masks

        x, o = self._masks(states)
        shifts = np.arange(self.cells, dtype=np.uint64)
        return ((playable_masks(self, x | o)[:, None] >> shifts) & np.uint64(1)) == 1

    def _masks(self, states: Sequence[State]) -> tuple[U64, U64]:
        boards = [self._board(s) for s in states]
        x = np.fromiter((b.x for b in boards), dtype=np.uint64, count=len(boards))
        o = np.fromiter((b.o for b in boards), dtype=np.uint64, count=len(boards))
        return x, o

    def _board(self, state: State) -> Board:
        from gameai.games.errors import GameError
        from gameai.games.mnk.board import Board

        if not isinstance(state, Board) or state.game is not self:
            raise GameError(f"not a position of {self.name}")
        return state


def as_mnk(game: Game) -> MnkGame:
    """``game`` as an m,n,k game, for code written for positions as two bitmasks (the
    m,n,k kernels and their vectorised helpers).

    Raises:
        GameError: ``game`` is of another family.
    """
    from gameai.games.errors import GameError

    if not isinstance(game, MnkGame):
        raise GameError(f"{game.name}: positions of this game are not two bitmasks of "
                        "placed pieces (this path is for m,n,k games)")
    return game


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


NAMES = (*_NAMED, "mnk-4x5-4")
PATTERNS = "mnk-RxC-K (R rows, C columns, K in a row) or connect-RxC-K (with gravity)"


def find(key: str) -> MnkGame | None:
    """The m,n,k game a normalised name (lowercase, stripped) names, or None when it is no
    name of this family. ``mnk-3x3-3`` is ``tictactoe``: one object per game.

    Raises:
        UnknownGame: the name has this family's form but its sizes are out of range.
    """
    if key in _NAMED:
        return _make(*_NAMED[key])
    match = _PATTERN.fullmatch(key)
    if not match:
        return None
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


_CACHE: dict[tuple[int, int, int, bool], MnkGame] = {}


def _make(rows: int, cols: int, k: int, gravity: bool) -> MnkGame:
    params = (rows, cols, k, gravity)
    game = _CACHE.get(params)
    if game is None:
        name = _NAME_OF.get(params, f"{'connect' if gravity else 'mnk'}-{rows}x{cols}-{k}")
        game = _CACHE.setdefault(params, MnkGame(name, rows, cols, k, gravity))
    return game
