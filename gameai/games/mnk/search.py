"""The exact solver by search: negamax with alpha-beta on bitboards, for boards past tables.

For m,n,k games with or without gravity (Connect Four, ``mnk-4x5-4``) whose padded
bitboard, ``(rows + 1) * cols`` bits, fits in 64. The numba kernels
(:mod:`gameai.games.mnk.search_kernel`) follow John Tromp's and Pascal Pons's Connect Four
solvers: only moves that leave the opponent no immediate win are searched, moves are tried
by how many winning cells they create, the window is narrowed by null-window searches, and
a transposition table (canonical under the left-right mirror) keeps a lower and an upper
bound per position, with enhanced transposition cutoffs.

Scores are :mod:`gameai.games.mnk.solver`'s: from the side to move, a win in ``t`` plies scores
``big - t``, a loss ``t - big``, a draw 0; so a faster win is better and a slower loss too.

A search runs in slices of nodes; between slices the clock is read, and past the time
limit :class:`SearchTimeout` is raised at once, carrying what was proved (each move's
bounds). The table survives, so asking again resumes where the search stopped.
"""

from __future__ import annotations

import contextlib
import mmap
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from gameai.games import budget
from gameai.games.budget import Estimate
from gameai.games.errors import GameError, GameOver, IllegalMove, TooLarge
from gameai.games.interface import MoveOutcome, Solution
from gameai.games.mnk import search_kernel as kern
from gameai.games.mnk.board import Board
from gameai.games.mnk.geometry import Geometry, geometry_of
from gameai.games.mnk.scores import describe_score

DEFAULT_TT_BITS = 22  # 4M slots, 64 MB
SLOT_BYTES = 16  # the position's key and a word with its bounds (a third word on non-gravity
# boards wider than 32 padded bits)
HUGE_PAGE = 2 << 20  # the table's alignment
MIN_TT_BITS = 16  # 1 MB: the smallest table the shared searcher settles for
FIRST_SLICE = 100_000  # nodes before the clock is first read
MIN_SLICE = 2_000  # nodes a slice takes at least (about half a millisecond)
ASSUMED_RATE = 3e6  # nodes per second before a slice was timed
SLICE_SECONDS = 0.05  # later slices are sized to take about this long
PROGRESS_SECONDS = 1.0  # ... or this long without a deadline, between progress reports
# Below these plies the table keys are canonical under the mirror, and above this many
# empty cells children are probed for enhanced transposition cutoffs: deeper, both cost
# more time than the nodes they save (docs/solver.md).
MIRROR_PLIES = 12
ETC_LEFT = 28


Progress = Callable[[int, float, int, int], None]  # nodes, seconds, lower, upper bound


class SearchTimeout(TooLarge):
    """The search did not finish within its time limit.

    Attributes:
        partial: what was proved: each move's score bounds (:class:`PartialSolution`).
    """

    def __init__(self, message: str, partial: PartialSolution) -> None:
        super().__init__(message)
        self.partial = partial


@dataclass(frozen=True)
class MoveBounds:
    """A move and the bounds on its score proved so far (equal once exact)."""

    move: int
    lower: int
    upper: int

    @property
    def exact(self) -> bool:
        return self.lower == self.upper


@dataclass(frozen=True)
class PartialSolution:
    board: Board
    moves: tuple[MoveBounds, ...]
    seconds: float
    nodes: int

    def describe(self) -> str:
        game = self.board.game
        parts = []
        for mb in self.moves:
            where = _move_name(game, mb.move)
            if mb.exact:
                outcome, distance = describe_score(game, mb.lower, self.board)
                parts.append(f"{where} {outcome}" + (f" in {distance}" if outcome != "draw"
                                                     else ""))
            else:
                parts.append(f"{where} {_bound_text(mb.lower, mb.upper)}")
        return "; ".join(parts)


def _bound_text(lower: int, upper: int) -> str:
    if lower > 0:
        return "a win (length unknown)"
    if upper < 0:
        return "a loss (length unknown)"
    if lower == 0:
        return "at least a draw"
    if upper == 0:
        return "at most a draw"
    return "unknown"


