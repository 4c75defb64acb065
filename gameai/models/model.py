"""The model artifact: the value of every legal move of a position, from the mover's view.

A model answers for one game. It stores values for canonical positions only and answers
any board by mapping it onto its canonical image and the values back (a move ``m`` on the
board is move ``symmetries[sym][m]`` on the image). Values lie in [-1, 1]: 1 a certain
win, 0 a draw, -1 a certain loss. A board the model never saw gets 0 for every move.

Two forms share the interface:

* :class:`TableModel`: sorted canonical keys and a ``(positions, cells)`` value table.
* :class:`MlpModel` (seed 004): a one-hidden-layer tanh network from the canonical board
  (+1 mover, -1 opponent, 0 empty) to move values, plus an exceptions table of exact values
  for the positions where the network's best move differs from its teacher's.

Ties between equal values go to the lowest cell index, so answers are deterministic.
"""

from __future__ import annotations

import abc
import copy
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from gameai.games import Board, Game, GameError, canonical, get_game
from gameai.games.board import mask_cells, playable_mask
from gameai.games.keys import U64, canonical_keys_and_syms, transform_mask, transform_masks
from gameai.games.positions import playable_masks
from gameai.models.container import CorruptModel, decode, encode
from gameai.models.info import ModelInfo

F32 = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class MoveValue:
    index: int
    row: int
    col: int
    value: float
    unknown: bool = False  # no value learned for it: ``value`` is 0 only as a stand-in


@dataclass(frozen=True, slots=True)
class Evaluation:
    to_move: str
    value: float  # the best move's value: the position's value for the side to move
    moves: tuple[MoveValue, ...]  # every legal move, best first

    @property
    def best(self) -> MoveValue:
        return self.moves[0]


