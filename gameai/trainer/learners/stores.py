"""Where the table learners keep their values: one interface over two position stores.

A learner's values are columns of rows, one row a position (or afterstate) key. What a key
is depends on the walker (:mod:`gameai.trainer.walkers`): a base-3 board key of up to 64
bits (the bitboard walker), or a position's id in the game's state graph (the
position-graph walker). So there are two stores:

* :class:`gameai.trainer.learners.hashtable.HashTable`: a growable hash table of the keys
  met so far (four-in-a-row has 3**16 keys, of which self-play meets a few million);
* :class:`DenseTable`: an array row for every id, no hashing (every position of a game
  small enough to enumerate).

The kernels see a store through two functions, :func:`lookup` (the slot of a key, or -1
where the store holds nothing for it) and :func:`claim` (the slot of a key, taking one if
need be), whose implementation numba picks by the store's compiled type
(:class:`HashStore`, :class:`DenseStore`) at compile time and inlines (:func:`implement`:
the walkers' functions are made the same way). Python code sees both stores through
:class:`PositionStore`.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt
from numba.core.errors import NumbaIRAssumptionWarning
from numba.extending import overload

I64 = npt.NDArray[np.int64]
Column = tuple[Any, tuple[int, ...], float]  # dtype, shape of one row, initial value

# Numba's inliner leaves the variables of an inlined function that branches or loops out
# of the caller's scope table, and a pedantic check then warns once per variable when the
# kernel compiles; the compiled code is right (tests/trainer/test_same_models.py), so the
# warning is silenced for the implementations registered here (named *_impl).
warnings.filterwarnings("ignore", message=r"variable '_\w+_impl_v\d+_",
                        category=NumbaIRAssumptionWarning)


# -- the compiled interface: each store's module implements it for its type -------------

def lookup(store: Any, key: Any) -> int:
    """The slot of ``key`` in ``store``, or -1 where it holds nothing for it."""
    return python_implementation(lookup, store)(store, key)


def claim(store: Any, key: Any) -> int:
    """The slot of ``key`` in ``store``, taking a free one if it holds none."""
    return python_implementation(claim, store)(store, key)


class PositionStore(Protocol):
    """What learners and walkers ask of a store from Python."""

    columns: dict[str, npt.NDArray[Any]]  # a row per slot

    def __len__(self) -> int:
        """How many keys the store holds."""

    def compiled(self) -> tuple[Any, ...]:
        """The store as its kernels take it (valid until the next :meth:`reserve`)."""

    def reserve(self, more: int) -> None:
        """Make room for ``more`` new keys (before a kernel call: kernels never grow it)."""

    def lookup(self, keys: npt.NDArray[Any]) -> I64:
        """Slots of ``keys``, -1 where the store holds nothing for them."""

    def claim(self, keys: npt.NDArray[Any]) -> I64:
        """Slots of ``keys``, taken where the store held none (in order)."""

    def held(self) -> I64:
        """The slots the store holds something in, in ascending key order."""

    def per_move(self, name: str) -> npt.NDArray[Any]:
        """Column ``name`` of per-(position, move) rows as one flat array of rows; the
        walker says which row a position's move has (its compiled ``move_row``)."""

    def nbytes(self) -> int:
        """The bytes of its arrays."""


_IMPLEMENTATIONS: dict[tuple[Callable[..., Any], type], Callable[..., Any]] = {}


def python_implementation(stub: Callable[..., Any], spec: Any) -> Callable[..., Any]:
    """The implementation of ``stub`` for ``spec``'s type, as Python: a kernel's plain
    Python function (``kernel.py_func``) runs the walkers' and stores' code through the
    stubs, the plain-Python twin of the compiled kernel (tests/trainer)."""
    try:
        return _IMPLEMENTATIONS[stub, type(spec)]
    except KeyError:
        raise NotImplementedError(f"{stub.__name__} has no implementation for "
                                  f"{type(spec).__name__}") from None


def implement(stub: Callable[..., Any], spec_type: type, impl: Callable[..., Any]) -> None:
    """Make ``impl`` the implementation of the compiled function ``stub`` where its first
    argument is a ``spec_type`` (a store's or a walker's compiled NamedTuple): each store
    and walker registers its own implementations of the same functions, and numba inlines
    them into the kernel that calls them (a call would pass the whole NamedTuple, and
    count references to its arrays: measured, a quarter of td's time on tic-tac-toe).
    Name an implementation that branches or loops ``*_impl``."""

    def typing(*args: Any) -> Callable[..., Any] | None:
        return impl if getattr(args[0], "instance_class", None) is spec_type else None

    typing.__signature__ = inspect.signature(impl)  # type: ignore[attr-defined]  # numba
    # wants the typing function's parameters to be the implementation's
    overload(stub, inline="always")(typing)
    _IMPLEMENTATIONS[stub, spec_type] = impl


# -- the dense store --------------------------------------------------------------------

class DenseStore(NamedTuple):
    """A :class:`DenseTable` as the kernels take it: the key is the slot."""

    size: int


implement(lookup, DenseStore, lambda store, key: key)
implement(claim, DenseStore, lambda store, key: key)


class DenseTable:
    """A row for every id in ``range(size)`` (``columns`` as for
    :class:`~gameai.trainer.learners.hashtable.HashTable`), and per-move columns of
    ``moves`` rows each (``per_move``: name -> (dtype, shape, initial, rows)).

    Every id has its row, so the kernels never hash; the store *holds* an id once its
    ``visits`` column (a count the learner keeps) is positive: :meth:`lookup` answers -1
    for the others, so an export leaves out what was never visited, and :meth:`claim` sets
    the count to at least 1.
    """

    def __init__(self, size: int, columns: dict[str, Column], *, visits: str,
                 per_move: dict[str, tuple[Any, tuple[int, ...], float, int]] | None = None
                 ) -> None:
        self.size = size
        self.columns = {name: np.full((size, *shape), initial, dtype=dtype)
                        for name, (dtype, shape, initial) in columns.items()}
        self.visits = visits
        self.moves = {name: np.full((rows, *shape), initial, dtype=dtype)
                      for name, (dtype, shape, initial, rows) in (per_move or {}).items()}

    def __len__(self) -> int:
        return int(np.count_nonzero(self.columns[self.visits] > 0))

    def compiled(self) -> DenseStore:
        return DenseStore(self.size)

    def reserve(self, more: int) -> None:
        """Nothing to do: every id has its row."""

    def lookup(self, keys: npt.NDArray[Any]) -> I64:
        keys = np.asarray(keys, dtype=np.int64)
        return np.where(self.columns[self.visits][keys] > 0, keys, -1)

    def claim(self, keys: npt.NDArray[Any]) -> I64:
        keys = np.asarray(keys, dtype=np.int64)
        visits = self.columns[self.visits]
        visits[keys] = np.maximum(visits[keys], 1)
        return keys

    def held(self) -> I64:
        return np.flatnonzero(self.columns[self.visits] > 0)

    def per_move(self, name: str) -> npt.NDArray[Any]:
        return self.moves[name]

    def nbytes(self) -> int:
        return int(sum(c.nbytes for c in (*self.columns.values(), *self.moves.values())))
