"""The bitboard walker: games whose moves fill a cell, played on two bitmasks, in numba.

Every learner's inner loop plays whole games in compiled code, so one core plays over a
hundred thousand tic-tac-toe games a second with the learning updates included. Numba
rather than vectorised numpy because self-play is sequential: each move depends on the
values the previous games just changed, so there is no wide array to vectorise over,
while a compiled loop over one game at a time costs a few hundred nanoseconds a move.

A position is two bitmasks (``x``, ``o``) as in :mod:`gameai.games.mnk`: the walker is for
games that say so (``Game.walker == "bitboard"``: every move fills one empty cell, the side
to move follows from the counts). Alongside the masks the walker keeps seed 003's base-3
key of the board (the key of a position as played) and, when it shares values across
symmetries, the key under every other symmetry, updated by one addition per symmetry per
move; the smallest is the canonical key of :func:`gameai.games.mnk.keys.canonical_key`
(seed 004's shared afterstates). Keys go into a hash table
(:class:`~gameai.trainer.learners.hashtable.HashTable`: four-in-a-row has 3**16 keys).

An exploring start here is a random opening: with probability ``exploring_starts`` (a
parameter of every learner) a game opens with a random number of uniformly random moves
(:func:`gameai.trainer.walkers.rng.random_opening`).

The state of a game is ``(x, o, key, ply, opening)``: the masks, the base-3 key, the plies
played and how many of the first plies are an exploring start's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, NamedTuple, cast

import numpy as np
import numpy.typing as npt

from gameai.games import Game, budget
from gameai.games.mnk.game import MnkGame, as_mnk
from gameai.games.mnk.keys import (
    MAX_VECTOR_CELLS,
    base3_keys,
    canonical_keys,
    cell_weight,
    column_keys,
)
from gameai.models import Model, ModelInfo, TableModel
from gameai.trainer.learners.export import (
    ExportShape,
    afterstate_estimate,
    boards_of,
    child_keys,
    expand,
    stream_pooled,
    stream_rows,
    table_keys,
)
from gameai.trainer.learners.hashtable import HashTable
from gameai.trainer.learners.stores import Column, PositionStore, implement
from gameai.trainer.walkers import interface as walk
from gameai.trainer.walkers.interface import (
    DRAW,
    GO_ON,
    WIN,
    Finish,
    Nonempty,
    RowsOf,
    Walker,
)

# re-exported: learners/ntuple.py and evaluation/graph.py still import them from here
from gameai.trainer.walkers.rng import U64 as U64
from gameai.trainer.walkers.rng import below as below
from gameai.trainer.walkers.rng import greedy as greedy
from gameai.trainer.walkers.rng import next_u64 as next_u64
from gameai.trainer.walkers.rng import random_opening as random_opening
from gameai.trainer.walkers.rng import seed_state as seed_state
from gameai.trainer.walkers.rng import uniform as uniform

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
_ONE = np.uint64(1)
_ZERO = np.uint64(0)


class BitboardSpec(NamedTuple):
    """A game as flat arrays the kernels can read (build it with :func:`make_spec`)."""

    cells: int
    cols: int
    gravity: bool
    full: np.uint64  # every cell
    bottom: np.uint64  # the bottom row (gravity games)
    line_ptr: I64  # lines through cell c: line_masks[line_ptr[c]:line_ptr[c+1]]
    line_masks: U64
    pow3: U64  # (images, cells): a cell's weight in the key of image s of the board (the
    # identity's first: 3**c, or the column key's weight); one row unless symmetric
    digits: U64  # (2,): the base-3 digit of X and of O
    images: U64  # scratch (images,): the key of image s >= 1 of the board being played
    max_moves: int
    max_plies: int


def make_spec(game: Game, *, symmetric: bool = True) -> BitboardSpec:
    """The kernel-side description of ``game``; ``symmetric``: keep the keys of every
    symmetric image, so that afterstate keys are canonical.

    Raises:
        ValueError: the board has no 64-bit position key (:mod:`gameai.games.mnk.keys`: more
            than 40 cells, unless a gravity board's columns fit one word).
    """
    board = as_mnk(game)
    if board.cells > MAX_VECTOR_CELLS and not column_keys(board):
        raise ValueError(f"{board.name} has {board.cells} cells; the table learners (tally, "
                         f"td, qlearning) handle boards of at most {MAX_VECTOR_CELLS} (a base-3 "
                         "position key must fit in 64 bits), or gravity boards with "
                         "(rows + 1) x cols <= 64")
    ptr = [0]
    masks: list[int] = []
    for cell in range(board.cells):
        masks.extend(board.lines_through[cell])
        ptr.append(len(masks))
    perms = board.symmetries if symmetric else board.symmetries[:1]
    pow3 = np.array([[cell_weight(board, perm[c]) for c in range(board.cells)]
                     for perm in perms], dtype=np.uint64)
    return BitboardSpec(board.cells, board.cols, board.gravity, np.uint64(board.full_mask),
                        np.uint64(board.bottom_row), np.array(ptr, dtype=np.int64),
                        np.array(masks, dtype=np.uint64), pow3,
                        np.array([1, 2], dtype=np.uint64),
                        np.zeros(len(perms), dtype=np.uint64), board.cells, board.cells)


# -- the compiled walker: the interface's functions for BitboardSpec -------------------
# Numba inlines these into the kernels (stores.implement). Inlined or not, it counts
# references to the arrays of the spec around a function, and prunes the counts only
# where it can see that they pair up: where the code calls nothing (a call could raise),
# holds no array in a variable of its own and lets the spec go at one place (no break, no
# early return). Otherwise two atomic operations an array are paid on every move: the
# position-graph walker's moves cost 5 to 10 times as much, the bitboard walker's twice
# (docs/trainer.md). So each function here reads the spec through its argument, calls
# nothing on a move, and returns once.

def _begin_impl(spec, rng, share):
    for s in range(1, spec.images.shape[0]):
        spec.images[s] = _ZERO
    return (_ZERO, _ZERO, _ZERO, 0, random_opening(rng, share, spec.cells))  # once a game


def _list_moves_impl(spec, state, moves):
    """The playable cells, ascending: the empty ones, or under gravity the lowest empty
    cell of each column."""
    occupied = state[0] | state[1]
    mask = spec.full & ~occupied
    if spec.gravity:
        mask &= (occupied >> np.uint64(spec.cols)) | spec.bottom
    n = 0
    for cell in range(spec.cells):
        if mask >> np.uint64(cell) & _ONE:
            moves[n] = cell
            n += 1
    return n


def _move_result_impl(spec, state, moves, j):
    """WIN where the move completes a line through its cell, else DRAW where it fills the
    board, else GO_ON."""
    cell = moves[j]
    bit = _ONE << np.uint64(cell)
    x, o = state[0], state[1]
    mine = (x if (state[3] & 1) == 0 else o) | bit
    result = DRAW if (x | o | bit) == spec.full else GO_ON
    i = spec.line_ptr[cell]
    end = spec.line_ptr[cell + 1]
    while i < end:
        line = spec.line_masks[i]
        if mine & line == line:
            result = WIN
            i = end
        i += 1
    return result


def _afterstate_key_impl(spec, state, moves, j):
    """The smallest key of the board after the move over every image kept (the canonical
    key when they are all kept; the identity's key, ``state[2]``'s, is image 0)."""
    cell = moves[j]
    digit = spec.digits[state[3] & 1]
    best = state[2] + digit * spec.pow3[0, cell]
    for s in range(1, spec.images.shape[0]):
        k = spec.images[s] + digit * spec.pow3[s, cell]
        if k < best:
            best = k
    return best


def _position_afterstate_key_impl(spec, state):
    best = state[2]
    for s in range(1, spec.images.shape[0]):
        best = min(best, spec.images[s])
    return best


def _play_impl(spec, state, moves, j):
    cell = moves[j]
    mover = state[3] & 1
    digit = spec.digits[mover]
    for s in range(1, spec.images.shape[0]):
        spec.images[s] += digit * spec.pow3[s, cell]
    bit = _ONE << np.uint64(cell)
    x = state[0] | bit if mover == 0 else state[0]
    o = state[1] | bit if mover == 1 else state[1]
    return (x, o, state[2] + digit * spec.pow3[0, cell], state[3] + 1, state[4])


IMPLEMENTATIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    walk.begin: _begin_impl,
    walk.exploring: lambda spec, state: state[3] < state[4],
    walk.starts_inside: lambda spec, state: False,
    walk.mover: lambda spec, state: state[3] & 1,
    walk.list_moves: _list_moves_impl,
    walk.move_result: _move_result_impl,
    walk.afterstate_key: _afterstate_key_impl,
    walk.position_afterstate_key: _position_afterstate_key_impl,
    walk.position_key: lambda spec, state: state[2],
    walk.child_key: lambda spec, state, moves, j:
        state[2] + spec.digits[state[3] & 1] * spec.pow3[0, moves[j]],
    walk.move_row: lambda spec, state, slot, moves, j: slot * spec.cells + moves[j],
    walk.play: _play_impl,
    walk.finish: lambda spec, state: None,
}
for stub, impl in IMPLEMENTATIONS.items():
    implement(stub, BitboardSpec, impl)


# -- the Python half ----------------------------------------------------------------------

@dataclass
class BitboardMoves:
    """Every cell of ``keys``' positions (base-3 keys): :class:`gameai.trainer.walkers.
    interface.Moves` as ``(positions, cells)`` arrays, each computed when first read."""

    game: MnkGame
    table: HashTable
    keys: U64
    slots: I64 | None = None  # the positions' own slots, where the caller has them

    @cached_property
    def boards(self) -> tuple[U64, U64]:
        return boards_of(self.game, self.keys)

    @cached_property
    def kids(self) -> Any:
        return expand(self.game, *self.boards)

    @property
    def legal(self) -> npt.NDArray[np.bool_]:
        return cast(npt.NDArray[np.bool_], self.kids.legal)

    @cached_property
    def result(self) -> npt.NDArray[np.int8]:
        return np.where(self.kids.won, WIN, np.where(self.kids.full, DRAW, GO_ON)
                        ).astype(np.int8)

    @cached_property
    def mover(self) -> npt.NDArray[np.intp]:
        side = np.where(self.kids.x_to_move, 0, 1)[:, None]
        return np.broadcast_to(side, self.kids.legal.shape)

    @cached_property
    def afterstate(self) -> I64:
        return self._found(canonical=True)

    @cached_property
    def child(self) -> I64:
        return self._found(canonical=False)

    @cached_property
    def row(self) -> I64:
        slots = self.slots if self.slots is not None else self.table.lookup(self.keys)
        return slots[:, None] * self.game.cells + np.arange(self.game.cells)

    def _found(self, *, canonical: bool) -> I64:
        keys = child_keys(self.game, *self.boards, canonical=canonical)
        return self.table.lookup(keys.ravel()).reshape(keys.shape)


class BitboardWalker(Walker):
    """The bitboard walker's Python half; its stores are hash tables of base-3 keys."""

    method = "bitboard"

    def __init__(self, game: Game, *, symmetric: bool) -> None:
        super().__init__(game, symmetric=symmetric)
        self.spec = make_spec(game, symmetric=symmetric)
        self.board = as_mnk(game)

    def start_share(self, params: Any) -> float:
        return float(params.exploring_starts)

    def new_store(self, columns: dict[str, Column], *, keys: Literal["afterstates", "positions"],
                  visits: str, per_move: dict[str, Column] | None = None) -> HashTable:
        """A hash table; a per-move column is a column of ``cells`` rows a slot."""
        moves = {name: (dtype, (self.board.cells, *shape), initial)
                 for name, (dtype, shape, initial) in (per_move or {}).items()}
        return HashTable({**columns, **moves})

    def reserve(self, store: PositionStore, games: int,
                export: ExportShape | None = None) -> None:
        table = cast(HashTable, store)
        room = None if export is None else (
            lambda entries, capacity: export.estimate(self.board, entries=entries,
                                                      capacity=capacity))
        table.reserve(games * self.board.cells, room_for=room)

    def afterstate_model(self, store: PositionStore, rows_of: RowsOf, *, what: str,
                         info: ModelInfo) -> Model:
        """The rows of the positions the table holds (afterstates are positions too) and
        of the empty board, streamed in chunks (:func:`stream_rows`)."""
        table = cast(HashTable, store)
        entries = len(table) + 1
        budget.require(afterstate_estimate(self.board, what, entries=entries,
                                           capacity=table.capacity))
        keys, rows = stream_rows(table_keys(table), self.board.cells,
                                 lambda chunk: rows_of(BitboardMoves(self.board, table, chunk)))
        return TableModel(self.game, info, keys, rows)

    def pooled_model(self, store: PositionStore, sums_of: RowsOf, finish: Finish, *,
                     what: str, width: int, held: int, seconds: float, start: bool,
                     info: ModelInfo, nonempty: Nonempty | None = None) -> Model:
        """Pooled in chunks over the table's raw keys (:func:`stream_pooled`);
        ``nonempty(moves)``, where given, says which positions hold anything (so the
        export's estimate counts only the rows it will write)."""
        table = cast(HashTable, store)
        slots: I64 | None = None
        if start:
            raw = table_keys(table)
        else:
            slots = table.slots()
            raw = table.keys[slots]

        def moves(entries: npt.NDArray[np.intp]) -> BitboardMoves:
            return BitboardMoves(self.board, table, raw[entries],
                                 None if slots is None else slots[entries])

        def rows(keys: U64, pooled: F64) -> F64:
            x, o = boards_of(self.board, keys)
            return finish(np.bitwise_count(x) == np.bitwise_count(o), pooled)

        keys, values = stream_pooled(
            self.board, raw, lambda entries: sums_of(moves(entries)), rows, what=what,
            held=held, width=width, seconds_per_entry_cell=seconds,
            nonempty=None if nonempty is None else lambda entries: nonempty(moves(entries)))
        return TableModel(self.game, info, keys, values)

    def model_afterstates(self, model: Model, store: PositionStore) -> tuple[I64, F64]:
        """The canonical keys of the afterstates, each with the value of the first move
        (in the model's order) that leads to it."""
        table = self.table(model)
        kids = expand(self.board, *boards_of(self.board, table.keys))
        live = kids.legal & ~kids.terminal & ~np.isnan(table.values)
        ckeys = canonical_keys(self.board, kids.x[live], kids.o[live])
        unique, first = np.unique(ckeys, return_index=True)
        store.reserve(len(unique))
        return store.claim(unique), table.values[live][first].astype(np.float64)

    def model_successors(self, model: Model, store: PositionStore
                         ) -> tuple[I64, I64, npt.NDArray[np.intp], F64]:
        """The model's positions in their canonical orientation (whose base-3 key is
        their canonical key) and their children in that orientation."""
        table = self.table(model)
        kids = expand(self.board, *boards_of(self.board, table.keys))
        live = kids.legal & ~kids.terminal & ~np.isnan(table.values)
        keys = base3_keys(self.board, kids.x[live], kids.o[live])
        movers = np.broadcast_to(np.where(kids.x_to_move, 0, 1)[:, None], live.shape)[live]
        store.reserve(len(keys) + len(table.keys))
        positions = store.claim(table.keys)
        return positions, store.claim(keys), movers, table.values[live].astype(np.float64)

    def model_moves(self, model: Model, store: PositionStore
                    ) -> tuple[I64, I64, npt.NDArray[np.intp], F64]:
        """Every cell of the model's positions in their canonical orientation, as
        ``(positions, cells)`` arrays."""
        table = self.table(model)
        x, o = boards_of(self.board, table.keys)
        store.reserve(len(table.keys))
        positions = store.claim(table.keys)
        rows = positions[:, None] * self.board.cells + np.arange(self.board.cells)
        movers = np.broadcast_to(np.where(np.bitwise_count(x) == np.bitwise_count(o), 0, 1
                                          )[:, None], rows.shape)
        return positions, rows, movers, table.values.astype(np.float64)