def _move_name(game: Geometry, move: int) -> str:
    if game.gravity:
        return f"column {move % game.cols + 1}"
    return f"cell {move} (row {move // game.cols}, col {move % game.cols})"


class Proof(NamedTuple):
    """What :meth:`Searcher.prove_columns` proved of a position (a tuple: cheap to make)."""

    ply: int
    score: int  # ``big - t`` for a win in ``t`` plies, from the side to move
    best: tuple[int, ...]  # the optimal moves' columns (from 0), ascending
    nodes: int
    seconds: float


def _column_error(game: Geometry, columns: Sequence[int], status: int, number: int
                  ) -> IllegalMove:
    """The error :func:`gameai.games.mnk.columns.parse_moves` gives for the same moves:
    move ``number`` (from 1) was refused for ``status``."""
    column = columns[number - 1] + 1
    where = f"moves: move {number} ({column})"
    if status == kern.OUT_OF_RANGE:
        message = f"{where}: column {column} is out of range (columns are 1-{game.cols})"
    elif status == kern.COLUMN_FULL:
        message = f"{where}: column {column} is full"
    else:
        how = {kern.X_WON: "X won", kern.O_WON: "O won"}.get(status,
                                                            "the board was full (a draw)")
        message = f"{where}: the game was already over: {how} at move {number - 1}"
    error = IllegalMove(message)
    error.field = "moves"
    return error


def supports(game: object) -> bool:
    """Whether the search solves ``game``: an m,n,k game whose padded bitboard fits."""
    return isinstance(game, Geometry) and (game.rows + 1) * game.cols <= 64


