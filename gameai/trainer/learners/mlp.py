"""Seed 004: distil a trained table into a small network plus a table of its mistakes.

The network maps a position (+1 the mover's pieces, -1 the opponent's, 0 empty: seed 004's
inputs, from the mover's view) through one hidden tanh layer to a score per cell, and
plays the legal cell of highest score. It is trained as a classifier (seed 004's
"position -> move" pairs) on every position the teacher's table holds and every position
the teacher reaches against every reply as X and as O, with full-batch Adam on the
cross-entropy of the teacher's move. Wherever the network alone would play another move
than the teacher, in any orientation of the board, the teacher's exact row goes into the
exceptions table, so the student plays exactly as the teacher does, move for move: ties
included, where the teacher plays the lowest of its equally valued cells in the board's
own orientation (the move :meth:`Model.best_move` gives), so that which of the tied
moves it plays depends on the orientation. (Before issue 28 a tie was let pass when the
network played any of the tied moves, and only the canonical orientation was compared:
a student of a td table that never loses lost lines as O, by playing a tied "certain
win" that its teacher never plays, into positions its teacher never met.)
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gameai.games import TooLarge
from gameai.games.mnk.board import Board
from gameai.games.mnk.game import as_mnk
from gameai.games.mnk.keys import U64, canonical_keys, transform_masks
from gameai.games.mnk.positions import enumerate_positions
from gameai.models import MlpModel, Model, ModelInfo, TableModel
from gameai.models.model import encode_inputs
from gameai.trainer.evaluation.evaluate import policy_moves, policy_positions
from gameai.trainer.learners.base import Params, require
from gameai.trainer.learners.export import boards_of

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class MlpParams(Params):
    hidden: int = 27
    epochs: int = 3000
    learning_rate: float = 0.01

    def check(self) -> None:
        require(1 <= self.hidden <= 4096, "hidden", "between 1 and 4096")
        require(1 <= self.epochs <= 1_000_000, "epochs", "between 1 and 1,000,000")
        require(0 < self.learning_rate <= 1, "learning_rate", "in (0, 1]")


@dataclass
class Distillation:
    """The student and how it compares with its teacher."""

    model: MlpModel
    positions: int  # training positions (canonical)
    # share of the positions where the network alone plays the teacher's move in every
    # orientation (the others are the exceptions)
    network_accuracy: float
    exceptions: int
    teacher_bytes: int
    student_bytes: int
    teacher_move_us: float  # one best_move call, averaged over the training positions
    student_move_us: float
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"positions": self.positions,
                "network_accuracy": round(self.network_accuracy, 6),
                "exceptions": self.exceptions, "teacher_bytes": self.teacher_bytes,
                "student_bytes": self.student_bytes,
                "teacher_move_us": round(self.teacher_move_us, 2),
                "student_move_us": round(self.student_move_us, 2),
                "seconds": round(self.seconds, 3)}


EVERY_POSITION_LIMIT = 100_000  # canonical positions: up to this many, train on them all


def training_positions(teacher: Model) -> tuple[U64, U64]:
    """Canonical boards: the teacher's table rows, every position where the teacher moves
    against every reply, as X and as O, and, for a game small enough (tic-tac-toe's 627),
    every reachable position, so that the exceptions cover wherever the network errs and
    a perfect teacher makes a perfect student."""
    game = as_mnk(teacher.game)
    keys = [teacher.keys] if isinstance(teacher, TableModel) else []
    for side in ("X", "O"):
        x, o = policy_positions(teacher, side=side)
        keys.append(canonical_keys(game, x, o))
    try:
        every = enumerate_positions(Board.empty(game), limit=EVERY_POSITION_LIMIT)
    except TooLarge:
        pass
    else:
        keys.extend(layer.keys[~layer.over] for layer in every.layers)
    return boards_of(game, np.unique(np.concatenate(keys)))


def distill(teacher: Model, *, params: MlpParams | None = None, seed: int = 0,
            progress: Callable[[int, float], None] | None = None) -> Distillation:
    """Train the student of ``teacher`` (deterministic given ``seed``).

    Args:
        progress: called as ``progress(epochs_done, network_accuracy)`` now and then.
    """
    started = time.perf_counter()
    params = params or MlpParams()
    game = as_mnk(teacher.game)  # seed 004's network reads m,n,k boards
    teacher_bytes = teacher.to_bytes()  # seconds for a large table: encode it once
    teacher_sha256 = hashlib.sha256(teacher_bytes).hexdigest()
    x, o = training_positions(teacher)
    boards = [Board(game, a, b) for a, b in zip(x.tolist(), o.tolist(), strict=True)]
    values = teacher.move_values(boards).astype(np.float64)
    legal = ~np.isnan(values)
    accept = np.zeros_like(legal)  # the teacher's own move, in the canonical orientation
    accept[np.arange(len(x)), policy_moves(teacher, x, o)] = True
    inputs = encode_inputs(game, x, o).astype(np.float64)
    weights = _train(inputs, legal, accept, params, seed, progress)
    network = _student(teacher, teacher_sha256, weights, np.zeros(0, np.uint64),
                       np.zeros((0, game.cells), np.float32), params)
    wrong = differs_anywhere(teacher, network, x, o)
    right = ~wrong
    exception_keys = canonical_keys(game, x[wrong], o[wrong])
    order = np.argsort(exception_keys)
    student = _student(teacher, teacher_sha256, weights, exception_keys[order],
                       values[wrong][order].astype(np.float32), params)
    return Distillation(
        student, len(x), float(right.mean()) if len(x) else 1.0, int(wrong.sum()),
        len(teacher_bytes), len(student.to_bytes()), _move_us(teacher, boards),
        _move_us(student, boards), time.perf_counter() - started)


def differs_anywhere(teacher: Model, student: Model, x: U64, o: U64
                    ) -> npt.NDArray[np.bool_]:
    """For each canonical board ``(x[i], o[i])``: whether ``student`` plays another move than
    ``teacher`` in any of the board's orientations (each model's move as
    :meth:`Model.best_move` chooses it: the best value, ties to the lowest cell of that
    orientation). An exception row is looked up by the canonical key, so it fixes every
    orientation at once."""
    game = as_mnk(teacher.game)
    wrong = np.zeros(len(x), dtype=bool)
    for sym in range(len(game.symmetries)):
        syms = np.full(len(x), sym, dtype=np.int8)
        xs, os_ = transform_masks(game, x, syms), transform_masks(game, o, syms)
        wrong |= policy_moves(teacher, xs, os_) != policy_moves(student, xs, os_)
    return wrong


def _student(teacher: Model, teacher_sha256: str, w: dict[str, F64], keys: U64,
             rows: npt.NDArray[np.float32], params: MlpParams) -> MlpModel:
    t = teacher.info
    info = ModelInfo(game=teacher.game.name, algorithm="mlp",
                     params={**params.to_json(), "teacher": {
                         "algorithm": t.algorithm, "seed": t.seed,
                         "games_played": t.games_played, "sha256": teacher_sha256}},
                     seed=t.seed, games_played=t.games_played)
    return MlpModel(teacher.game, info, w1=w["w1"].astype(np.float32),
                    b1=w["b1"].astype(np.float32), w2=w["w2"].astype(np.float32),
                    b2=w["b2"].astype(np.float32), exception_keys=keys, exception_values=rows)


def restamp(model: MlpModel, info: ModelInfo) -> MlpModel:
    """The same network and exceptions with other metadata."""
    return MlpModel(model.game, info, w1=model.w1, b1=model.b1, w2=model.w2, b2=model.b2,
                    exception_keys=model.exception_keys,
                    exception_values=model.exception_values)


def _train(inputs: F64, legal: npt.NDArray[np.bool_], accept: npt.NDArray[np.bool_],
           params: MlpParams, seed: int, progress: Callable[[int, float], None] | None
           ) -> dict[str, F64]:
    """Full-batch Adam on -log P(a teacher's best move), softmax over the legal moves.
    Returns the weights that answered most positions right."""
    rng = np.random.default_rng(seed)
    cells, hidden = inputs.shape[1], params.hidden
    w = {"w1": rng.normal(0, 1 / np.sqrt(cells), (cells, hidden)), "b1": np.zeros(hidden),
         "w2": rng.normal(0, 1 / np.sqrt(hidden), (hidden, cells)), "b2": np.zeros(cells)}
    m = {k: np.zeros_like(v) for k, v in w.items()}
    s = {k: np.zeros_like(v) for k, v in w.items()}
    best_w, best_right = {k: v.copy() for k, v in w.items()}, -1
    n = max(len(inputs), 1)
    for epoch in range(1, params.epochs + 1):
        h = np.tanh(inputs @ w["w1"] + w["b1"])
        z = np.where(legal, h @ w["w2"] + w["b2"], -np.inf)
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        right = int(accept[np.arange(len(z)), z.argmax(axis=1)].sum()) if len(z) else 0
        if right > best_right:
            best_right, best_w = right, {k: v.copy() for k, v in w.items()}
        q = np.where(accept, p, 0.0)
        q /= np.maximum(q.sum(axis=1, keepdims=True), 1e-300)
        dz = (p - q) / n
        dh = (dz @ w["w2"].T) * (1 - h * h)
        grads = {"w2": h.T @ dz, "b2": dz.sum(axis=0), "w1": inputs.T @ dh,
                 "b1": dh.sum(axis=0)}
        for k, g in grads.items():
            m[k] = 0.9 * m[k] + 0.1 * g
            s[k] = 0.999 * s[k] + 0.001 * g * g
            m_hat = m[k] / (1 - 0.9 ** epoch)
            s_hat = s[k] / (1 - 0.999 ** epoch)
            w[k] -= params.learning_rate * m_hat / (np.sqrt(s_hat) + 1e-8)
        if progress is not None and (epoch % 100 == 0 or epoch == params.epochs):
            progress(epoch, best_right / n)
        if best_right == len(inputs):
            break
    return best_w


def _move_us(model: Model, boards: list[Board], sample: int = 2000) -> float:
    """Microseconds per ``best_move`` call over (up to ``sample`` of) ``boards``."""
    chosen = boards[:: max(1, len(boards) // sample)][:sample]
    if not chosen:
        return 0.0
    started = time.perf_counter()
    for board in chosen:
        model.best_move(board)
    return (time.perf_counter() - started) / len(chosen) * 1e6
