"""Promotion gates and publishing: a candidate replaces ``production`` only if it is better.

The gates (issues 4 and 12), in order:

* unbeatable as X and as O: seed 003's exhaustive opponent finds no winning line (in a
  game won by one side, that side must win every line and the other is asked nothing);
* perfect where the solver can tell: ``optimal_move_rate`` 1.0 over every reachable
  position (so a model that turns a forced win into a loss after an opponent's blunder
  is never promoted);
* better than production by :func:`measure` (unbeatable first, then the optimal-move rate,
  then the loss rate against random play), and never over a production already
  :func:`perfect`: nothing can beat that.

A figure the evaluator had to omit cannot pass a gate that needs it, so a game too large
for the exhaustive opponent is never auto-promoted by these gates.

A report with solver-based measures of the policy a server plays (``judged``, made by
:class:`gameai.trainer.evaluation.judge.GateJudge` for the n-tuple worker, issue 14) is held
to **no regression and a gain** instead (:func:`check_judged`): an n-tuple network is never
perfect, and on Connect Four nothing is exhaustive, so such a candidate is promoted when no
measure shows it worse than production and at least one shows it better, a measure with a
sampling error counting as worse (better) only when the 95% interval of the difference
lies below (above) 0. An operator's pin on production
(:meth:`gameai.store.ModelStore.pin`) holds automatic promotion off, checked inside the
store's write.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gameai.models import Model
from gameai.store import ModelStore, Pinned
from gameai.trainer.evaluation.calibrate import Z95
from gameai.trainer.evaluation.evaluate import must_not_lose, perfect, unbeatable


@dataclass(frozen=True)
class GateResult:
    passed: bool
    reasons: list[str] = field(default_factory=list)  # why it failed (empty if it passed)
    # each judged measure against production's: {"measure", "verdict", "detail"}
    comparisons: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"passed": self.passed, "reasons": self.reasons}
        if self.comparisons:
            out["comparisons"] = self.comparisons
        return out


UNMEASURED = float("-inf")


def measure(report: dict[str, Any]) -> tuple[float, ...]:
    """The gates' order of models, best last: unbeatable, then the optimal-move rate, then
    the loss rate against random play (negated). A figure that was not measured counts
    as the worst."""
    vs = report.get("vs_random") or {}
    played = sum(sum(side.values()) for side in vs.values())
    lost = sum(side.get("loss", 0) for side in vs.values())
    rate = report.get("optimal_move_rate")
    return (1.0 if unbeatable(report) else 0.0, UNMEASURED if rate is None else float(rate),
            -lost / played if played else UNMEASURED)


def check_gates(candidate: dict[str, Any], production: dict[str, Any] | None) -> GateResult:
    """Whether a model with evaluation ``candidate`` may replace one with ``production``
    (``None``: there is no production version yet)."""
    if candidate.get("judged") is not None:
        return check_judged(candidate, production)
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
    if ours is not None and ours < 1.0:
        positions = candidate.get("optimal_move_positions")
        where = f" of {positions:,} positions" if positions else ""
        reasons.append(f"optimal_move_rate {ours:.6f}{where} is below 1: where the solver "
                       "can tell, only a perfect model is promoted")
    if production is not None:
        if perfect(production):
            reasons.append("production is already perfect (unbeatable, every move optimal): "
                           "nothing can beat it")
        elif measure(candidate) <= measure(production):
            reasons.append(f"not better than production: {_figures(candidate)} against "
                           f"{_figures(production)}")
    return GateResult(not reasons, reasons)


def compare_measure(ours: dict[str, Any], theirs: dict[str, Any]) -> tuple[int, str]:
    """``(+1, why)`` if measure ``ours`` is better than ``theirs``, ``(-1, why)`` if worse,
    ``(0, why)`` if the two cannot be told apart: exact figures (``lines``: fewer is
    better; ``rate``: higher is better) differ or not; a mean score differs when the 95%
    interval of the difference, ``d +- 1.96 sqrt(var_a + var_b)``, excludes 0."""
    name, kind = ours["name"], ours["kind"]
    if kind == "lines":
        a, b = ours["value"], theirs["value"]
        sign = (a < b) - (a > b)
        return sign, f"{name} {a:,} against {b:,}"
    if kind == "rate":
        a, b = ours["value"], theirs["value"]
        sign = (a > b) - (a < b)
        return sign, f"{name} {a:.6f} against {b:.6f}"
    a, b = ours["score"]["value"], theirs["score"]["value"]
    half = Z95 * math.sqrt(ours["variance"] + theirs["variance"])
    d = a - b
    sign = 1 if d - half > 0 else -1 if d + half < 0 else 0
    return sign, (f"{name} score {a:.3f} ({ours['wins']}/{ours['draws']}/{ours['losses']} of "
                  f"{ours['games']}) against {b:.3f} ({theirs['wins']}/{theirs['draws']}/"
                  f"{theirs['losses']}): difference {d:+.3f} +- {half:.3f}")


def check_judged(candidate: dict[str, Any], production: dict[str, Any] | None) -> GateResult:
    """The gate of judged reports (issue 25: gates that never promote a collapse): every
    measure the two share is compared (:func:`compare_measure`), and the candidate passes
    only if **none** is worse than production's beyond its 95% interval **and at least one**
    is better; a tie keeps production. So a candidate better as X that collapsed as O, or
    better against the perfect opponent and worse against a noisy one, is held back. A
    production version that is proven perfect is never replaced; one without judged
    measures (judged by another evaluator) cannot be compared, so the candidate is held
    back. Every comparison is in the result (and so in the log and the version's report)."""
    if production is None:
        return GateResult(True)
    if perfect(production):
        return GateResult(False, ["production is already perfect (unbeatable, every move "
                                  "optimal): nothing can beat it"])
    theirs = {m["name"]: m for m in (production.get("judged") or {}).get("measures", [])}
    ours = candidate["judged"]["measures"]
    common = [m for m in ours if m["name"] in theirs and m["kind"] == theirs[m["name"]]["kind"]]
    if not common:
        return GateResult(False, ["production has no judged measures in common with the "
                                  "candidate: they cannot be compared"])
    comparisons = []
    verdicts: dict[int, list[str]] = {1: [], 0: [], -1: []}
    for measure in common:
        sign, why = compare_measure(measure, theirs[measure["name"]])
        verdicts[sign].append(why)
        comparisons.append({"measure": measure["name"],
                            "verdict": {1: "better", 0: "same", -1: "worse"}[sign],
                            "detail": why})
    if verdicts[-1]:
        return GateResult(False, [f"a regression against production: {why}"
                                  for why in verdicts[-1]], comparisons)
    if not verdicts[1]:
        return GateResult(False, ["not better than production on any measure (a tie keeps "
                                  f"production): {'; '.join(verdicts[0])}"], comparisons)
    return GateResult(True, [], comparisons)


def judged_order(report: dict[str, Any]) -> tuple[float, ...]:
    """A total order of judged reports for picking the best known (the bar): the measures'
    point values in rank order, each oriented so that larger is better."""
    out: list[float] = []
    for m in (report.get("judged") or {}).get("measures", []):
        if m["kind"] == "lines":
            out.append(-float(m["value"]))
        elif m["kind"] == "rate":
            out.append(float(m["value"]))
        else:
            out.append(float(m["score"]["value"]))
    return tuple(out)


def _figures(report: dict[str, Any]) -> str:
    won, rate, random_loss = measure(report)
    return (f"unbeatable {'yes' if won else 'no'}, optimal_move_rate "
            f"{'unmeasured' if rate == UNMEASURED else f'{rate:.6f}'}, loss rate against "
            f"random play {'unmeasured' if random_loss == UNMEASURED else f'{-random_loss:.4f}'}")


@dataclass(frozen=True)
class ShadowGate:
    """Promotion also waits for a shadow test (``gameai trainer --shadow-gate N``): a
    candidate that passes the other gates is first shadowed (the store's ``shadow`` alias
    at ``share`` percent of production's best-move queries, :mod:`gameai.service.shadow`)
    and promoted only once the servers have compared it on at least ``min_proved`` live
    queries the solver proved, and it answered optimally at least as often as production
    on those same queries (a paired comparison: no interval needed). Live traffic is what
    the gate adds: the positions people reach, not the evaluator's."""

    min_proved: int
    share: int = 100

    def check(self, store: ModelStore, *, game: str, version: int,
              production: int) -> tuple[bool, str]:
        """Whether the shadow test of ``version`` against ``production`` passes, and why."""
        reports = store.shadow_reports(game=game, version=version)
        report = next((r for r in reports if r.production == production), None)
        if report is None or report.proved < self.min_proved:
            proved = report.proved if report else 0
            return False, (f"shadow test: {proved:,} of {self.min_proved:,} proved live "
                           f"queries compared so far (shadowed at {self.share}%)")
        if report.shadow_optimal < report.production_optimal:
            return False, (f"shadow test: optimal on {report.shadow_optimal:,} of "
                           f"{report.proved:,} proved live queries, production on "
                           f"{report.production_optimal:,}")
        return True, f"shadow test passed: {report.describe()}"


@dataclass(frozen=True)
class Published:
    version: int
    promoted: bool
    gates: GateResult | None  # None with manual promotion
    production: int | None  # the production version after this publish
    held: str | None = None  # the pin that held an automatic promotion off

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "promoted": self.promoted,
                "gates": self.gates.to_json() if self.gates else None,
                "production": self.production, "held": self.held}


