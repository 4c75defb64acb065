"""The model artifact: the value of every legal move of a position, from the mover's view.

A model answers for one game, of any family (:mod:`gameai.games.interface`). It stores one
value per action id for canonical positions only and answers any position by mapping it
onto its canonical image and the values back (action ``a`` on the position is action
``action_symmetries[sym][a]`` on the image). For an m,n,k game the actions are the cells,
so a row holds one value per cell; a morris row holds 90 (placements and movements).
Values lie in [-1, 1]: 1 a certain win, 0 a draw, -1 a certain loss. A move the model
has no value for (a position it never saw, or a move it never tried there) is answered 0
and marked ``unknown``: 0 is what the model plays it as, not a claim that it draws.

Two forms share the interface:

* :class:`TableModel`: sorted canonical keys and a ``(positions, num_actions)`` table.
* :class:`MlpModel` (seed 004, m,n,k games): a one-hidden-layer tanh network from the
  canonical board (+1 mover, -1 opponent, 0 empty) to move values, plus an exceptions table
  of exact values for the positions where the network's best move differs from its
  teacher's.

Ties between equal values go to the lowest action id (for m,n,k games the lowest cell),
so answers are deterministic.
"""

from __future__ import annotations

import abc
import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from gameai.games import Game, GameError, State
from gameai.games.interface import Batch
from gameai.games.mnk.board import playable_masks
from gameai.games.mnk.game import MnkGame, as_mnk
from gameai.games.mnk.keys import (
    U64,
    canonical_keys_and_syms,
    masks_from_base3,
    transform_masks,
)
from gameai.models.container import CorruptModel, encode
from gameai.models.info import ModelInfo

F32 = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class MoveValue:
    """A move (where the piece goes and, for a movement, where from) and its value."""

    index: int
    row: int
    col: int
    value: float
    from_index: int | None = None
    from_row: int | None = None
    from_col: int | None = None
    action: int = -1  # the action id; -1 means the same as index (a placement)
    unknown: bool = False  # no value learned for it: ``value`` is 0 only as a stand-in

    @property
    def action_id(self) -> int:
        return self.index if self.action < 0 else self.action


@dataclass(frozen=True, slots=True)
class Evaluation:
    to_move: str
    value: float  # the best move's value: the position's value for the side to move
    moves: tuple[MoveValue, ...]  # every legal move, best first

    @property
    def best(self) -> MoveValue:
        return self.moves[0]


@dataclass(frozen=True)
class SearchReport:
    """What a search within a budget used: the depth it finished (``complete`` when that is
    the depth asked for), the nodes it searched and its time."""

    depth: int
    nodes: int
    seconds: float
    complete: bool
    exact: bool = False  # it saw the end of every line: its values are the game's outcomes