class Model(abc.ABC):
    """Answers best-move and evaluate queries for every board of one game."""

    kind: ClassVar[str]

    def __init__(self, game: Game, info: ModelInfo) -> None:
        if info.game != game.name:
            raise ValueError(f"model info is for {info.game}, not {game.name}")
        self.game = game
        self.info = info
        self._perms = np.array(game.symmetries, dtype=np.intp)

    # -- queries -------------------------------------------------------------------------

    def evaluate(self, board: Board) -> Evaluation:
        """Every legal move's value, best first.

        Raises:
            GameOver: the board is finished.
            GameError: the board is of another game.
        """
        self._check(board)
        key, sym = canonical(board)
        row = self._canonical_row(key, board, sym)
        values = [float("nan")] * self.game.cells if row is None else row.tolist()
        perm = self.game.symmetries[sym]
        cols = self.game.cols
        moves = []
        for m in mask_cells(playable_mask(self.game, board.occupied)):
            value = values[perm[m]]
            unknown = value != value  # NaN: nothing learned
            moves.append(MoveValue(m, m // cols, m % cols, 0.0 if unknown else value, unknown))
        moves.sort(key=lambda mv: (-mv.value, mv.index))
        return Evaluation(board.to_move, moves[0].value, tuple(moves))

    def best_move(self, board: Board) -> MoveValue:
        return self.evaluate(board).best

    def evaluate_batch(self, boards: list[Board]) -> list[Evaluation]:
        """:meth:`evaluate` for many boards at once; the values are computed vectorised."""
        values = self.move_values(boards)
        out = []
        cols = self.game.cols
        for board, row in zip(boards, values.tolist(), strict=True):
            moves = [MoveValue(m, m // cols, m % cols, row[m]) for m in board.legal_moves()]
            moves.sort(key=lambda mv: (-mv.value, mv.index))
            out.append(Evaluation(board.to_move, moves[0].value, tuple(moves)))
        return out

    def move_values(self, boards: list[Board]) -> F32:
        """``(len(boards), cells)`` move values in each board's own orientation, NaN where a
        move is illegal; vectorised over the boards.

        Raises:
            GameOver: a board is finished.
            GameError: a board is of another game.
        """
        for board in boards:
            self._check(board)
        x = np.fromiter((b.x for b in boards), dtype=np.uint64, count=len(boards))
        o = np.fromiter((b.o for b in boards), dtype=np.uint64, count=len(boards))
        return self.move_values_of_masks(x, o)

    def move_values_of_masks(self, x: U64, o: U64) -> F32:
        """:meth:`move_values` for boards given as bitmask arrays, for callers that have
        already validated them (a batch parser): no ``Board`` objects, no per-board checks.
        The boards must be valid and unfinished; what a finished board gets is unspecified.
        """
        if len(x) == 0:
            return np.zeros((0, self.game.cells), dtype=np.float32)
        keys, syms = canonical_keys_and_syms(self.game, x, o)
        cx, co = transform_masks(self.game, x, syms), transform_masks(self.game, o, syms)
        canon = self._canonical_values(keys, cx, co)
        values = np.take_along_axis(canon, self._perms[syms.astype(np.intp)], axis=1)
        shifts = np.arange(self.game.cells, dtype=np.uint64)
        legal = ((playable_masks(self.game, x | o)[:, None] >> shifts) & np.uint64(1)) == 1
        return np.where(legal, np.nan_to_num(values, nan=0.0), np.nan).astype(np.float32)

    def _check(self, board: Board) -> None:
        if board.game is not self.game:
            raise GameError(f"this model plays {self.game.name}, not {board.game.name}")
        board.require_playable()

    def canonical_key(self, board: Board) -> int:
        return canonical(board)[0]

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
    def _canonical_values(self, keys: U64, x: U64, o: U64) -> F32:
        """Values of the canonical boards (in their orientation); NaN where unknown."""

    @abc.abstractmethod
    def _canonical_row(self, key: int, board: Board, sym: int) -> npt.NDArray[np.float32] | None:
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

    def _canonical_values(self, keys: U64, x: U64, o: U64) -> F32:
        return lookup_rows(self.keys, self.values, keys)

    def _canonical_row(self, key: int, board: Board, sym: int) -> npt.NDArray[np.float32] | None:
        return find_row(self.keys, self.values, key)


class MlpModel(Model):
    """Seed 004's network plus its exceptions table.

    Shapes: ``w1 (cells, hidden)``, ``b1 (hidden,)``, ``w2 (hidden, cells)``, ``b2 (cells,)``.
    """

    kind = "mlp"

    def __init__(self, game: Game, info: ModelInfo, *, w1: F32, b1: F32, w2: F32, b2: F32,
                 exception_keys: U64, exception_values: F32) -> None:
        super().__init__(game, info)
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
        inputs = encode_inputs(self.game, x, o)
        hidden = np.tanh(inputs @ self.w1 + self.b1)
        return np.tanh(hidden @ self.w2 + self.b2).astype(np.float32)

    def _canonical_row(self, key: int, board: Board, sym: int) -> npt.NDArray[np.float32] | None:
        row = find_row(self.exception_keys, self.exception_values, key)
        if row is not None:
            return row
        x = np.array([transform_mask(self.game, board.x, sym)], dtype=np.uint64)
        o = np.array([transform_mask(self.game, board.o, sym)], dtype=np.uint64)
        return self.network_values(x, o)[0]

    def _canonical_values(self, keys: U64, x: U64, o: U64) -> F32:
        values = self.network_values(x, o)
        exact = lookup_rows(self.exception_keys, self.exception_values, keys)
        known = ~np.isnan(exact).all(axis=1)
        values[known] = exact[known]
        return values


def encode_inputs(game: Game, x: U64, o: U64) -> F32:
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
    if keys.ndim != 1 or values.shape != (len(keys), game.cells):
        raise CorruptModel(f"value table of shape {values.shape} does not fit "
                           f"{len(keys)} keys of a {game.cells}-cell board")
    if len(keys) > 1 and not bool(np.all(keys[1:] > keys[:-1])):
        raise CorruptModel("model keys are not strictly increasing")
    finite = values[~np.isnan(values)]
    if finite.size and (finite.min() < -1.0 or finite.max() > 1.0):
        raise CorruptModel("model values must lie in [-1, 1]")


KINDS: dict[str, type[Model]] = {"table": TableModel, "mlp": MlpModel}


def load_model(data: bytes) -> Model:
    """The model in ``data`` (bytes from :meth:`Model.to_bytes`). Never unpickles anything.

    Raises:
        CorruptModel: the bytes are damaged, forged, or describe an impossible model.
    """
    container = decode(data)
    meta = dict(container.metadata)
    kind = meta.pop("kind", None)
    try:
        info = ModelInfo.from_json(meta)
        game = get_game(info.game)
    except (GameError, ValueError, TypeError, KeyError) as e:
        raise CorruptModel(f"model metadata is not valid: {str(e)[:200]}") from e
    arrays = container.arrays
    try:
        if kind == "table":
            return TableModel(game, info, arrays["keys"], arrays["values"])
        if kind == "mlp":
            return MlpModel(game, info, w1=arrays["w1"], b1=arrays["b1"], w2=arrays["w2"],
                            b2=arrays["b2"], exception_keys=arrays["exception_keys"],
                            exception_values=arrays["exception_values"])
    except KeyError as e:
        raise CorruptModel(f"model of kind {kind!r} lacks the array {e}") from e
    raise CorruptModel(f"unknown model kind {short(kind)}; known kinds are {', '.join(KINDS)}")


def short(value: object, limit: int = 40) -> str:
    """``repr(value)``, cut to ``limit`` characters: error messages never echo large input."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
