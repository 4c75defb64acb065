"""Promotion gates and publishing: a candidate becomes ``production`` only if it is no worse.

The gates (issue 4): the candidate is unbeatable as X and as O (seed 003's exhaustive
opponent finds no winning line; in a game won by one side, that side must win every line
and the other is asked nothing), and its ``optimal_move_rate`` is not below the current
production version's. A figure the evaluator had to omit cannot pass a gate that needs
it, so a game too large for the exhaustive opponent is never auto-promoted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gameai.models import Model
from gameai.store import ModelStore
from trainer.evaluate import must_not_lose


@dataclass(frozen=True)
class GateResult:
    passed: bool
    reasons: list[str] = field(default_factory=list)  # why it failed (empty if it passed)

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "reasons": self.reasons}


def check_gates(candidate: dict[str, Any], production: dict[str, Any] | None) -> GateResult:
    """Whether a model with evaluation ``candidate`` may replace one with ``production``
    (``None``: there is no production version yet)."""
    reasons = []
    won = candidate.get("game_value") in ("x_wins", "o_wins")
    for side in must_not_lose(candidate):
        lost = candidate.get(f"losses_as_{side.lower()}")
        drawn = candidate.get(f"draws_as_{side.lower()}")
        if lost is None:
            reasons.append(f"losses as {side} were not measured (the exhaustive opponent "
                           "was omitted)")
        elif lost > 0:
            reasons.append(f"loses {lost:,} lines as {side}")
        elif won and drawn != 0:
            reasons.append(f"draws {drawn:,} lines as {side}, which wins this game")
    ours = candidate.get("optimal_move_rate")
    theirs = (production or {}).get("optimal_move_rate")
    if theirs is not None:
        if ours is None:
            reasons.append("optimal_move_rate was not measured, production's was "
                           f"{theirs:.4f}")
        elif ours < theirs:
            reasons.append(f"optimal_move_rate {ours:.4f} is below production's {theirs:.4f}")
    return GateResult(not reasons, reasons)


@dataclass(frozen=True)
class Published:
    version: int
    promoted: bool
    gates: GateResult | None  # None with manual promotion
    production: int | None  # the production version after this publish

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "promoted": self.promoted,
                "gates": self.gates.to_json() if self.gates else None,
                "production": self.production}


def publish(store: ModelStore, model: Model, *, by: str, promote: str = "manual",
            token: str | None = None) -> Published:
    """Publish ``model`` (its evaluation is in its metadata) and, with ``promote="auto"``,
    point ``production`` at it when the gates pass against the current production.

    ``token`` makes a retried publish idempotent (see :meth:`ModelStore.publish`).

    Raises:
        StoreUnavailable: the store cannot be reached (nothing half-done: the publish is
            atomic, and a retry with the same ``token`` does not publish twice).
    """
    game = model.game.name
    record = store.publish(model.to_bytes(), by=by, token=token)
    production = store.rollout(game=game).production
    if promote != "auto":
        return Published(record.version, False, None, production)
    if production == record.version:  # a retried publish that was promoted already
        return Published(record.version, True, GateResult(True), production)
    current = store.version(game=game, version=production) if production is not None else None
    gates = check_gates(model.info.evaluation, current.evaluation if current else None)
    if gates.passed:
        store.set_alias(game=game, alias="production", version=record.version, by=by)
        production = record.version
    return Published(record.version, gates.passed, gates, production)


def who() -> str:
    """The ``by`` of a version the trainer publishes: ``trainer@HOST``."""
    import socket

    return f"trainer@{socket.gethostname()}"
