"""The n-tuple network model (kind ``ntuple``): afterstate values from a few cell patterns.

Stored arrays (the documented container, nothing pickled):

* ``tuples (T, n)`` int16: each tuple's cells (index order matters: a cell's state is
  digit ``j`` of the tuple's index in base ``states``);
* ``weights (sides * T, states ** n)`` float32: each tuple's table, once for both players
  (``sides`` 1) or once for each (``sides`` 2: rows ``0..T-1`` value the afterstates X
  made, rows ``T..2T-1`` those O made).

``states`` and ``sides`` follow from the sizes (states 3: empty, mine, theirs; 4: also
"empty and playable now", for gravity games). The symmetries of the board come from the
game, so a tuple is read under each of them (:mod:`gameai.models.ntuple_kernels`). A
move's value is the value of its afterstate for the mover, in [-1, 1], exact for a move
that wins (1) or fills the board (0). The model answers positions from their bitmasks,
without canonical keys, so it serves boards of up to 64 cells (Connect Four's 42
included).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from gameai.games import Game, State
from gameai.games.interface import Batch
from gameai.games.mnk.board import Board
from gameai.games.mnk.game import MnkGame, as_mnk
from gameai.games.mnk.keys import U64, masks_from_base3, transform_mask
from gameai.models.container import CorruptModel
from gameai.models.info import ModelInfo
from gameai.models.model import F32, Evaluation, Model, SearchReport
from gameai.models.ntuple_kernels import Net, move_values, search_many, search_values

# The search depth a server uses when a request gives none, per game: the deepest whose
# p99 latency at 8 concurrent clients stays within 10 ms on the 2-core machine
# (docs/ntuple.md, `gameai bench ntuple`), among those the strongest measured: Connect
# Four's depth 3 wins 98% of its games as X against perfect play, depth 2 92%, depth 4 83%.
DEFAULT_DEPTH = {"tictactoe": 4, "four-in-a-row": 2, "mnk-4x5-4": 2, "connect-four": 3}
# Deeper near the end, for a game's default depth where it pays: (at most this many empty
# cells, the plies searched there). mnk-4x5-4's network misjudges positions of plies 7-9
# that 4 plies see, and with 13 cells left 4 plies cost about what 2 cost at the start: the
# default policy then never loses to perfect play (docs/ntuple.md). Connect Four's depth 3
# drew and lost one game of 500 against perfect play, at plies 32 and 34, that 4 plies
# see; 6 plies with 12 cells left cost less than 3 in the middle game (0.6 against 0.7-1 ms).
ENDGAME_DEPTH = {"mnk-4x5-4": (13, 4), "connect-four": (12, 6)}
MAX_LENGTH = 12  # 4 ** 12 = 16.8 million weights a table
MAX_WEIGHTS = 1 << 28  # a gigabyte of float32: more is a forged file, not a model


def states_of(tuples: npt.NDArray[Any], weights: npt.NDArray[Any]) -> int:
    """The number of cell states that the tables' width implies (3 or 4).

    Raises:
        CorruptModel: the width is neither ``3 ** n`` nor ``4 ** n``.
    """
    n = tuples.shape[1]
    for states in (3, 4):
        if weights.shape[1] == states ** n:
            return states
    raise CorruptModel(f"weight tables of width {weights.shape[1]} fit neither 3 nor 4 "
                       f"states of {n}-cell tuples")


def check_geometry(game: MnkGame, tuples: npt.NDArray[Any], states: int) -> None:
    """Raise :class:`CorruptModel` (a ``ValueError``) naming what does not fit ``game``."""
    if tuples.ndim != 2 or tuples.shape[0] < 1 or not 1 <= tuples.shape[1] <= MAX_LENGTH:
        raise CorruptModel(f"tuples of shape {tuples.shape}: need at least one tuple of 1 "
                           f"to {MAX_LENGTH} cells")
    if tuples.min() < 0 or tuples.max() >= game.cells:
        raise CorruptModel(f"a tuple names a cell outside {game.name}'s {game.cells} cells")
    for row in tuples.tolist():
        if len(set(row)) != len(row):
            raise CorruptModel(f"tuple {row} names a cell twice")
    if states == 4 and not game.gravity:
        raise CorruptModel(f"4 cell states (empty and playable) are for gravity games, "
                           f"not {game.name}")


def build_net(game: MnkGame, tuples: npt.NDArray[Any], states: int) -> Net:
    """The kernels' geometry: each tuple under each symmetry of ``game``."""
    tuples = np.asarray(tuples, dtype=np.int64)
    check_geometry(game, tuples, states)
    perms = np.array(game.symmetries, dtype=np.int64)
    count, n = tuples.shape
    pt_cells = perms[:, tuples].reshape(-1, n)  # symmetry-major: (syms * count, n)
    pt_table = np.tile(np.arange(count, dtype=np.int64), len(perms))
    through: list[list[tuple[int, int]]] = [[] for _ in range(game.cells)]
    for p, row in enumerate(pt_cells.tolist()):
        for j, cell in enumerate(row):
            through[cell].append((p, states ** j))
    ptr = np.cumsum([0] + [len(t) for t in through]).astype(np.int64)
    flat = [pair for t in through for pair in t]
    line_ptr = np.cumsum([0] + [len(ls) for ls in game.lines_through]).astype(np.int64)
    return Net(game.cells, game.cols, game.gravity, states, np.uint64(game.full_mask),
               np.uint64(game.bottom_row), line_ptr,
               np.array([m for ls in game.lines_through for m in ls], dtype=np.uint64),
               pt_table, pt_cells, ptr, np.array([p for p, _ in flat], dtype=np.int64),
               np.array([w for _, w in flat], dtype=np.int64), centre_order(game))