class Searcher:
    """An alpha-beta solver for one game with its own transposition table.

    Args:
        game: an m,n,k game (gravity or not) with ``(rows + 1) * cols <= 64``.
        tt_bits: the table has ``2**tt_bits`` slots of 16 bytes (24 on non-gravity boards
            past 32 padded bits).
    Raises:
        TooLarge: the board does not fit the bitboard.
        OverBudget: the table would not fit the memory limit.
    """

    def __init__(self, game: Geometry, *, tt_bits: int = DEFAULT_TT_BITS) -> None:
        mnk = geometry_of(game)
        if not supports(mnk):
            raise TooLarge(f"{game.name}: the search needs (rows + 1) x cols <= 64 bits; "
                           f"{mnk.rows + 1} x {mnk.cols} is {(mnk.rows + 1) * mnk.cols}")
        if not 10 <= tt_bits <= 30:
            raise ValueError(f"tt_bits must be from 10 to 30, got {tt_bits}")
        wide = not mnk.gravity and 2 * (mnk.rows + 1) * mnk.cols > 64
        words = 3 if wide else 2
        budget.require(Estimate(f"the search table of {game.name}",
                                table_bytes(tt_bits, words)))
        self.game = mnk
        rows, cols, h = mnk.rows, mnk.cols, mnk.rows + 1
        column = (1 << rows) - 1
        self.board_mask = np.uint64(sum(column << (c * h) for c in range(cols)))
        self.bottom = np.uint64(sum(1 << (c * h) for c in range(cols)))
        self.shifts = np.array([1, h, h + 1, h - 1], dtype=np.int64)
        self.order = np.array(_move_order(mnk), dtype=np.uint64)
        # the bit of each row-major cell, and back
        self.cell_bit = [1 << ((i % cols) * h + rows - 1 - i // cols) for i in range(mnk.cells)]
        self.bit_cell = {b.bit_length() - 1: i for i, b in enumerate(self.cell_bit)}
        head = [0] * kern.G_ORDER
        head[kern.G_BOARD] = int(self.board_mask)
        head[kern.G_BOTTOM] = int(self.bottom)
        head[kern.G_H], head[kern.G_COLS], head[kern.G_ROWS] = h, cols, rows
        head[kern.G_K], head[kern.G_GRAVITY], head[kern.G_CELLS] = mnk.k, int(mnk.gravity), \
            mnk.cells
        head[kern.G_MIRROR], head[kern.G_ETC] = MIRROR_PLIES, max(0, mnk.cells - ETC_LEFT)
        head[kern.G_W], head[kern.G_WIDE] = h * cols, int(wide)
        head[kern.G_NORDER] = len(self.order)
        head[kern.G_CELLBITS] = kern.G_ORDER + len(self.order)
        self.geo = np.array([*head, *(int(m) for m in self.order), *self.cell_bit],
                            dtype=np.uint64)
        self.tt = _table(1 << tt_bits, words)  # key, bounds (, key)
        self.stats = np.zeros(kern.STATS, dtype=np.int64)
        self.stats[kern.EPOCH] = 1  # a zeroed slot is of epoch 0: empty
        self.nodes = 0  # every node searched since this searcher was made
        self.rate = 0.0  # nodes per second of the last timed slice
        self._lock = threading.Lock()
        self._big = mnk.big
        self._unbounded = np.int64(np.iinfo(np.int64).max)

    def clear(self) -> None:
        """Forget the transposition table (benchmarks time solves from nothing): a new
        epoch, in which every slot reads as empty; the memory is zeroed only when the
        epochs run out (after 2**40 clears)."""
        with self._lock:
            if self.stats[kern.EPOCH] >= (1 << 40) - 1:
                self.tt[:] = 0
                self.stats[kern.EPOCH] = 0
            self.stats[kern.EPOCH] += 1

    def warm(self) -> None:
        """Load (or compile) every kernel now and touch every page of the table, so that no
        timed call pays for either (a first touch of a huge page zeroes 2 MiB)."""
        with self._lock:
            step = max(1, 4096 // (8 * self.tt.shape[1]))  # a row every 4 KiB page
            touched = self.tt[::step, 0]
            np.bitwise_or(touched, 0, out=touched)  # a write: a read would map no page
            stats = self.stats
            full = np.uint64(int(self.game.full_mask))  # a finished board: no search
            kern.board_bounds(full, np.uint64(0), -self._big, self._big, self.geo, self.tt,
                              stats)
            stats[kern.NODES], stats[kern.BUDGET], stats[kern.ABORTED] = 0, 0, 0
            kern.solve_bounds(np.uint64(0), np.uint64(0), np.int64(0), np.int64(-self._big),
                              np.int64(self._big), self.geo, self.tt, stats)
            if self.game.gravity:  # a column out of range: refused before any search
                for wrong in (bytes([255]), np.array([-1], dtype=np.int64)):
                    kern.columns_position(wrong, self.geo)
                    kern.columns_bounds(wrong, np.int64(-self._big), np.int64(self._big),
                                        self.geo, self.tt, stats)
                    kern.columns_best(wrong, self.geo, self.tt, stats)
                kern.child_outcomes(np.uint64(0), np.uint64(0), np.int64(0), self.geo,
                                    np.empty(self.game.cols, dtype=np.int64))
            stats[kern.ABORTED] = 0

    # -- positions -----------------------------------------------------------------------

    def encode(self, board: Board) -> tuple[int, int, int]:
        """``(cur, mask, ply)``: the side to move's stones and all stones as bitboards."""
        own = board.x if board.to_move == "X" else board.o
        cur = mask = 0
        for i, bit in enumerate(self.cell_bit):
            if board.occupied >> i & 1:
                mask |= bit
                if own >> i & 1:
                    cur |= bit
        return cur, mask, board.ply

    # -- solving -------------------------------------------------------------------------

    def score(self, board: Board, *, time_limit: float | None = None,
              progress: Progress | None = None) -> int:
        """The exact score of ``board`` (``big - t`` for a win in ``t`` plies).

        Args:
            time_limit: seconds before :class:`SearchTimeout` (``None``: until solved).
            progress: called about every second with the nodes searched, the seconds
                spent and the score's bounds so far (long solves show they progress).
        Raises:
            GameOver: the game has ended.
            SearchTimeout: not proved within ``time_limit`` seconds.
        """
        if time_limit is None and progress is None:
            return self._score_now(board)
        self._check(board).require_playable()
        deadline = None if time_limit is None else time.perf_counter() + time_limit
        started, nodes = time.perf_counter(), self.nodes
        with self._lock:
            cur, mask, ply = self.encode(board)
            lo, hi = self._bounds(cur, mask, ply, deadline, progress)
        if lo != hi:
            partial = PartialSolution(board, (), time.perf_counter() - started,
                                      self.nodes - nodes)
            raise SearchTimeout(f"{self.game.name}: not solved within {time_limit:g} s "
                                f"({partial.nodes:,} nodes): the score lies between "
                                f"{to_external(lo, ply)} and {to_external(hi, ply)}", partial)
        return to_external(lo, ply)

    def _score_now(self, board: Board) -> int:
        """:meth:`score` without a time limit: one kernel call encodes, checks and solves."""
        if not isinstance(board, Board) or board.game is not self.game:
            raise GameError(f"not a position of {self.game.name}")
        big = self._big
        with self._lock:
            status, ply, lo, _ = kern.board_bounds(np.uint64(board.x), np.uint64(board.o),
                                                   -big, big, self.geo, self.tt, self.stats)
            self.nodes += int(self.stats[kern.NODES])
        if status != kern.LIVE:
            raise GameOver(None if status == kern.FULL else "X" if status == kern.X_WON else "O")
        return to_external(int(lo), int(ply))

    def prove_columns(self, columns: Sequence[int], *, time_limit: float | None = None,
                      best: bool = True) -> Proof:
        """The exact score of the gravity position after ``columns`` (from 0) and, with
        ``best``, its optimal moves: the batch path (``gameai solve --positions``), from
        bitboards to bitboards without a :class:`Board` between.

        Raises:
            IllegalMove: a column out of range or full, or a move after the game ended.
            GameOver: the game has ended.
            SearchTimeout: not proved within ``time_limit`` seconds (no per-move bounds).
        """
        g = self.game
        if not g.gravity:
            raise GameError(f"{g.name}: positions by columns are for gravity games")
        started, nodes = time.perf_counter(), self.nodes
        deadline = None if time_limit is None else started + time_limit
        big = self._big
        try:
            array: bytes | np.ndarray = bytes(columns)  # no array to make: 2-3 us a call
        except ValueError:  # a column below 0 or past 255: refused in the kernel's order
            array = np.fromiter(columns, dtype=np.int64, count=len(columns))
        with self._lock:
            if deadline is None and best:  # one call: the moves, the score, the best moves
                status, number, c, m, lo, bits = kern.columns_best(array, self.geo, self.tt,
                                                                   self.stats)
                self.nodes += int(self.stats[kern.NODES])
                if status == kern.LIVE:
                    ply = len(columns)
                    return Proof(ply, to_external(int(lo), ply),
                                 tuple(c for c in range(g.cols) if bits >> c & 1),
                                 self.nodes - nodes, time.perf_counter() - started)
                hi = lo
            elif deadline is None:  # one call: the moves played, then the search
                status, number, c, m, lo, hi = kern.columns_bounds(array, -big, big, self.geo,
                                                                  self.tt, self.stats)
                self.nodes += int(self.stats[kern.NODES])
            else:
                status, number, c, m = kern.columns_position(array, self.geo)
            cur, mask, ply = int(c), int(m), len(columns)
            if status in (kern.OUT_OF_RANGE, kern.COLUMN_FULL) or number <= ply:
                raise _column_error(g, columns, int(status), int(number))
            if status != kern.LIVE:
                raise GameOver(None if status == kern.FULL else
                               "X" if status == kern.X_WON else "O")
            if deadline is not None:
                lo, hi = self._bounds(cur, mask, ply, deadline)
            lo, hi = int(lo), int(hi)
            optimal: list[int] = []
            if lo == hi and best:
                outcomes = np.empty(g.cols, dtype=np.int64)
                kern.child_outcomes(np.uint64(cur), np.uint64(mask), np.int64(ply),
                                    self.geo, outcomes)
                bottom, h = int(self.bottom), g.rows + 1
                for col, outcome in enumerate(outcomes.tolist()):
                    if outcome == -2:
                        continue
                    if outcome >= 0:  # a win at once, or the last cell's draw
                        if (big - ply - 1 if outcome == 1 else 0) == lo:
                            optimal.append(col)
                        continue
                    move = (mask + bottom) & (((1 << g.rows) - 1) << (col * h))
                    # the move reaches the score when the child's is at most -score
                    clo, chi = self._bounds(cur ^ mask, mask | move, ply + 1, deadline,
                                            lo=-lo, hi=-lo + 1)
                    if clo != chi and chi > -lo and clo <= -lo:
                        hi = big  # out of time: not every move settled
                        break
                    if chi <= -lo:
                        optimal.append(col)
        seconds = time.perf_counter() - started
        if lo != hi:
            from gameai.games.mnk.columns import parse_moves, to_moves

            board = parse_moves(g, to_moves(g, list(columns)))  # a live position: no error
            partial = PartialSolution(board, (), seconds, self.nodes - nodes)
            raise SearchTimeout(f"{g.name}: not solved within {time_limit:g} s "
                                f"({partial.nodes:,} nodes)", partial)
        return Proof(ply, to_external(lo, ply), tuple(optimal), self.nodes - nodes, seconds)

    def solve(self, board: Board, *, time_limit: float | None = None) -> Solution:
        """Every legal move's exact score, best first, and the position's.

        Raises:
            GameOver: the game has ended.
            SearchTimeout: not every move proved within ``time_limit`` seconds; carries
                each move's bounds.
        """
        self._check(board).require_playable()
        started, nodes = time.perf_counter(), self.nodes
        deadline = None if time_limit is None else started + time_limit
        big = self.game.big
        with self._lock:
            ply = board.ply
            moves = board.legal_moves()
            bounds: dict[int, tuple[int, int]] = {}
            # the moves that end the game first (they cost nothing), then centre first: a
            # budget that runs out still has an outer column's immediate win
            ranked = sorted(self._moves_by_centre(board), key=lambda m: m[3] is None)
            for move, twin, child, final in ranked:
                if twin is not None:
                    bounds[move] = bounds[twin]
                    continue
                if final is not None:
                    bounds[move] = (to_external(final, ply), to_external(final, ply))
                    continue
                ccur, cmask, cply = self.encode(child)
                clo, chi = self._bounds(ccur, cmask, cply, deadline)
                # the child's absolute bounds, negated, are the mover's; then made relative
                bounds[move] = (to_external(-chi, ply), to_external(-clo, ply))
                if clo != chi:
                    break  # out of time
        seconds = time.perf_counter() - started
        if len(bounds) < len(moves) or any(lo != hi for lo, hi in bounds.values()):
            partial = PartialSolution(
                board, tuple(MoveBounds(m, *bounds.get(m, (-big, big))) for m in moves),
                seconds, self.nodes - nodes)
            solved = sum(1 for mb in partial.moves if mb.exact)
            raise SearchTimeout(
                f"{self.game.name}: not solved within {time_limit:g} s ({partial.nodes:,} "
                f"nodes, {solved} of {len(moves)} moves exact): {partial.describe()}",
                partial)
        return _solution(board, {m: bounds[m][0] for m in moves})

    def optimal_moves(self, board: Board, *, time_limit: float | None = None
                      ) -> tuple[int, tuple[int, ...]]:
        """The position's exact score and its optimal moves (ascending), for perfect play.

        Cheaper than :meth:`solve`: after the position's own score, each move needs only one
        null-window search ("is it at least as good?") instead of its exact score.

        Raises:
            GameOver: the game has ended.
            SearchTimeout: not settled within ``time_limit`` seconds (its ``partial`` has
                no per-move bounds).
        """
        return self._moves_at_least(board, None, time_limit)

    def non_losing_moves(self, board: Board, *, time_limit: float | None = None
                         ) -> tuple[int, ...]:
        """The moves whose exact outcome is a win or a draw (ascending; empty when every
        move loses), each settled by one null-window search around a draw.

        Raises:
            GameOver: the game has ended.
            SearchTimeout: not settled within ``time_limit`` seconds.
        """
        return self._moves_at_least(board, 0, time_limit)[1]

    def winning_moves(self, board: Board, *, time_limit: float | None = None
                      ) -> tuple[int, ...]:
        """The moves whose exact outcome is a win, however slow (ascending; empty when
        none wins), each settled by one null-window search around the slowest win.

        Raises:
            GameOver: the game has ended.
            SearchTimeout: not settled within ``time_limit`` seconds.
        """
        return self._moves_at_least(board, 1 + board.ply, time_limit)[1]

    def decided_within(self, board: Board, plies: int) -> bool:
        """Whether perfect play ends ``board``'s game in a win or a loss within ``plies``
        plies (two null-window searches: cheaper than the exact score when it is not).

        Raises:
            GameOver: the game has ended.
        """
        self._check(board).require_playable()
        big = self._big
        with self._lock:
            cur, mask, ply = self.encode(board)
            for external in (big - plies, -(big - plies)):
                med = from_external(external, ply)
                if external > 0:  # a win within: the score is at least ``med``
                    lo, hi = self._bounds(cur, mask, ply, None, lo=med - 1, hi=med)
                    if lo >= med:
                        return True
                else:  # a loss within: the score is at most ``med``
                    lo, hi = self._bounds(cur, mask, ply, None, lo=med, hi=med + 1)
                    if hi <= med:
                        return True
        return False

    def _moves_at_least(self, board: Board, floor: int | None, time_limit: float | None
                        ) -> tuple[int, tuple[int, ...]]:
        """``(score, moves)``: with ``floor=None`` the exact score and the moves reaching
        it; else ``floor`` and the moves whose external score is at least ``floor`` (0: the
        moves that do not lose; a win's external score depends on the ply, so "any win"
        is ``floor = 1 + ply``)."""
        self._check(board).require_playable()
        started, nodes = time.perf_counter(), self.nodes
        deadline = None if time_limit is None else started + time_limit
        with self._lock:
            ply = board.ply
            cur, mask, _ = self.encode(board)
            moves = board.legal_moves()
            if floor is None:
                lo, hi = self._bounds(cur, mask, ply, deadline)
                if lo != hi:
                    self._timeout(board, started, nodes, time_limit, {}, moves,
                                  to_external(hi, ply))
                target = lo  # absolute, from the side to move
            else:
                target = from_external(floor, ply)
            good: dict[int, bool] = {}
            for move, twin, child, final in self._moves_by_centre(board):
                if twin is not None:
                    good[move] = good[twin]
                    continue
                if final is not None:
                    good[move] = final >= target
                    continue
                ccur, cmask, cply = self.encode(child)
                # the mover's score is at least the target when the child's is at most -target
                med = -target
                clo, chi = self._bounds(ccur, cmask, cply, deadline, lo=med, hi=med + 1)
                if chi <= med:
                    good[move] = True
                elif clo > med:
                    good[move] = False
                else:
                    self._timeout(board, started, nodes, time_limit, good, moves,
                                  to_external(target, ply))
        score = to_external(target, ply) if floor is None else floor
        return score, tuple(sorted(m for m, ok in good.items() if ok))

    def _timeout(self, board: Board, started: float, nodes: int, time_limit: float | None,
                 good: dict[int, bool], moves: list[int], score: int) -> None:
        """Raise :class:`SearchTimeout` with each move's bounds: a move found to reach
        ``score`` (the best there is, or the floor asked) is at least ``score``, one found
        not to is below it, any other at most the position's ``score`` bound."""
        big = self.game.big
        bounds = tuple(MoveBounds(m, *((score, big) if good[m] else (-big, score - 1))
                                  if m in good else (-big, score)) for m in moves)
        partial = PartialSolution(board, bounds, time.perf_counter() - started,
                                  self.nodes - nodes)
        raise SearchTimeout(f"{self.game.name}: not settled within {time_limit:g} s "
                            f"({partial.nodes:,} nodes)", partial)

    def _bounds(self, cur: int, mask: int, ply: int, deadline: float | None,
                progress: Progress | None = None, *, lo: int | None = None,
                hi: int | None = None) -> tuple[int, int]:
        """The absolute bounds of a live position, exact unless the deadline passed; given
        ``lo`` and ``hi = lo + 1`` instead, one null-window test: the result's upper bound
        is at most ``lo`` when the score is, else its lower bound is above ``lo``."""
        big = self.game.big
        low: kern.Score = np.int64(-big if lo is None else lo)
        high: kern.Score = np.int64(big if hi is None else hi)
        budget = self._slice(FIRST_SLICE, deadline)
        sliced = deadline is not None or progress is not None
        started, nodes = time.perf_counter(), self.nodes
        while True:
            self.stats[kern.NODES] = 0
            self.stats[kern.BUDGET] = budget if sliced else self._unbounded
            self.stats[kern.ABORTED] = 0
            t0 = time.perf_counter()
            low, high = kern.solve_bounds(np.uint64(cur), np.uint64(mask), np.int64(ply), low,
                                          high, self.geo, self.tt, self.stats)
            spent = time.perf_counter() - t0
            self.nodes += int(self.stats[kern.NODES])
            if spent > 0.01:
                self.rate = self.stats[kern.NODES] / spent
            if progress is not None:
                progress(self.nodes - nodes, time.perf_counter() - started,
                         to_external(int(low), ply), to_external(int(high), ply))
            if not self.stats[kern.ABORTED]:
                return int(low), int(high)
            if deadline is not None and time.perf_counter() >= deadline:
                return int(low), int(high)
            if spent > 0:
                seconds = SLICE_SECONDS if deadline is not None else PROGRESS_SECONDS
                budget = self._slice(max(FIRST_SLICE, int(self.stats[kern.NODES] / spent
                                                          * seconds)), deadline)

    def _slice(self, nodes: int, deadline: float | None) -> int:
        """``nodes``, or fewer where the deadline is nearer than they take at the last
        measured rate: a budget of a few milliseconds (the server's exact play) must not
        run a first slice of 25 ms."""
        if deadline is None:
            return nodes
        left = deadline - time.perf_counter()
        return max(MIN_SLICE, min(nodes, int((self.rate or ASSUMED_RATE) * left)))

    def _moves_by_centre(self, board: Board
                         ) -> Iterator[tuple[int, int | None, Board, int | None]]:
        """``(move, twin, child, final)`` for each legal move, centre first: ``twin`` the
        move already given whose mirror image this one is (its answer stands for both; the
        board is its own mirror image), ``final`` the mover's absolute score when the move
        ends the game (a win, or the last cell), else ``None``."""
        mirrored = self._mirror_moves(board)
        given: set[int] = set()
        big = self.game.big
        for move in sorted(board.legal_moves(), key=self._centre_rank):
            twin = mirrored.get(move)
            child = board.play(move)
            final = big - board.ply - 1 if child.winner() is not None else \
                0 if child.is_full() else None
            yield move, twin if twin in given else None, child, final
            given.add(move)

    def _check(self, board: Board) -> Board:
        if not isinstance(board, Board) or board.game is not self.game:
            raise GameError(f"not a position of {self.game.name}")
        return board

    def _centre_rank(self, move: int) -> tuple[int, int]:
        g = self.game
        row, col = divmod(move, g.cols)
        return abs(2 * col - (g.cols - 1)), abs(2 * row - (g.rows - 1))

    def _mirror_moves(self, board: Board) -> dict[int, int]:
        """Each move's left-right mirror image when the board is its own mirror image."""
        g = self.game
        image = [g.symmetries[1][i] for i in range(g.cells)] if len(g.symmetries) > 1 else []
        if not image or any(board.cell(i) != board.cell(image[i]) for i in range(g.cells)):
            return {}
        return {m: image[m] for m in board.legal_moves() if image[m] != m}


def table_bytes(tt_bits: int, words: int = SLOT_BYTES // 8) -> int:
    """The memory a table of ``2**tt_bits`` slots takes: whole huge pages (a table of 1 MiB
    still takes one 2 MiB page)."""
    return -(-(8 * words << tt_bits) // HUGE_PAGE) * HUGE_PAGE


def _table(slots: int, words: int) -> np.ndarray:
    """A zeroed table of ``slots`` rows of ``words`` words, aligned to 2 MiB and asking the
    kernel for huge pages: a probe lands anywhere in it, and with 4 KiB pages nearly every
    probe of a large table also missed the address cache (the TLB). Measured on 20
    beginning positions: 6.0M nodes/s with a 64 MiB table of plain pages, 13.7M with 1 MiB
    (docs/solver.md)."""
    nbytes = slots * words * 8
    buf = mmap.mmap(-1, nbytes + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        with contextlib.suppress(OSError):  # no huge pages here: plain pages still work
            buf.madvise(mmap.MADV_HUGEPAGE)
    raw = np.frombuffer(buf, dtype=np.uint8)
    start = -raw.ctypes.data % HUGE_PAGE
    return raw[start:start + nbytes].view(np.uint64).reshape(slots, words)


def from_external(score: int, ply: int) -> int:
    """The inverse of :func:`to_external`."""
    if score > 0:
        return score - ply
    if score < 0:
        return score + ply
    return 0


def to_external(score: int, ply: int) -> int:
    """An absolute kernel score (``big - e`` for a win at ply ``e``) from a position at
    ``ply`` as the ``big - t`` score, ``t = e - ply`` plies from that position."""
    if score > 0:
        return score + ply
    if score < 0:
        return score - ply
    return 0


def _move_order(game: Geometry) -> list[int]:
    """Candidate masks, centre first: whole columns under gravity, else single cells."""
    h = game.rows + 1
    centre = (game.cols - 1) / 2
    if game.gravity:
        cols = sorted(range(game.cols), key=lambda c: (abs(c - centre), c))
        return [((1 << game.rows) - 1) << (c * h) for c in cols]
    middle = (game.rows - 1) / 2
    cells = sorted(((c, r) for c in range(game.cols) for r in range(game.rows)),
                   key=lambda cr: (abs(cr[0] - centre) + abs(cr[1] - middle), cr))
    return [1 << (c * h + r) for c, r in cells]


def _solution(board: Board, scores: dict[int, int]) -> Solution:
    game = board.game
    best = max(scores.values())
    outcomes = [MoveOutcome(m, m // game.cols, m % game.cols, *describe_score(game, s, board),
                            s, s == best) for m, s in scores.items()]
    outcomes.sort(key=lambda mo: (-mo.score, mo.move))
    outcome, distance = describe_score(game, best, board)
    return Solution(board, int(np.sign(best)), outcome, distance, tuple(outcomes))


_SHARED_GAMES = 2  # shared searchers kept (the oldest goes): each holds its table
_shared: dict[Geometry, Searcher] = {}
_shared_lock = threading.Lock()


def searcher(game: Geometry) -> Searcher:
    """The shared searcher of ``game`` (its table persists between calls), with the
    default table or, under a tight memory limit, the largest that takes at most half
    of it (down to ``MIN_TT_BITS``; below that, :class:`OverBudget`)."""
    with _shared_lock:
        found = _shared.get(game)
        if found is None:
            limit = budget.memory_limit().bytes
            bits = DEFAULT_TT_BITS
            while bits > MIN_TT_BITS and table_bytes(bits) > limit // 2:
                bits -= 1
            found = _keep(game, Searcher(game, tt_bits=bits))
        return found


def reserve_table(game: object, tt_bits: int) -> Searcher:
    """Give ``game``'s shared searcher a table of ``2**tt_bits`` slots when its own is
    smaller (a long judgement of openings wants more than a server's default); what the
    old table knew is dropped.

    Raises:
        OverBudget: the table would not fit the memory limit.
    """
    mnk = geometry_of(game)
    with _shared_lock:
        found = _shared.get(mnk)
        if found is None or len(found.tt) < 1 << tt_bits:
            _shared.pop(mnk, None)
            found = _keep(mnk, Searcher(mnk, tt_bits=tt_bits))
        return found


def forget_shared() -> None:
    """Drop every shared searcher and its table (tests that change the memory limit)."""
    with _shared_lock:
        _shared.clear()


def _keep(game: Geometry, made: Searcher) -> Searcher:
    while len(_shared) >= _SHARED_GAMES:
        del _shared[next(iter(_shared))]
    _shared[game] = made
    return made
