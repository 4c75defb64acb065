"""What every self-play learner offers the training loop, the worker and the benchmarks.

A learner owns its tables and its random generator; :meth:`Learner.play` runs games of
self-play with learning updates in compiled code and :meth:`Learner.export` turns what it
knows into the common model artifact (values in [-1, 1] from the mover's view), so the
evaluator, the store and the server never need to know which algorithm made a model.

The table learners (td, qlearning, tally: :class:`gameai.trainer.learners.tabular.
TabularLearner`) are each one compiled kernel over the walker the game asks for
(:mod:`gameai.trainer.walkers`), with the same updates and parameters on every walker.
"""

from __future__ import annotations

import abc
import dataclasses
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from gameai.games import Game
from gameai.games.budget import OverBudget
from gameai.models import Model, ModelInfo
from gameai.trainer.walkers.rng import seed_state

BATCH = 4096  # games per kernel call: the table grows between calls


class BadParameter(ValueError):
    """A learner parameter is unknown or out of range; the message names it."""


@dataclass
class RoundStats:
    """What one call of :meth:`Learner.play` did."""

    games: int = 0
    x_wins: int = 0
    o_wins: int = 0
    draws: int = 0
    moves: int = 0
    seconds: float = 0.0

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else 0.0


def added_later(default: Any) -> Any:
    """A parameter added after models were published with its learner: recorded in a
    model's metadata only when set to something else than ``default``, so that a published
    model trained again by its documented command keeps its bytes (Connect Four's bundled
    model, gameai/models/bundled/bundled.json)."""
    return dataclasses.field(default=default, metadata={"added_later": True})


@dataclass(frozen=True)
class Params:
    """Base of each learner's parameters: JSON values, checked by :meth:`check`."""

    # How the games are run, not what is learned: a warm start keeps the worker's own
    # (:func:`gameai.trainer.worker.main.inherited_params`), whatever the parent used.
    MACHINE: ClassVar[frozenset[str]] = frozenset()

    def check(self) -> None:
        """Raise :class:`BadParameter` naming the first parameter out of range."""

    def to_json(self) -> dict[str, Any]:
        """Every parameter, less those :func:`added_later` at their defaults."""
        out = dataclasses.asdict(self)
        for f in dataclasses.fields(self):
            if f.metadata.get("added_later") and out[f.name] == f.default:
                del out[f.name]
        return out


def build_params(cls: type[Params], overrides: dict[str, Any]) -> Params:
    """``cls`` with ``overrides`` (values may be text from the command line), checked.

    Raises:
        BadParameter: an unknown name, a value of the wrong type, or one out of range.
    """
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for name, raw in overrides.items():
        if name not in fields:
            known = ", ".join(sorted(fields))
            raise BadParameter(f"unknown parameter {name!r} for this algorithm; known: {known}")
        default = getattr(cls, name)
        values[name] = _coerce(name, raw, type(default))
    params = cls(**values)
    params.check()
    return params


def _coerce(name: str, raw: Any, kind: type) -> Any:
    try:
        if kind is bool and isinstance(raw, str):
            if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(raw)
            return raw.lower() in ("true", "1", "yes")
        if kind is str:
            return str(raw)
        if isinstance(raw, bool) and kind is not bool:
            raise ValueError(raw)
        value = kind(raw)
        if kind is float and not np.isfinite(value):
            raise ValueError(raw)
        return value
    except (TypeError, ValueError) as e:
        raise BadParameter(f"parameter {name!r}: {raw!r} is not a valid {kind.__name__}") from e


def require(ok: bool, name: str, rule: str) -> None:
    if not ok:
        raise BadParameter(f"parameter {name!r} must be {rule}")


class Learner(abc.ABC):
    """Self-play learning of one game; deterministic given ``seed``."""

    algorithm: ClassVar[str]
    params_type: ClassVar[type[Params]]

    def __init__(self, game: Game, *, seed: int = 0, params: Params | None = None) -> None:
        self.game = game
        self.seed = seed
        self.params = params if params is not None else self.params_type()
        self.params.check()
        self.rng = seed_state(seed)
        self.games_played = 0
        self.training_seconds = 0.0  # self-play time behind the values, a parent's included
        self.parent_version: int | None = None
        # why the learner can play no more (its table would outgrow the memory limit, its
        # export included), None while it can: what it learned stays, ready to export
        self.full: str | None = None

    @classmethod
    def params_type_for(cls, game: Game) -> type[Params]:
        """The parameters this algorithm takes on ``game`` (:attr:`params_type`, and
        whatever the engine that plays ``game`` adds)."""
        return cls.params_type

    def _reserve(self, games: int) -> None:  # noqa: B027  (only table learners need room)
        """Make room for what ``games`` more games can add (before each kernel call)."""

    def _batch(self) -> int:
        """The most games one :meth:`_run` call plays."""
        return BATCH

    def play(self, games: int) -> RoundStats:
        """Play ``games`` games of self-play, learning from each. Returns what happened.

        ``play(0)`` only compiles (or loads from numba's cache) the learner's kernel. When
        the table may not grow (it would outgrow the memory limit, or leave no room to
        export it), fewer games are played, nothing of what was learned is lost and
        :attr:`full` says why: the caller stops training and exports.
        """
        if games < 0:
            raise ValueError(f"cannot play {games} games")
        started = time.perf_counter()
        stats = np.zeros(4, dtype=np.int64)  # x wins, o wins, draws, moves
        done = 0
        self.full = None  # asked again: the limit may have been raised meanwhile
        while True:  # at least once: play(0) compiles (or loads) the kernel
            batch = min(games - done, self._batch())
            try:
                self._reserve(batch)  # the kernel never fills the table
            except OverBudget as e:  # refused before anything was allocated or changed
                self.full = str(e)
                break
            self._run(batch, self.games_played + done, stats)
            done += batch
            if done >= games:
                break
        self.games_played += done
        seconds = time.perf_counter() - started
        if done:  # play(0) only compiles
            self.training_seconds += seconds
        return RoundStats(done, int(stats[0]), int(stats[1]), int(stats[2]), int(stats[3]),
                          seconds)

    @abc.abstractmethod
    def _run(self, games: int, played: int, stats: np.ndarray) -> None:
        """Play and learn ``games`` games, ``played`` having been played before; add x wins,
        o wins, draws and moves to ``stats``. At most :meth:`_batch` games a call."""

    @property
    @abc.abstractmethod
    def exploration(self) -> float:
        """The current exploration level (epsilon, temperature...), for the metrics."""

    @abc.abstractmethod
    def export(self, info: ModelInfo | None = None) -> Model:
        """The model artifact of what has been learned so far (the learner is unchanged)."""

    @abc.abstractmethod
    def warm_start(self, model: Model) -> None:
        """Start from ``model``'s values (a published version) instead of from nothing."""

    def info(self, **extra: Any) -> ModelInfo:
        """Metadata for an exported model: algorithm, parameters, seed, games played, the
        self-play time behind it and the version it descends from (``extra`` overrides)."""
        fields: dict[str, Any] = {
            "params": self.params.to_json(), "seed": self.seed,
            "games_played": self.games_played,
            "training_seconds": round(self.training_seconds, 3),
            "parent_version": self.parent_version, **extra}
        return ModelInfo(game=self.game.name, algorithm=self.algorithm, **fields)