ProductionReport = Callable[[int], "dict[str, Any] | None"]
"""The evaluation of a production version, by number (``None``: unknown)."""


def stored_report(store: ModelStore, game: str) -> ProductionReport:
    """Production's evaluation as stored with it (what ``gameai train --store`` uses; the
    worker evaluates production itself, so a report made by an older evaluator cannot
    mislead it)."""
    def report(version: int) -> dict[str, Any] | None:
        record = store.version(game=game, version=version)
        return record.evaluation if record else None
    return report


def publish(store: ModelStore, model: Model, *, by: str, promote: str = "manual",
            token: str | None = None,
            production_report: ProductionReport | None = None,
            shadow_gate: ShadowGate | None = None) -> Published:
    """Publish ``model`` (its evaluation is in its metadata) and, with ``promote="auto"``,
    point ``production`` at it when the gates pass against the current production (judged
    by ``production_report``, default the stored evaluation) and no operator has pinned it.

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
    return promote_version(store, game=game, version=record.version,
                           report=model.info.evaluation, by=by,
                           production_report=production_report, shadow_gate=shadow_gate)


def promote_version(store: ModelStore, *, game: str, version: int, report: dict[str, Any],
                    by: str, production_report: ProductionReport | None = None,
                    shadow_gate: ShadowGate | None = None) -> Published:
    """Point ``production`` at the published ``version`` (evaluated as ``report``) if the
    gates pass against the current production, its shadow test passed (with a
    ``shadow_gate``: until then it is shadowed, and ``held`` says how far the test is) and
    production is not pinned."""
    rollout = store.rollout(game=game)
    production = rollout.production
    judge = production_report or stored_report(store, game)
    current = judge(production) if production is not None else None
    gates = check_gates(report, current)
    if not gates.passed:
        return Published(version, False, gates, production)
    if shadow_gate is not None and production is not None:
        passed, why = shadow_gate.check(store, game=game, version=version,
                                        production=production)
        if not passed:
            if (rollout.shadow, rollout.shadow_share) != (version, shadow_gate.share):
                store.set_shadow(game=game, version=version, share=shadow_gate.share, by=by)
            return Published(version, False, gates, production, held=why)
    try:
        store.set_alias(game=game, alias="production", version=version, by=by,
                        unless_pinned=True)
    except Pinned as e:
        return Published(version, False, gates, production, held=str(e))
    return Published(version, True, gates, version)


def who() -> str:
    """The ``by`` of a version the trainer publishes: ``trainer@HOST``."""
    import socket

    return f"trainer@{socket.gethostname()}"
