"""Vectorised helpers that turn learner tables into model rows, for the bitboard walker
(:mod:`gameai.trainer.walkers.bitboard`: m,n,k positions as two bitmasks, hash tables of
base-3 keys).

A model row holds, for one canonical position, the value of every move in the canonical
orientation (see :mod:`gameai.models.model`). Learners that share values across
symmetric positions (td) read their tables at the canonical children directly; learners
that keep seed 003's raw keys (tally, qlearning) have seen each position in several
orientations, and :func:`stream_pooled` merges those observations into one row.

Large tables are exported in a streaming fashion (:func:`stream_rows`,
:func:`stream_pooled`): ``CHUNK`` positions at a time go through the vectorised helpers
and straight into the model's preallocated arrays, so an export needs the model's own
arrays, a few index arrays of 8 bytes an entry, and one chunk's work, whatever the size
of the table, and refuses before it starts when that would not fit the memory limit
(:func:`export_estimate`). Measured with ``tracemalloc`` on 200,000-game four-in-a-row
tables: td 98 bytes an entry at the peak (72 of them the model's own arrays; 970 before),
qlearning 72 (1,890 before), tally 77 (1,002 before), each within 20% of its estimate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gameai.games import budget
from gameai.games.mnk.board import playable_masks
from gameai.games.mnk.game import MnkGame
from gameai.games.mnk.keys import (
    U64,
    base3_keys,
    canonical_keys,
    canonical_keys_and_syms,
    cell_weight,
    masks_from_base3,
    symmetric_keys,
)
from gameai.games.mnk.positions import has_line_through
from gameai.trainer.learners.hashtable import EMPTY, HashTable

F64 = npt.NDArray[np.float64]
F32 = npt.NDArray[np.float32]
CHUNK = 1 << 13  # positions exported at a time: one chunk's work is about 66 bytes a cell each
CHUNK_BYTES_PER_CELL = 66  # one chunk's work, per position and cell (tracemalloc)
SORT_BYTES = 32  # an entry's canonical key, its order, and their sorted copies while sorting
# a pooled export's chunk holds its sums three times: as read, moved into the canonical
# orientation, and pooled (tracemalloc: 1.13-1.20 of the estimate with one copy counted)
POOLED_COPIES = 3
# CPU seconds of an export per table entry and cell, one core (measured with process_time on
# four-in-a-row and connect-4x5-4 tables of 100,000-300,000 games, docs/trainer.md): td's
# canonical table 0.12-0.15 us, tally's raw keys pooled 0.14-0.17, qlearning's 0.22-0.28
TABLE_SECONDS = 0.15e-6
POOLED_SECONDS = {"tally": 0.17e-6, "qlearning": 0.28e-6}


@dataclass
class Children:
    """Every move of ``n`` positions: ``(n, cells)`` arrays, meaningful where ``legal``."""

    x: U64
    o: U64
    legal: npt.NDArray[np.bool_]
    won: npt.NDArray[np.bool_]  # the mover completes a line
    full: npt.NDArray[np.bool_]  # the board is full afterwards
    x_to_move: npt.NDArray[np.bool_]  # (n,)

    @property
    def terminal(self) -> npt.NDArray[np.bool_]:
        return self.won | self.full


def expand(game: MnkGame, x: U64, o: U64) -> Children:
    """The children of the positions ``(x[i], o[i])`` (none of them finished)."""
    cells = game.cells
    bits = np.uint64(1) << np.arange(cells, dtype=np.uint64)
    x_to_move = np.bitwise_count(x) == np.bitwise_count(o)
    legal = (playable_masks(game, x | o)[:, None] & bits) != 0
    mover = np.where(x_to_move, x, o)[:, None] | bits
    won = np.zeros((len(x), cells), dtype=bool)
    for cell in range(cells):
        won[:, cell] = has_line_through(game, mover[:, cell], cell)
    cx = np.where(x_to_move[:, None], mover, x[:, None])
    co = np.where(x_to_move[:, None], o[:, None], mover)
    full = (cx | co) == np.uint64(game.full_mask)
    return Children(cx, co, legal, won & legal, full & legal, x_to_move)


def child_keys(game: MnkGame, x: U64, o: U64, *, canonical: bool = True) -> U64:
    """``(n, cells)``: the canonical (or, with ``canonical=False``, seed 003's raw base-3)
    key after each move of each position, legal or not.

    Adds each move's digit to the parents' keys under every symmetry instead of moving
    every child board: about twenty times faster than keying the children afresh.
    """
    x_to_move = np.bitwise_count(x) == np.bitwise_count(o)
    digit = np.where(x_to_move, 1, 2).astype(np.uint64)[:, None]
    pow3 = np.array([[cell_weight(game, perm[c]) for c in range(game.cells)]
                     for perm in game.symmetries], dtype=np.uint64)
    parents = symmetric_keys(game, x, o) if canonical else base3_keys(game, x, o)[:, None]
    out = np.empty((len(x), game.cells), dtype=np.uint64)
    for cell in range(game.cells):
        out[:, cell] = (parents + digit * pow3[: parents.shape[1], cell]).min(axis=1)
    return out


def table_keys(table: HashTable) -> U64:
    """The keys ``table`` holds, ascending, with the empty board's (0) among them: one array
    of 8 bytes an entry (no index of slots)."""
    held = table.keys != EMPTY
    keys = np.empty(int(held.sum()) + 1, dtype=np.uint64)
    keys[0] = 0
    keys[1:] = table.keys[held]
    del held
    keys.sort()
    return keys[1:] if len(keys) > 1 and keys[1] == 0 else keys


def children_of(game: MnkGame, table: HashTable, keys: U64, *, canonical: bool
                ) -> tuple[Children, npt.NDArray[np.int64]]:
    """The children of the positions ``keys`` and the slot in ``table`` of each child (-1
    where it holds none); keys are canonical or, with ``canonical=False``, seed 003's raw
    base-3 keys."""
    x, o = boards_of(game, keys)
    kids = expand(game, x, o)
    found = table.lookup(child_keys(game, x, o, canonical=canonical).ravel())
    return kids, found.reshape(kids.x.shape)


@dataclass(frozen=True)
class ExportShape:
    """How a table learner exports: afterstate rows read off the table (td) or sums
    pooled over the symmetric images of raw positions (``pooled``: tally, qlearning, with
    ``width`` sums a cell and ``held`` bytes an entry of their own). The table grows only
    while the export of the grown table still fits the memory limit (:meth:`estimate`),
    so a learner stopped by the limit can always write what it learned (issue 28)."""

    what: str  # "a td table"
    pooled: bool = False
    width: int = 1
    held: int = 8
    seconds: float = TABLE_SECONDS  # an entry and cell

    def estimate(self, game: MnkGame, *, entries: int, capacity: int) -> budget.Estimate:
        """The most the export of a table of ``entries`` keys in ``capacity`` slots asks
        for: the larger of its checks, every entry taken to give a row."""
        if not self.pooled:
            return afterstate_estimate(game, self.what, entries=entries + 1,
                                       capacity=capacity)
        sorting = budget.Estimate(f"exporting {self.what} of {entries:,} entries",
                                  entries * (self.held + SORT_BYTES), positions=entries)
        rows = export_estimate(game, self.what, entries=entries, rows=entries,
                               held=self.held + 16, width=self.width * POOLED_COPIES,
                               seconds_per_entry_cell=self.seconds)
        return max(sorting, rows, key=lambda e: e.bytes)


def afterstate_estimate(game: MnkGame, what: str, *, entries: int, capacity: int
                        ) -> budget.Estimate:
    """What exporting ``entries`` afterstate rows of a table of ``capacity`` slots needs:
    the sorted keys and the slots' order (``capacity // entries`` bytes an entry more)."""
    return export_estimate(game, what, entries=entries, rows=entries,
                           held=8 + capacity // entries)


def export_estimate(game: MnkGame, what: str, *, entries: int, rows: int, held: int,
                    width: int = 1, seconds_per_entry_cell: float = TABLE_SECONDS
                    ) -> budget.Estimate:
    """The memory an export needs beyond the learner's table: ``held`` bytes an entry of
    index arrays, the model's arrays (``rows`` of them) and one chunk's work (``width``
    float64 sums a cell); and its time, ``seconds_per_entry_cell`` an entry and cell."""
    need = entries * held + rows * (8 + 4 * game.cells) \
        + CHUNK * game.cells * (CHUNK_BYTES_PER_CELL + 8 * width)
    return budget.Estimate(f"exporting {what} of {entries:,} entries", need,
                           entries * game.cells * seconds_per_entry_cell, positions=entries)


def stream_rows(keys: U64, cells: int, rows_of: Callable[[U64], F64]) -> tuple[U64, F32]:
    """The model's keys and rows: ``rows_of(chunk)`` for each chunk of ascending ``keys``,
    clipped to [-1, 1] as float32, positions whose row is all NaN left out."""
    out_keys = np.empty(len(keys), dtype=np.uint64)
    out = np.empty((len(keys), cells), dtype=np.float32)
    n = 0
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start:start + CHUNK]
        rows = rows_of(chunk)
        keep = ~np.isnan(rows).all(axis=1)
        k = int(keep.sum())
        out_keys[n:n + k] = chunk[keep]
        out[n:n + k] = np.clip(rows[keep], -1.0, 1.0)
        n += k
    return out_keys[:n], out[:n]


def stream_pooled(game: MnkGame, raw_keys: U64, sums_of: Callable[[npt.NDArray[np.intp]], F64],
                  finish: Callable[[U64, F64], F64], *, what: str, held: int, width: int,
                  seconds_per_entry_cell: float,
                  nonempty: Callable[[npt.NDArray[np.intp]], npt.NDArray[np.bool_]] | None = None
                  ) -> tuple[U64, F32]:
    """Per-cell sums of raw positions pooled over their symmetric images, then ``finish``
    chunk by chunk: the model's canonical keys and rows. ``sums_of(i)`` gives the sums
    (``width`` a cell) of the raw positions ``raw_keys[i]``; ``finish(canonical_keys,
    pooled_sums)`` turns pooled sums into rows; the caller holds ``held`` bytes an entry.
    ``nonempty(i)``, where given, says which raw positions hold anything: a canonical
    position none of whose images does gives no row (tally's untouched entries), so the
    estimate counts only the rows that will be written (and so made resident).

    Raises:
        OverBudget: the export would not fit the memory limit: checked before the
            canonical keys are computed, and again, with the number of rows known, before
            the model's arrays are allocated.
    """
    n = len(raw_keys)
    if n == 0:
        return np.zeros(0, dtype=np.uint64), np.zeros((0, game.cells), dtype=np.float32)
    seconds = n * game.cells * seconds_per_entry_cell
    budget.require(budget.Estimate(f"exporting {what} of {n:,} entries",
                                   n * (held + SORT_BYTES), seconds, positions=n))
    ckeys = np.empty(len(raw_keys), dtype=np.uint64)
    for start in range(0, len(raw_keys), CHUNK):
        x, o = boards_of(game, raw_keys[start:start + CHUNK])
        ckeys[start:start + CHUNK] = canonical_keys(game, x, o)
    order = np.argsort(ckeys, kind="stable")
    ckeys = ckeys[order]
    starts = np.flatnonzero(np.concatenate([[True], ckeys[1:] != ckeys[:-1], [True]]))
    groups = len(starts) - 1
    unique = ckeys[starts[:-1]]
    del ckeys
    rows = groups
    if nonempty is not None:
        full = np.zeros(groups, dtype=bool)
        for start in range(0, n, CHUNK):
            part = order[start:start + CHUNK]
            group = np.searchsorted(starts, np.arange(start, start + len(part)),
                                    side="right") - 1
            full[group[nonempty(part)]] = True
        rows = int(full.sum())
        del full
    budget.require(export_estimate(game, what, entries=n, rows=rows, held=held + 16,
                                   width=width * POOLED_COPIES,
                                   seconds_per_entry_cell=seconds_per_entry_cell))

    def rows_of(first: int, last: int) -> F64:  # the groups first..last-1
        entries = order[starts[first]:starts[last]]
        canonical, sums = to_canonical(game, raw_keys[entries], sums_of(entries))
        group = np.searchsorted(unique[first:last], canonical)
        pooled = np.zeros((last - first, *sums.shape[1:]), dtype=np.float64)
        np.add.at(pooled, group, sums)
        return finish(unique[first:last], pooled)

    out_keys = np.empty(rows, dtype=np.uint64)  # only the rows that will be written
    out = np.empty((rows, game.cells), dtype=np.float32)
    n = first = 0
    while first < groups:  # chunks of about CHUNK entries, never splitting a group
        last = int(np.searchsorted(starts, starts[first] + CHUNK, side="right")) - 1
        last = min(max(last, first + 1), groups)
        values = rows_of(first, last)
        keep = ~np.isnan(values).all(axis=1)
        k = int(keep.sum())
        if n + k > len(out_keys):  # nonempty() missed a row: never lose it
            out_keys = np.resize(out_keys, groups)
            out = np.resize(out, (groups, game.cells))
        out_keys[n:n + k] = unique[first:last][keep]
        out[n:n + k] = np.clip(values[keep], -1.0, 1.0)
        n, first = n + k, last
    return out_keys[:n], out[:n]


def boards_of(game: MnkGame, keys: U64) -> tuple[U64, U64]:
    """The boards of base-3 ``keys``."""
    return masks_from_base3(game, np.asarray(keys, dtype=np.uint64))


def to_canonical(game: MnkGame, raw_keys: U64, rows: npt.NDArray[np.generic]
                 ) -> tuple[U64, npt.NDArray[np.generic]]:
    """Each raw position's canonical key, and its per-cell ``rows`` (axis 1 is the cell)
    moved into the canonical orientation."""
    x, o = boards_of(game, raw_keys)
    ckeys, syms = canonical_keys_and_syms(game, x, o)
    inverse = np.array(game.inverse_symmetries, dtype=np.intp)[syms.astype(np.intp)]
    index = inverse.reshape(inverse.shape + (1,) * (rows.ndim - 2))
    return ckeys, np.take_along_axis(rows, index, axis=1)
