"""What a walker is: how self-play moves through a game, behind one interface.

Each learner (td, qlearning, tally) is one numba kernel written against the functions
below; each walker module implements them for its own compiled type (a ``NamedTuple`` of
arrays: :class:`gameai.trainer.walkers.bitboard.BitboardSpec`,
:class:`gameai.trainer.walkers.position_graph.PositionGraphSpec`) with
:func:`gameai.trainer.learners.stores.implement`, so numba compiles one specialisation of a
kernel per walker, with the walker's code inlined as if written there (no indirection is
left at run time), and caches each one (``cache=True``). Called from Python, the same
functions run the walker's implementation as Python: a kernel's ``py_func`` is its
plain-Python twin.

A game in progress is a *state*, a tuple of scalars the walker defines and the kernels
only pass along; the walker's own scratch arrays (occurrence counts, symmetric keys) live
in its compiled value. The moves of a state are listed once (:func:`list_moves`) and then
named by their index ``j`` in that list.

Keys: a walker gives the key of a position as played (:func:`position_key`,
:func:`child_key`: what seed 003's tables and tallies are keyed by) and of an
*afterstate*, shared by the symmetric images of a position when the walker is built with
``symmetric=True`` (:func:`afterstate_key`, :func:`position_afterstate_key`: seed 004's
shared values). Learners keep values for keys in a position store
(:mod:`gameai.trainer.learners.stores`) the walker makes.

The Python half of a walker (:class:`Walker`) builds its compiled value, makes the stores,
and reads stores back out into a model for the learners' exports and warm starts.

Numba checks a cached kernel against the kernel's own source file only: after editing a
walker or a store, delete the caches (``find gameai -name '*.nb[ic]' -delete``), or the
kernels keep the code they were compiled with.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

import numpy as np
import numpy.typing as npt

from gameai.games import Game
from gameai.models import Model, ModelInfo, TableModel
from gameai.trainer.learners.base import Params
from gameai.trainer.learners.stores import Column, PositionStore, python_implementation

if TYPE_CHECKING:
    from gameai.trainer.learners.export import ExportShape

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
GO_ON, WIN, DRAW = 0, 1, 2  # what a move does for its mover (move_result)


# -- the compiled interface (each walker implements it for its type) --------------------

def begin(walker: Any, rng: Any, share: float) -> Any:
    """A new game's state. With probability ``share`` it is an exploring start, as the
    walker makes one (random opening moves, or a position drawn at random)."""
    return python_implementation(begin, walker)(walker, rng, share)


def exploring(walker: Any, state: Any) -> bool:
    """Whether the next move belongs to an exploring start (uniformly random, not the
    policy's: the kernel draws it)."""
    return python_implementation(exploring, walker)(walker, state)


def starts_inside(walker: Any, state: Any) -> bool:
    """Whether the game began at a position other than the initial one (that position is
    then an afterstate of the side not to move there)."""
    return python_implementation(starts_inside, walker)(walker, state)


def mover(walker: Any, state: Any) -> int:
    """The side to move: 0 (X) or 1 (O)."""
    return python_implementation(mover, walker)(walker, state)


def list_moves(walker: Any, state: Any, moves: Any) -> int:
    """How many moves ``state`` has; the walker may write into ``moves`` (an int64 buffer
    of ``walker.max_moves``) what it needs to name them."""
    return python_implementation(list_moves, walker)(walker, state, moves)


def move_result(walker: Any, state: Any, moves: Any, j: int) -> int:
    """What move ``j`` does for its mover: :data:`WIN`, :data:`DRAW` (by the rules, or the
    draw rule's third occurrence) or :data:`GO_ON`."""
    return python_implementation(move_result, walker)(walker, state, moves, j)


def afterstate_key(walker: Any, state: Any, moves: Any, j: int) -> Any:
    """The key of the position move ``j`` leads to, shared by its symmetric images when
    the walker shares them."""
    return python_implementation(afterstate_key, walker)(walker, state, moves, j)


def position_afterstate_key(walker: Any, state: Any) -> Any:
    """The current position's own afterstate key."""
    return python_implementation(position_afterstate_key, walker)(walker, state)


def position_key(walker: Any, state: Any) -> Any:
    """The key of the current position as played (no symmetry)."""
    return python_implementation(position_key, walker)(walker, state)


def child_key(walker: Any, state: Any, moves: Any, j: int) -> Any:
    """The key, as played, of the position move ``j`` leads to."""
    return python_implementation(child_key, walker)(walker, state, moves, j)


def move_row(walker: Any, state: Any, slot: int, moves: Any, j: int) -> int:
    """The row of move ``j`` of the current position, whose slot in a position store is
    ``slot``, in that store's per-move columns (:meth:`PositionStore.per_move`)."""
    return python_implementation(move_row, walker)(walker, state, slot, moves, j)


def play(walker: Any, state: Any, moves: Any, j: int) -> Any:
    """The state after move ``j`` (a move that ends the game included)."""
    return python_implementation(play, walker)(walker, state, moves, j)


def finish(walker: Any, state: Any) -> None:
    """The game is over: clear what the walker kept of it."""
    return python_implementation(finish, walker)(walker, state)


# -- the Python half ---------------------------------------------------------------------

class Moves(Protocol):
    """Moves of positions, as arrays of one shape (a walker's choice: positions x actions,
    or one flat list of moves), for a learner's export to read its values at."""

    @property
    def legal(self) -> npt.NDArray[np.bool_]: ...

    @property
    def result(self) -> npt.NDArray[np.int8]:
        """:data:`WIN`, :data:`DRAW` or :data:`GO_ON` for the mover."""

    @property
    def mover(self) -> npt.NDArray[np.intp]: ...

    @property
    def afterstate(self) -> I64:
        """The store's slot of each move's afterstate key (-1: none held)."""

    @property
    def child(self) -> I64:
        """The store's slot of each move's position as played (-1: none held)."""

    @property
    def row(self) -> I64:
        """Each move's row in the store's per-move columns."""


RowsOf = Callable[[Moves], F64]
Finish = Callable[[npt.NDArray[np.bool_], F64], F64]
Nonempty = Callable[[Moves], npt.NDArray[np.bool_]]


class Walker(abc.ABC):
    """The Python half of a walker for ``game``: its compiled value (:attr:`spec`), the
    position stores, and the reading of stores into models."""

    method: ClassVar[str]  # the name a game asks for (gameai.games.Game.walker)
    spec: tuple[Any, ...]  # the compiled walker (a NamedTuple) the kernels take

    def __init__(self, game: Game, *, symmetric: bool) -> None:
        self.game = game
        self.symmetric = symmetric

    # -- parameters ------------------------------------------------------------------------

    @classmethod
    def params_type(cls, base: type[Params]) -> type[Params]:
        """A learner's parameters on this walker: ``base`` and what the walker adds."""
        return base

    @abc.abstractmethod
    def start_share(self, params: Params) -> float:
        """The share of games that are exploring starts, from the learner's parameters."""

    # -- stores ------------------------------------------------------------------------------

    @abc.abstractmethod
    def new_store(self, columns: dict[str, Column], *, keys: Literal["afterstates", "positions"],
                  visits: str, per_move: dict[str, Column] | None = None) -> PositionStore:
        """An empty store of ``columns`` for afterstate or position keys; ``visits`` names
        the column that counts visits; ``per_move`` columns have a row for every move of
        a position (:func:`move_row`)."""

    @abc.abstractmethod
    def reserve(self, store: PositionStore, games: int,
                export: ExportShape | None = None) -> None:
        """Make room in ``store`` for what ``games`` more games can add, leaving room
        under the memory limit for an ``export`` of the grown store.

        Raises:
            OverBudget: the store may not grow; nothing was changed.
        """

    # -- exports ------------------------------------------------------------------------------

    @abc.abstractmethod
    def afterstate_model(self, store: PositionStore, rows_of: RowsOf, *, what: str,
                         info: ModelInfo) -> Model:
        """A model whose rows are ``rows_of(moves)`` for the positions the learner knows
        (from a store of afterstates): each move's value, NaN where unknown."""

    @abc.abstractmethod
    def pooled_model(self, store: PositionStore, sums_of: RowsOf, finish: Finish, *,
                     what: str, width: int, held: int, seconds: float, start: bool,
                     info: ModelInfo, nonempty: Nonempty | None = None) -> Model:
        """A model from a store of positions as played: ``sums_of(moves)`` gives
        ``width`` sums a move of each position the store holds (and of the initial
        position with ``start``), which are added up over the symmetric images of a
        position in its canonical orientation; ``finish(x_to_move, pooled)`` turns a
        canonical position's pooled sums into its row. ``held`` and ``seconds`` size the
        export (bytes a store entry the caller holds meanwhile, seconds an entry and
        cell) for the memory and time limits; ``nonempty(moves)``, where given, says which
        positions hold anything, so that an estimate counts only the rows to be written."""

    # -- warm starts ------------------------------------------------------------------------

    @abc.abstractmethod
    def model_afterstates(self, model: Model, store: PositionStore) -> tuple[I64, F64]:
        """Claimed slots of the live afterstates that ``model``'s moves lead to, and the
        value of such a move for each."""

    @abc.abstractmethod
    def model_successors(self, model: Model, store: PositionStore
                         ) -> tuple[I64, I64, npt.NDArray[np.intp], F64]:
        """``(positions, children, movers, values)``: claimed slots of the positions
        ``model`` values and of the live positions its known moves lead to (as played),
        the side that moves there, and the move's value."""

    @abc.abstractmethod
    def model_moves(self, model: Model, store: PositionStore
                    ) -> tuple[I64, I64, npt.NDArray[np.intp], F64]:
        """``(positions, rows, movers, values)`` of moves of the positions ``model``
        values: claimed slots, per-move rows, the side to move, the model's value (NaN
        where it has none)."""

    def table(self, model: Model) -> TableModel:
        """``model`` as the table a warm start reads.

        Raises:
            ValueError: it is not a table, or of another game.
        """
        if not isinstance(model, TableModel):
            raise ValueError("warm start needs a table model")
        if model.game.name != self.game.name:
            raise ValueError(f"the model plays {model.game.name}, not {self.game.name}")
        return model


def table_model(game: Game, info: ModelInfo, keys: npt.NDArray[np.uint64], rows: F64) -> Model:
    """A :class:`TableModel` of canonical ``keys`` (in any order) and ``rows``, without the
    rows that are all NaN, values clipped to [-1, 1]."""
    keep = ~np.isnan(rows).all(axis=1)
    values = np.clip(rows[keep], -1.0, 1.0).astype(np.float32)
    return TableModel.from_unsorted(game, info, keys[keep], values)