class Model(abc.ABC):
    """Answers best-move and evaluate queries for every board of one game."""

    kind: ClassVar[str]

    def __init__(self, game: Game, info: ModelInfo) -> None:
        if info.game != game.name:
            raise ValueError(f"model info is for {info.game}, not {game.name}")
        self.game = game
        self.info = info
        self._perms = np.array(game.action_symmetries, dtype=np.intp)

    # -- queries -------------------------------------------------------------------------

    def evaluate(self, board: State) -> Evaluation:
        """Every legal move's value, best first.

        Raises:
            GameOver: the board is finished.
            GameError: the board is of another game.
        """
        self._check(board)
        key, sym = board.canonical()
        row = self._canonical_row(key, board, sym)
        values = [float("nan")] * self.game.num_actions if row is None else row.tolist()
        perm = self.game.action_symmetries[sym]
        moves = []
        for a in board.legal_actions():
            value = values[perm[a]]
            unknown = value != value  # NaN: nothing learned
            moves.append(self._move_value(a, 0.0 if unknown else value, unknown))
        moves.sort(key=lambda mv: (-mv.value, mv.action_id))
        return Evaluation(board.to_move, moves[0].value, tuple(moves))

    def _move_value(self, action: int, value: float, unknown: bool = False) -> MoveValue:
        return valued_move(self.game, action, value, unknown)

    @property
    def default_depth(self) -> int | None:
        """The search depth a server uses when a request gives none (``None``: this kind
        of model does not search; its values are final)."""
        return None

    def search(self, board: State, depth: int, *, best_only: bool = False) -> Evaluation:
        """:meth:`evaluate` looking ``depth`` plies ahead (only kinds that search); with
        ``best_only``, an evaluation of the best move alone."""
        raise ValueError(f"a {self.kind} model does not search")

    def search_within(self, board: State, max_depth: int, *, nodes: int | None = None,
                      seconds: float | None = None, best_only: bool = False
                      ) -> tuple[Evaluation, SearchReport]:
        """:meth:`search` as deep as a node or time budget allows, with what it used (only
        kinds that search; see :meth:`gameai.models.NtupleModel.search_within`)."""
        raise ValueError(f"a {self.kind} model does not search")

    def search_counted(self, board: State, depth: int, *, nodes: int | None = None
                       ) -> tuple[Evaluation | None, int]:
        """:meth:`search` abandoned past ``nodes`` (None), with the nodes it took (only
        kinds that search)."""
        raise ValueError(f"a {self.kind} model does not search")

    def best_move(self, board: State) -> MoveValue:
        return self.evaluate(board).best

    def evaluate_batch(self, boards: Sequence[State]) -> list[Evaluation]:
        """:meth:`evaluate` for many boards at once; the values are computed vectorised."""
        values = self.move_values(boards)
        out = []
        for board, row in zip(boards, values.tolist(), strict=True):
            moves = [self._move_value(a, row[a]) for a in board.legal_actions()]
            moves.sort(key=lambda mv: (-mv.value, mv.action_id))
            out.append(Evaluation(board.to_move, moves[0].value, tuple(moves)))
        return out

    def move_values(self, boards: Sequence[State]) -> F32:
        """``(len(boards), num_actions)`` move values in each board's own orientation, NaN
        where a move is illegal; vectorised over the boards.

        Raises:
            GameOver: a board is finished.
            GameError: a board is of another game.
        """
        for board in boards:
            self._check(board)
        return self.batch_values(self.game.batch(boards))

    def batch_values(self, batch: Batch) -> F32:
        """:meth:`move_values` of a :class:`~gameai.games.interface.Batch` of valid,
        unfinished positions (what ``game.parse_batch`` returns)."""
        if len(batch) == 0:
            return np.zeros((0, self.game.num_actions), dtype=np.float32)
        x = o = None
        if batch.masks is not None and self.kind == "mlp":  # the network reads the boards
            game = as_mnk(self.game)
            x = transform_masks(game, batch.masks[0], batch.syms)
            o = transform_masks(game, batch.masks[1], batch.syms)
        canon = self._canonical_values(batch.keys, x, o)
        values = np.take_along_axis(canon, self._perms[batch.syms.astype(np.intp)], axis=1)
        return np.where(batch.legal, np.nan_to_num(values, nan=0.0), np.nan).astype(np.float32)

    def move_values_of_masks(self, x: U64, o: U64) -> F32:
        """:meth:`move_values` for boards given as bitmask arrays, for callers that have
        already validated them (a batch parser): no ``Board`` objects, no per-board checks.
        The boards must be valid and unfinished; what a finished board gets is unspecified.
        """
        game = as_mnk(self.game)  # positions as two bitmasks: the m,n,k family's form
        if len(x) == 0:
            return np.zeros((0, game.cells), dtype=np.float32)
        keys, syms = canonical_keys_and_syms(game, x, o)
        cx, co = transform_masks(game, x, syms), transform_masks(game, o, syms)
        canon = self._canonical_values(keys, cx, co)
        values = np.take_along_axis(canon, self._perms[syms.astype(np.intp)], axis=1)
        shifts = np.arange(game.cells, dtype=np.uint64)
        legal = ((playable_masks(game, x | o)[:, None] >> shifts) & np.uint64(1)) == 1
        return np.where(legal, np.nan_to_num(values, nan=0.0), np.nan).astype(np.float32)

    def _check(self, board: State) -> None:
        if board.game is not self.game:
            raise GameError(f"this model plays {self.game.name}, not {board.game.name}")
        board.require_playable()

    def canonical_key(self, board: State) -> int:
        return board.canonical()[0]

    def canonical_values(self, keys: U64) -> F32:
        """Rows of canonical positions by key, in their canonical orientation (NaN rows
        where the model knows nothing)."""
        return self._canonical_values(np.asarray(keys, dtype=np.uint64), None, None)

    def with_info(self, info: ModelInfo) -> Self:
        """The same model with other metadata: the arrays are shared, not copied (a model
        is never changed once made), so restamping a large table costs nothing."""
        if info.game != self.game.name:
            raise ValueError(f"model info is for {info.game}, not {self.game.name}")
        twin = copy.copy(self)
        twin.info = info
        return twin

    # -- storage -------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        metadata = {"kind": self.kind, **self.info.to_json()}
        return encode(metadata, self._arrays())

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays in memory (the size a server pays to hold the model)."""
        return sum(a.nbytes for a in self._arrays().values())

    @abc.abstractmethod
    def _arrays(self) -> dict[str, npt.NDArray[Any]]: ...

    @abc.abstractmethod
    def _canonical_values(self, keys: U64, x: U64 | None, o: U64 | None) -> F32:
        """Values of the canonical positions ``keys`` (in their orientation); NaN where
        unknown. ``x``, ``o``: the canonical boards' bitmasks, where the caller has them."""

    @abc.abstractmethod
    def _canonical_row(self, key: int, board: State, sym: int) -> npt.NDArray[np.float32] | None:
        """One canonical board's values (``board`` moved by ``sym``), or None if unknown."""