def centre_order(game: MnkGame) -> npt.NDArray[np.int64]:
    """The cells from the centre of the board outwards (ties: lowest cell first)."""
    mid_r, mid_c = (game.rows - 1) / 2, (game.cols - 1) / 2
    return np.array(sorted(range(game.cells), key=lambda c: (
        abs(c // game.cols - mid_r) + abs(c % game.cols - mid_c), c)), dtype=np.int64)


def random_walks(game: MnkGame, count: int, length: int, seed: int) -> npt.NDArray[np.int16]:
    """``count`` tuples of ``length`` distinct cells, each a random walk over neighbouring
    cells (the 8 around a cell), seeded; a walk that gets stuck starts again."""
    if not 1 <= length <= min(game.cells, MAX_LENGTH):
        raise ValueError(f"a tuple of {length} cells does not fit {game.name} "
                         f"(1 to {min(game.cells, MAX_LENGTH)})")
    rng = np.random.default_rng(seed)
    neighbours = []
    for cell in range(game.cells):
        r, c = divmod(cell, game.cols)
        neighbours.append([rr * game.cols + cc for rr in range(r - 1, r + 2)
                           for cc in range(c - 1, c + 2)
                           if (rr, cc) != (r, c) and 0 <= rr < game.rows
                           and 0 <= cc < game.cols])
    out: list[list[int]] = []
    while len(out) < count:
        walk = [int(rng.integers(game.cells))]
        while len(walk) < length:
            options = [c for c in neighbours[walk[-1]] if c not in walk]
            if not options:
                break
            walk.append(options[int(rng.integers(len(options)))])
        if len(walk) == length:
            out.append(walk)
    return np.array(out, dtype=np.int16).reshape(count, length)


def parse_patterns(game: MnkGame, text: str) -> npt.NDArray[np.int16]:
    """Tuples given as text: ``"0,1,2,3;4,5,6,7"`` (cells of each tuple, all of one length).

    Raises:
        ValueError: not numbers, tuples of different lengths, or cells off the board.
    """
    try:
        rows = [[int(c) for c in part.split(",")] for part in text.split(";") if part.strip()]
    except ValueError as e:
        raise ValueError(f"patterns {text[:60]!r}: cells are numbers separated by ',', tuples "
                         "by ';'") from e
    if not rows or len({len(r) for r in rows}) != 1:
        raise ValueError("patterns: give at least one tuple, all of the same length")
    tuples = np.array(rows, dtype=np.int16)
    try:
        check_geometry(game, tuples, 3)
    except CorruptModel as e:
        raise ValueError(f"patterns: {e}") from e
    return tuples


class NtupleModel(Model):
    """An n-tuple network over afterstates (see the module docstring)."""

    kind = "ntuple"

    def __init__(self, game: Game, info: ModelInfo, *, tuples: npt.NDArray[Any],
                 weights: npt.NDArray[Any]) -> None:
        super().__init__(game, info)
        if not game.cell_kernels:
            raise CorruptModel(f"n-tuple networks play m,n,k boards, not {game.name}")
        self.tuples = np.asarray(tuples, dtype=np.int16)
        self.weights = np.ascontiguousarray(weights, dtype=np.float32)
        if self.tuples.ndim != 2 or self.weights.ndim != 2 or (
                self.weights.shape[0] not in (self.tuples.shape[0], 2 * self.tuples.shape[0])):
            raise CorruptModel(f"{self.tuples.shape} tuples do not match weight tables of "
                               f"shape {self.weights.shape} (one or two per tuple)")
        if self.weights.size > MAX_WEIGHTS:
            raise CorruptModel(f"{self.weights.size:,} weights; at most {MAX_WEIGHTS:,}")
        self.states = states_of(self.tuples, self.weights)
        if not np.isfinite(self.weights).all():
            raise CorruptModel("n-tuple weights must be finite")
        self.net = build_net(as_mnk(game), self.tuples, self.states)
        self.sides = self.weights.shape[0] // self.tuples.shape[0]
        # the kernels' view: (sides, tuples, states ** n)
        self.tables = self.weights.reshape(self.sides, self.tuples.shape[0], -1)

    def _arrays(self) -> dict[str, npt.NDArray[Any]]:
        return {"tuples": self.tuples, "weights": self.weights}

    policy_depth: int | None = None  # set by :meth:`with_search`

    def with_search(self, depth: int) -> NtupleModel:
        """The same network answering every query by its search ``depth`` plies deep: the
        policy a server plays at that depth, for the evaluator and the judges (not
        stored: the artifact is the network)."""
        if depth < 0:
            raise ValueError(f"search depth must be at least 0, got {depth}")
        twin = copy.copy(self)
        twin.policy_depth = depth
        return twin

    def values_of_masks(self, x: U64, o: U64) -> F32:
        """Move values of positions ``(x, o)`` in their own orientation (NaN: illegal):
        the network's, or its search's after :meth:`with_search`."""
        out = np.empty((len(x), self.game.cells), dtype=np.float32)
        if len(x):
            x = np.ascontiguousarray(x, dtype=np.uint64)
            o = np.ascontiguousarray(o, dtype=np.uint64)
            if self.policy_depth is None:
                move_values(self.net, self.tables, x, o, out)
            else:
                empty = self.game.cells - np.bitwise_count(x | o).astype(np.int64)
                plies = self.plies(empty, self.policy_depth)
                for depth in np.unique(plies):
                    rows = np.flatnonzero(plies == depth)
                    part = np.empty((len(rows), self.game.cells), dtype=np.float32)
                    search_many(self.net, self.tables, x[rows], o[rows], int(depth), part)
                    out[rows] = part
        return out

    def evaluate(self, board: State) -> Evaluation:
        if self.policy_depth is not None:
            return self.search(board, self.policy_depth)
        self._check(board)
        b = _board(board)
        row = self.values_of_masks(np.array([b.x], np.uint64), np.array([b.o], np.uint64))[0]
        moves = [self._move_value(a, float(row[a])) for a in b.legal_actions()]
        moves.sort(key=lambda mv: (-mv.value, mv.action_id))
        return Evaluation(b.to_move, moves[0].value, tuple(moves))

    @property
    def default_depth(self) -> int:
        return DEFAULT_DEPTH.get(self.game.name, 2)

    def plies(self, empty: npt.NDArray[np.int64], depth: int) -> npt.NDArray[np.int64]:
        """How far a search of ``depth`` looks at positions with ``empty`` empty cells:
        ``depth``, except that the game's default depth goes deeper near the end where
        :data:`ENDGAME_DEPTH` says so (an explicit other depth is searched as asked)."""
        plies = np.full(np.shape(empty), depth, dtype=np.int64)
        rule = ENDGAME_DEPTH.get(self.game.name)
        if rule is not None and depth == self.default_depth:
            cells, deeper = rule
            plies[np.asarray(empty) <= cells] = max(depth, deeper)
        return plies

    def search(self, board: State, depth: int, *, best_only: bool = False) -> Evaluation:
        """Every legal move's value by alpha-beta ``depth`` plies beyond it over the
        network's values (:func:`~gameai.models.ntuple_kernels.search_values`: a win in
        one is always taken and a loss in one always blocked), best first; the default
        depth goes deeper near the end of the games :meth:`plies` names. With
        ``best_only``, only the best move (the same move and value, found sooner: the
        others are searched only as far as it takes to show they are worse).

        Raises:
            ValueError: ``depth`` is negative.
            GameOver: the board is finished.
        """
        if depth < 0:
            raise ValueError(f"search depth must be at least 0, got {depth}")
        self._check(board)
        evaluation = self._searched(_board(board), depth, best_only, np.zeros(2, np.int64))
        assert evaluation is not None  # no node limit: the search always finishes
        return evaluation

    def search_within(self, board: State, max_depth: int, *, nodes: int | None = None,
                      seconds: float | None = None, best_only: bool = False
                      ) -> tuple[Evaluation, SearchReport]:
        """:meth:`search` as deep as a budget allows: iterative deepening from depth 0 up
        to ``max_depth``, stopping before a depth that would pass ``nodes`` (in all) or
        ``seconds`` (each depth's node limit is what the time left buys at the rate
        measured so far, so a search overruns its time by at most one depth's estimate).
        The answer is the deepest search that finished (depth 0 always does). Without a
        budget, the one search ``max_depth`` deep (deepening would only cost).

        Raises:
            ValueError: ``max_depth`` is negative.
            GameOver: the board is finished.
        """
        if max_depth < 0:
            raise ValueError(f"search depth must be at least 0, got {max_depth}")
        self._check(board)
        b = _board(board)
        started = time.perf_counter()
        if nodes is None and seconds is None:  # no budget: deepening would only cost
            counter = np.zeros(2, np.int64)
            evaluation = self._searched(b, max_depth, best_only, counter)
            assert evaluation is not None
            return evaluation, SearchReport(max_depth, int(counter[0]),
                                            time.perf_counter() - started, True,
                                            self.sees_the_end(b, max_depth))
        evaluation = self._searched(b, 0, best_only, counter := np.zeros(2, np.int64))
        assert evaluation is not None
        spent, reached = int(counter[0]), 0
        for depth in range(1, max_depth + 1):
            left = None if nodes is None else nodes - spent
            if seconds is not None:
                elapsed = time.perf_counter() - started
                rate = spent / max(elapsed, 1e-6)  # nodes a second, as measured so far
                by_time = int((seconds - elapsed) * rate)
                left = by_time if left is None else min(left, by_time)
            if left is not None and left <= 0:
                break
            counter[:] = (0, 0 if left is None else left)
            deeper = self._searched(b, depth, best_only, counter)
            spent += int(counter[0])  # an abandoned depth's nodes were spent too
            if deeper is None:
                break
            evaluation, reached = deeper, depth
        return evaluation, SearchReport(reached, spent, time.perf_counter() - started,
                                        reached == max_depth, self.sees_the_end(b, reached))

    def search_counted(self, board: State, depth: int, *, nodes: int | None = None
                       ) -> tuple[Evaluation | None, int]:
        """:meth:`search` ``depth`` deep, abandoned past ``nodes`` (then None), and the nodes
        it searched (a streamed analysis' model phase: one depth a step).

        Raises:
            ValueError: ``depth`` is negative.
            GameOver: the board is finished.
        """
        if depth < 0:
            raise ValueError(f"search depth must be at least 0, got {depth}")
        self._check(board)
        counter = np.array([0, nodes or 0], dtype=np.int64)
        evaluation = self._searched(_board(board), depth, False, counter)
        return evaluation, int(counter[0])

    def values_within(self, x: U64, o: U64, max_depth: int, *, nodes: int | None = None,
                      seconds: float | None = None) -> tuple[F32, SearchReport]:
        """:meth:`values_of_masks` of many positions by the search, as deep as a budget for
        them all allows: :meth:`search_within`'s deepening, each depth for every position
        before the next (the deepest depth finished for all answers). Without a budget,
        the one search ``max_depth`` deep. The report's ``exact``: every position's.

        Raises:
            ValueError: ``max_depth`` is negative.
        """
        if max_depth < 0:
            raise ValueError(f"search depth must be at least 0, got {max_depth}")
        x = np.ascontiguousarray(x, dtype=np.uint64)
        o = np.ascontiguousarray(o, dtype=np.uint64)
        empty = self.game.cells - np.bitwise_count(x | o).astype(np.int64)
        started = time.perf_counter()
        counter = np.zeros(2, np.int64)
        first = max_depth if nodes is None and seconds is None else 0
        values = self._many(x, o, self.plies(empty, first), counter)
        assert values is not None
        spent, reached = int(counter[0]), first
        for depth in range(first + 1, max_depth + 1):
            left = None if nodes is None else nodes - spent
            if seconds is not None:
                elapsed = time.perf_counter() - started
                by_time = int((seconds - elapsed) * spent / max(elapsed, 1e-6))
                left = by_time if left is None else min(left, by_time)
            if left is not None and left <= 0:
                break
            counter[:] = (0, 0 if left is None else left)
            deeper = self._many(x, o, self.plies(empty, depth), counter)
            spent += int(counter[0])
            if deeper is None:
                break
            values, reached = deeper, depth
        exact = bool(np.all(self.plies(empty, reached) + 1 >= empty))
        return values, SearchReport(reached, spent, time.perf_counter() - started,
                                    reached == max_depth, exact)

    def _many(self, x: U64, o: U64, plies: npt.NDArray[np.int64],
              counter: npt.NDArray[np.int64]) -> F32 | None:
        """Each position's move values by the search ``plies[i]`` deep, or None when
        ``counter``'s node limit (``[nodes, limit]``, 0: none) stopped it."""
        out = np.empty((len(x), self.game.cells), dtype=np.float32)
        for i in range(len(x)):
            search_values(self.net, self.tables, x[i], o[i], int(plies[i]), out[i], False,
                          counter)
            if counter[1] > 0 and counter[0] > counter[1]:
                return None
        return out

    def sees_the_end(self, board: State, depth: int) -> bool:
        """Whether a search ``depth`` deep from ``board`` reaches the end of every line (the
        board is full by then), so that its values are the game's exact outcomes."""
        b = _board(board)
        empty = self.game.cells - b.ply
        return int(self.plies(np.array(empty), depth)) + 1 >= empty

    def _searched(self, b: Board, depth: int, best_only: bool, counter: npt.NDArray[np.int64]
                  ) -> Evaluation | None:
        """The search of ``b`` ``depth`` deep, or None when ``counter``'s node limit stopped
        it."""
        row = np.empty(self.game.cells, dtype=np.float32)
        plies = int(self.plies(np.array(self.game.cells - b.ply), depth))
        search_values(self.net, self.tables, np.uint64(b.x), np.uint64(b.o), plies, row,
                      best_only, counter)
        if counter[1] > 0 and counter[0] > counter[1]:
            return None
        moves = [self._move_value(a, float(row[a])) for a in b.legal_actions()]
        moves.sort(key=lambda mv: (-mv.value, mv.action_id))
        if best_only:
            moves = moves[:1]
        return Evaluation(b.to_move, moves[0].value, tuple(moves))

    def move_values(self, boards: Sequence[State]) -> F32:
        for board in boards:
            self._check(board)
        x = np.array([_board(b).x for b in boards], dtype=np.uint64)
        o = np.array([_board(b).o for b in boards], dtype=np.uint64)
        return self.values_of_masks(x, o)

    def batch_values(self, batch: Batch) -> F32:
        if batch.masks is None:
            raise ValueError("an n-tuple network reads boards as bitmasks")
        return self.values_of_masks(*batch.masks)

    def move_values_of_masks(self, x: U64, o: U64) -> F32:
        return self.values_of_masks(x, o)

    def _canonical_values(self, keys: U64, x: U64 | None, o: U64 | None) -> F32:
        if x is None or o is None:
            x, o = masks_from_base3(as_mnk(self.game), keys)
        return self.values_of_masks(x, o)

    def _canonical_row(self, key: int, board: State, sym: int) -> npt.NDArray[np.float32]:
        b = _board(board)
        game = as_mnk(self.game)
        x, o = transform_mask(game, b.x, sym), transform_mask(game, b.o, sym)
        return self.values_of_masks(np.array([x], np.uint64), np.array([o], np.uint64))[0]


def ensemble(members: Sequence[NtupleModel], info: ModelInfo) -> NtupleModel:
    """One network whose every afterstate value is ``tanh`` of the mean of ``members``'
    sums (their pre-activations): an ensemble of independently trained networks of one
    game, served as one. Members of the same tuples (runs given the same ``patterns``) are
    averaged weight by weight, so the ensemble costs what one member does; otherwise their
    tuples are put side by side, each member's tables scaled by ``1 / k`` (a search then
    reads ``k`` times the weights). docs/ntuple.md, "Independent runs, averaged".

    Raises:
        ValueError: no members, or members of different games, widths, states or sides.
    """
    if not members:
        raise ValueError("ensemble: give at least one network")
    first = members[0]
    for m in members[1:]:
        for what, a, b in (("game", m.game.name, first.game.name),
                           ("tuple length", m.tuples.shape[1], first.tuples.shape[1]),
                           ("cell states", m.states, first.states),
                           ("sides", m.sides, first.sides)):
            if a != b:
                raise ValueError(f"ensemble: members differ in {what} ({b} and {a})")
    k = len(members)
    if all(np.array_equal(m.tuples, first.tuples) for m in members):
        mean = np.mean([m.weights.astype(np.float64) for m in members], axis=0)
        return NtupleModel(first.game, info, tuples=first.tuples, weights=mean)
    tuples = np.concatenate([m.tuples for m in members])
    # rows: every member's X tables, then (two sides) every member's O tables
    tables = np.concatenate([m.tables.astype(np.float64) for m in members], axis=1) / k
    return NtupleModel(first.game, info, tuples=tuples,
                       weights=tables.reshape(first.sides * len(tuples), -1))


def _board(state: State) -> Board:
    assert isinstance(state, Board)
    return state


@lru_cache(maxsize=8)
def default_shape(game: MnkGame) -> tuple[int, int]:
    """``(tuples, length)`` for a game with no tuples given: Thill, Bagheri and Konen's
    70 tuples of 8 cells on Connect Four; fewer and shorter on smaller boards."""
    if game.cells <= 9:
        return 6, min(game.cells, 5)
    if game.cells <= 16:
        return 8, 8
    if game.cells <= 25:
        return 16, 8
    return 70, 8
