"""The m,n,k family: a ``rows x cols`` board, ``k`` in a row wins, X moves first; and
:func:`get_game`, which finds a game of any family by name.

A game is its four parameters; it implements :class:`gameai.games.interface.Game`, its
action ids are cell indices, and its positions are :class:`gameai.games.board.Board`.
Cells are numbered row-major from the top-left corner (``index = row * cols + col``), as
the seed's ``(i, j)``. A position is a pair of bitmasks, one per player, so the rules
below are integer arithmetic.

Named games:

    tictactoe       3x3, k=3
    four-in-a-row   4x4, k=4 (seed 002)
    mnk-4x5-4       4 rows x 5 columns, k=4 (seed 004's larger board)
    connect-four    6 rows x 7 columns, k=4, with gravity

Any ``mnk-RxC-K`` and ``connect-RxC-K`` (gravity) parses too. The morris family's names
are in :mod:`gameai.games.morris`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from gameai.games import morris
from gameai.games.errors import InvalidBoard, UnknownGame
from gameai.games.interface import U64, Batch, Game, State

if TYPE_CHECKING:
    from gameai.games.board import Board
    from gameai.games.solver import Solution

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
class MnkGame(Game):
    """One game of the family. Build it with :func:`get_game`; it is immutable and hashable."""

    name: str
    rows: int
    cols: int
    k: int
    gravity: bool = False
    cell_kernels: ClassVar[bool] = True

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    @property
    def num_actions(self) -> int:
        return self.cells

    @property
    def big(self) -> int:
        return self.cells + 1

    def split_action(self, action: int) -> tuple[int | None, int]:
        return None, action

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
    def action_symmetries(self) -> tuple[tuple[int, ...], ...]:
        """Actions are cells, so they move as the cells do."""
        return self.symmetries

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

    # -- the interface -------------------------------------------------------------------

    def initial(self) -> Board:
        from gameai.games.board import Board

        return Board.empty(self)

    def parse(self, text: object, *, to_move: object = None) -> Board:
        from gameai.games.board import Board

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
        :mod:`gameai.games.columns`). Other m,n,k games take a board only."""
        if not self.gravity:
            return super().parse_moves(text)  # type: ignore[return-value]
        from gameai.games.columns import parse_moves

        return parse_moves(self, text)

    def solve(self, state: State, *, time_limit: float | None = None) -> Solution:
        from gameai.games.solver import solve

        return solve(self._board(state), time_limit=time_limit)

    def optimal_actions(self, state: State, *, time_limit: float | None = None
                        ) -> tuple[int, ...]:
        from gameai.games import search
        from gameai.games.solver import searches

        if not searches(self):
            return super().optimal_actions(state, time_limit=time_limit)
        board = self._board(state)
        return search.searcher(self).optimal_moves(board, time_limit=time_limit)[1]

    def non_losing_actions(self, state: State, *, time_limit: float | None = None
                           ) -> tuple[int, ...]:
        from gameai.games import search
        from gameai.games.solver import searches

        if not searches(self):
            return super().non_losing_actions(state, time_limit=time_limit)
        board = self._board(state)
        return search.searcher(self).non_losing_moves(board, time_limit=time_limit)

    def analyze(self) -> dict[str, Any]:
        from gameai.games.stats import analyze

        return analyze(self)

    def move_scores(self) -> tuple[U64, npt.NDArray[np.int16], npt.NDArray[np.bool_]]:
        from gameai.games.positions import enumerate_positions
        from gameai.games.solver import back_up, score_layers

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
        """Parsed and checked with numpy (:mod:`gameai.games.mnk_batch`), no board objects:
        a fraction of a microsecond a board."""
        from gameai.games.keys import MAX_VECTOR_CELLS, canonical_keys_and_syms, column_keys
        from gameai.games.mnk_batch import parse_masks
        from gameai.games.positions import playable_masks

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
        from gameai.games.keys import canonical_keys_and_syms

        x, o = self._masks(states)
        return canonical_keys_and_syms(self, x, o)

    def legal_many(self, states: Sequence[State]) -> npt.NDArray[np.bool_]:
        from gameai.games.positions import playable_masks

        x, o = self._masks(states)
        shifts = np.arange(self.cells, dtype=np.uint64)
        return ((playable_masks(self, x | o)[:, None] >> shifts) & np.uint64(1)) == 1

    def _masks(self, states: Sequence[State]) -> tuple[U64, U64]:
        boards = [self._board(s) for s in states]
        x = np.fromiter((b.x for b in boards), dtype=np.uint64, count=len(boards))
        o = np.fromiter((b.o for b in boards), dtype=np.uint64, count=len(boards))
        return x, o

    def _board(self, state: State) -> Board:
        from gameai.games.board import Board
        from gameai.games.errors import GameError

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


def known_games() -> tuple[str, ...]:
    """The named games, for help texts and error messages."""
    return (*_NAMED, "mnk-4x5-4", *morris.NAMED)


def get_game(name: str) -> Game:
    """The game called ``name``: a named game, ``mnk-RxC-K``, ``connect-RxC-K`` or a morris
    game (:mod:`gameai.games.morris`).

    Names are normalised: ``mnk-3x3-3`` is ``tictactoe``, and a game is one object per name.

    Raises:
        UnknownGame: the name matches nothing, or its sizes are out of range.
    """
    if not isinstance(name, str):
        raise UnknownGame(f"game name must be text, got {type(name).__name__}")
    key = name.strip().lower()
    found = morris.find(key)
    if found is not None:
        return found
    return get_mnk_game(name)


def get_mnk_game(name: str) -> MnkGame:
    """The m,n,k game called ``name`` (for code that runs the m,n,k kernels themselves:
    their benchmarks and the layered solver).

    Raises:
        UnknownGame: the name is no m,n,k game, or its sizes are out of range.
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


_CACHE: dict[tuple[int, int, int, bool], MnkGame] = {}


def _make(rows: int, cols: int, k: int, gravity: bool) -> MnkGame:
    params = (rows, cols, k, gravity)
    game = _CACHE.get(params)
    if game is None:
        name = _NAME_OF.get(params, f"{'connect' if gravity else 'mnk'}-{rows}x{cols}-{k}")
        game = _CACHE.setdefault(params, MnkGame(name, rows, cols, k, gravity))
    return game