class TableModel(Model):
    kind = "table"

    def __init__(self, game: Game, info: ModelInfo, keys: U64, values: F32) -> None:
        super().__init__(game, info)
        keys = np.asarray(keys, dtype=np.uint64)
        values = np.asarray(values, dtype=np.float32)
        _check_table(game, keys, values)
        self.keys, self.values = keys, values

    @classmethod
    def from_unsorted(cls, game: Game, info: ModelInfo, keys: U64, values: F32) -> TableModel:
        order = np.argsort(keys, kind="stable")
        return cls(game, info, np.asarray(keys)[order], np.asarray(values)[order])

    def _arrays(self) -> dict[str, npt.NDArray[Any]]:
        return {"keys": self.keys, "values": self.values}

    def _canonical_values(self, keys: U64, x: U64 | None, o: U64 | None) -> F32:
        return lookup_rows(self.keys, self.values, keys)

    def _canonical_row(self, key: int, board: State, sym: int) -> npt.NDArray[np.float32] | None:
        return find_row(self.keys, self.values, key)


class MlpModel(Model):
    """Seed 004's network plus its exceptions table.

    Shapes: ``w1 (cells, hidden)``, ``b1 (hidden,)``, ``w2 (hidden, cells)``, ``b2 (cells,)``.
    """

    kind = "mlp"

    def __init__(self, game: Game, info: ModelInfo, *, w1: F32, b1: F32, w2: F32, b2: F32,
                 exception_keys: U64, exception_values: F32) -> None:
        super().__init__(game, info)
        if not game.cell_kernels:
            raise CorruptModel(f"seed 004's network plays m,n,k boards, not {game.name}")
        self.w1, self.b1 = np.asarray(w1, np.float32), np.asarray(b1, np.float32)
        self.w2, self.b2 = np.asarray(w2, np.float32), np.asarray(b2, np.float32)
        cells, hidden = game.cells, self.b1.shape[0] if self.b1.ndim == 1 else -1
        if (self.w1.shape != (cells, hidden) or self.w2.shape != (hidden, cells)
                or self.b2.shape != (cells,)):
            raise CorruptModel(f"network weights do not fit a {cells}-cell board")
        self.exception_keys = np.asarray(exception_keys, np.uint64)
        self.exception_values = np.asarray(exception_values, np.float32)
        _check_table(game, self.exception_keys, self.exception_values)

    @property
    def hidden(self) -> int:
        return int(self.b1.shape[0])

    def _arrays(self) -> dict[str, npt.NDArray[Any]]:
        return {"w1": self.w1, "b1": self.b1, "w2": self.w2, "b2": self.b2,
                "exception_keys": self.exception_keys, "exception_values": self.exception_values}

    def network_values(self, x: U64, o: U64) -> F32:
        """The network's move values for canonical boards given as bitmasks."""
        inputs = encode_inputs(as_mnk(self.game), x, o)
        hidden = np.tanh(inputs @ self.w1 + self.b1)
        return np.tanh(hidden @ self.w2 + self.b2).astype(np.float32)

    def _canonical_row(self, key: int, board: State, sym: int) -> npt.NDArray[np.float32] | None:
        row = find_row(self.exception_keys, self.exception_values, key)
        if row is not None:
            return row
        x, o = masks_from_base3(as_mnk(self.game), np.array([key], dtype=np.uint64))
        return self.network_values(x, o)[0]

    def _canonical_values(self, keys: U64, x: U64 | None, o: U64 | None) -> F32:
        if x is None or o is None:
            x, o = masks_from_base3(as_mnk(self.game), keys)
        values = self.network_values(x, o)
        exact = lookup_rows(self.exception_keys, self.exception_values, keys)
        known = ~np.isnan(exact).all(axis=1)
        values[known] = exact[known]
        return values


