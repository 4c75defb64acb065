"""A growable open-addressing hash table from position keys to rows of learner values.

A 3**cells array indexed by key is fine for tic-tac-toe (19,683 rows) but not for
four-in-a-row (43 million), so every learner keeps only the positions it has met: keys in
a power-of-two array probed linearly, values in parallel column arrays. Kernels find and
insert with :func:`find` and :func:`insert` (through the stores' compiled interface,
:func:`gameai.trainer.learners.stores.lookup` and ``claim``, on its :class:`HashStore`);
the Python side grows the table between batches of games (:meth:`HashTable.reserve`), so a
kernel never runs out of room.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numba as nb
import numpy as np
import numpy.typing as npt

from gameai.games.budget import Estimate, require
from gameai.trainer.learners import stores
from gameai.trainer.learners.stores import Column, implement
from gameai.trainer.walkers.rng import U64

EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # above every base-3 key of 40 cells (3**40 < 2**64)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MAX_LOAD = 0.5


@nb.njit(cache=True)
def find(keys: U64, key: np.uint64) -> int:
    """The slot of ``key``, or -1 if absent."""
    mask = keys.shape[0] - 1
    i = int((key * _GOLDEN) >> np.uint64(32)) & mask
    while keys[i] != key and keys[i] != EMPTY:
        i = (i + 1) & mask
    return i if keys[i] == key else -1


@nb.njit(cache=True)
def insert(keys: U64, used: npt.NDArray[np.int64], key: np.uint64) -> int:
    """The slot of ``key``, claiming a free one if absent (``used[0]`` counts the keys)."""
    mask = keys.shape[0] - 1
    i = int((key * _GOLDEN) >> np.uint64(32)) & mask
    while keys[i] != key and keys[i] != EMPTY:
        i = (i + 1) & mask
    if keys[i] == EMPTY:
        keys[i] = key
        used[0] += 1
    return i


@nb.njit(cache=True)
def _rehash(old: U64, new: U64, moved_to: npt.NDArray[np.int64]) -> None:
    used = np.zeros(1, dtype=np.int64)
    for i in range(old.shape[0]):
        if old[i] != EMPTY:
            moved_to[i] = insert(new, used, old[i])


@nb.njit(cache=True)
def find_many(keys: U64, queries: U64) -> npt.NDArray[np.int64]:
    """:func:`find` for an array of keys."""
    out = np.empty(queries.shape[0], dtype=np.int64)
    for j in range(queries.shape[0]):
        out[j] = find(keys, queries[j])
    return out


@nb.njit(cache=True)
def insert_many(keys: U64, used: npt.NDArray[np.int64], queries: U64) -> npt.NDArray[np.int64]:
    """:func:`insert` for an array of keys, in order."""
    out = np.empty(queries.shape[0], dtype=np.int64)
    for j in range(queries.shape[0]):
        out[j] = insert(keys, used, queries[j])
    return out


class HashStore(NamedTuple):
    """A :class:`HashTable` as the kernels take it."""

    keys: U64
    used: npt.NDArray[np.int64]


# The stores' compiled interface for a HashStore: find and insert again, inlined into the
# kernels and written as :mod:`gameai.trainer.walkers.bitboard` explains (no call, no
# array in a variable, one way out), so that numba's reference counts on the store's
# arrays cancel out.

def _lookup_impl(store, key):
    mask = store.keys.shape[0] - 1
    i = int((key * _GOLDEN) >> np.uint64(32)) & mask
    while store.keys[i] != key and store.keys[i] != EMPTY:
        i = (i + 1) & mask
    return i if store.keys[i] == key else -1


def _claim_impl(store, key):
    mask = store.keys.shape[0] - 1
    i = int((key * _GOLDEN) >> np.uint64(32)) & mask
    while store.keys[i] != key and store.keys[i] != EMPTY:
        i = (i + 1) & mask
    if store.keys[i] == EMPTY:
        store.keys[i] = key
        store.used[0] += 1
    return i


implement(stores.lookup, HashStore, _lookup_impl)
implement(stores.claim, HashStore, _claim_impl)


class HashTable:
    """Keys and named value columns, e.g. ``HashTable({"v": (np.float64, (), 0.5)})``.

    ``table.columns[name][slot]`` is a row; unused slots hold the column's initial value,
    so a newly inserted key starts from it without the kernel writing anything.
    """

    def __init__(self, columns: dict[str, Column], *, capacity: int = 1024) -> None:
        self.specs = dict(columns)
        cap = 1 << max(4, (capacity - 1).bit_length())
        self.keys = np.full(cap, EMPTY, dtype=np.uint64)
        self.used = np.zeros(1, dtype=np.int64)
        self.columns = {name: self._blank(name, cap) for name in self.specs}

    def __len__(self) -> int:
        return int(self.used[0])

    def compiled(self) -> HashStore:
        return HashStore(self.keys, self.used)

    @property
    def capacity(self) -> int:
        return int(self.keys.shape[0])

    def reserve(self, more: int, *,
                room_for: Callable[[int, int], Estimate] | None = None) -> None:
        """Make room for ``more`` new keys at a load of at most one half.

        ``room_for(entries, capacity)``: the work the grown table must still fit under the
        memory limit once it holds as many keys as it may (its owner's export), checked
        with the growth itself.

        Raises:
            OverBudget: growing (or the work after it) would not fit; nothing changed.
        """
        need = len(self) + more
        if need <= self.capacity * _MAX_LOAD:
            return
        cap = self.capacity
        while need > cap * _MAX_LOAD:
            cap *= 2
        # the old arrays, the new ones and the rehash's map live at once: refuse before
        # any of it is allocated when that is over the memory limit (a table learner on a
        # board of hundreds of millions of positions otherwise takes the host down)
        per_slot = 8 + sum(np.dtype(dtype).itemsize * int(np.prod(shape))
                           for dtype, shape, _ in self.specs.values())
        require(Estimate(f"growing a learner's table from {self.capacity:,} to {cap:,} "
                         f"slots ({need:,} positions)",
                         bytes=self.nbytes() + cap * per_slot + self.capacity * 8))
        if room_for is not None:
            later = room_for(int(cap * _MAX_LOAD), cap)
            require(Estimate(f"growing a learner's table from {self.capacity:,} to {cap:,} "
                             f"slots leaves no room for its export: {later.what}",
                             later.bytes, later.seconds, later.positions))
        keys = np.full(cap, EMPTY, dtype=np.uint64)
        moved_to = np.full(self.capacity, -1, dtype=np.int64)
        _rehash(self.keys, keys, moved_to)
        live = moved_to >= 0
        for name, old in self.columns.items():
            fresh = self._blank(name, cap)
            fresh[moved_to[live]] = old[live]
            self.columns[name] = fresh
        self.keys = keys

    def slots(self) -> npt.NDArray[np.int64]:
        """The occupied slots, in ascending key order (so exports are deterministic)."""
        occupied = np.flatnonzero(self.keys != EMPTY)
        return occupied[np.argsort(self.keys[occupied], kind="stable")]

    def lookup(self, keys: U64) -> npt.NDArray[np.int64]:
        """Slots of ``keys``, -1 where absent."""
        return find_many(self.keys, np.ascontiguousarray(keys, dtype=np.uint64))

    def claim(self, keys: U64) -> npt.NDArray[np.int64]:
        """Slots of ``keys``, inserting the absent ones in order (room must be reserved)."""
        return insert_many(self.keys, self.used, np.ascontiguousarray(keys, dtype=np.uint64))

    def held(self) -> npt.NDArray[np.int64]:
        return self.slots()

    def per_move(self, name: str) -> npt.NDArray[Any]:
        """Column ``name``, whose rows are ``(moves, *shape)``, as ``(slots * moves, *shape)``
        (a view: the row of a slot's move ``m`` is ``slot * moves + m``)."""
        column = self.columns[name]
        return column.reshape(-1, *column.shape[2:])

    def nbytes(self) -> int:
        return int(self.keys.nbytes + sum(c.nbytes for c in self.columns.values()))

    def _blank(self, name: str, cap: int) -> npt.NDArray[Any]:
        dtype, shape, initial = self.specs[name]
        return np.full((cap, *shape), initial, dtype=dtype)