def encode_inputs(game: MnkGame, x: U64, o: U64) -> F32:
    """Network inputs: +1 for the mover's pieces, -1 for the opponent's, 0 for empty."""
    shifts = np.arange(game.cells, dtype=np.uint64)
    xb = ((x[:, None] >> shifts) & np.uint64(1)).astype(np.float32)
    ob = ((o[:, None] >> shifts) & np.uint64(1)).astype(np.float32)
    x_to_move = (np.bitwise_count(x) == np.bitwise_count(o))[:, None]
    return np.where(x_to_move, xb - ob, ob - xb).astype(np.float32)


def lookup_rows(table_keys: U64, table_values: F32, keys: U64) -> F32:
    """Rows of ``table_values`` for ``keys`` (sorted ``table_keys``); NaN rows where missing."""
    out = np.full((len(keys), table_values.shape[1]), np.nan, dtype=np.float32)
    if len(table_keys) == 0:
        return out
    idx = np.minimum(np.searchsorted(table_keys, keys), len(table_keys) - 1)
    found = table_keys[idx] == keys
    out[found] = table_values[idx[found]]
    return out


def find_row(table_keys: U64, table_values: F32, key: int) -> npt.NDArray[np.float32] | None:
    """The row of ``table_values`` for one key, or None."""
    i = int(np.searchsorted(table_keys, np.uint64(key)))
    if i < len(table_keys) and int(table_keys[i]) == key:
        return table_values[i]
    return None


def _check_table(game: Game, keys: U64, values: F32) -> None:
    if keys.ndim != 1 or values.shape != (len(keys), game.num_actions):
        raise CorruptModel(f"value table of shape {values.shape} does not fit "
                           f"{len(keys)} keys of {game.name} ({game.num_actions} actions)")
    if len(keys) > 1 and not bool(np.all(keys[1:] > keys[:-1])):
        raise CorruptModel("model keys are not strictly increasing")
    if values.size:  # NaN-ignoring reductions: no copy of a large table
        low, high = np.fmin.reduce(values, axis=None), np.fmax.reduce(values, axis=None)
        if low < -1.0 or high > 1.0:
            raise CorruptModel("model values must lie in [-1, 1]")


def short(value: object, limit: int = 40) -> str:
    """``repr(value)``, cut to ``limit`` characters: error messages never echo large input."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def valued_move(game: Game, action: int, value: float, unknown: bool = False) -> MoveValue:
    """``game``'s move ``action`` (where the piece goes and, for a movement, where from)
    with ``value``."""
    m = game.move(action)
    if m.from_index is None:
        return MoveValue(m.index, m.row, m.col, value, unknown=unknown)
    return MoveValue(m.index, m.row, m.col, value, m.from_index, m.from_row, m.from_col,
                     action, unknown)
