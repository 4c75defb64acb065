"""What the worker knows of the store's ``production``: the version, its evaluation, the
operator's pin, and the bar a candidate must clear.

Production is evaluated here, by today's evaluator, rather than trusted from the report
stored with it: a version published by an older evaluator (or imported by hand) could
otherwise claim a perfection it does not have, or hide one it has. Each version is
evaluated once; the worker's own published versions are known already.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gameai.models import CorruptModel, Model
from gameai.store import ModelStore, Pin, StoreError, StoreUnavailable
from gameai.trainer.worker.gates import judged_order, measure, perfect

log = logging.getLogger("gameai.trainer")
Report = dict[str, Any]


class NotJudged(Exception):
    """A version's evaluation is asked for before the training loop has made it."""


@dataclass(frozen=True)
class Own:
    """The last version this worker published, with its evaluation."""

    version: int
    report: Report


class ProductionView:
    """The worker's view of one game's production, refreshed by :meth:`look`."""

    def __init__(self, store: ModelStore, game: str, *,
                 evaluate: Callable[[Model], Report]) -> None:
        self.store, self.game, self._evaluate = store, game, evaluate
        self.production: int | None = None
        self.pin: Pin | None = None
        self.own: Own | None = None
        self.known = False  # whether the store has answered at least once
        self._reports: dict[int, Report | None] = {}

    def look(self) -> bool:
        """Read production and its pin; evaluate a production version not seen before.
        Returns whether anything changed since the last look (always true the first time).

        Raises:
            StoreUnavailable: the store cannot be reached (the view stays as it was).
        """
        changed = self.follow()
        if self.production is not None:
            self.report_of(self.production)
        return changed

    def follow(self) -> bool:
        """Read production and its pin, evaluating nothing (what an event's listener does
        at once, whatever the worker is busy with). Returns whether anything changed.

        Raises:
            StoreUnavailable: the store cannot be reached (the view stays as it was).
        """
        rollout = self.store.rollout(game=self.game)
        seen = (rollout.production, rollout.pin)
        changed = not self.known or seen != (self.production, self.pin)
        self.production, self.pin = seen
        self.known = True
        return changed

    def judged(self, version: int) -> Report | None:
        """The evaluation of ``version`` if it was made already (never evaluates).

        Raises:
            NotJudged: it was not: only the training loop evaluates (it takes seconds).
        """
        if self.own is not None and version == self.own.version:
            return self.own.report
        if version not in self._reports:
            raise NotJudged(f"{self.game} version {version} has not been evaluated yet")
        return self._reports[version]

    def report_of(self, version: int) -> Report | None:
        """The evaluation of ``version`` by today's evaluator (``None``: it cannot be
        loaded), made once per version.

        Raises:
            StoreUnavailable: the store cannot be reached.
        """
        if self.own is not None and version == self.own.version:
            return self.own.report
        if version not in self._reports:
            try:
                model = self.store.load(game=self.game, version=version)
            except StoreUnavailable:
                raise
            except (StoreError, CorruptModel) as e:
                log.warning("production %s version %d cannot be loaded to judge it: %s",
                            self.game, version, e)
                self._reports[version] = None
            else:
                self._reports[version] = self._evaluate(model)
        return self._reports[version]

    @property
    def production_report(self) -> Report | None:
        return None if self.production is None else self.report_of(self.production)

    def bar(self, pending: Report | None = None) -> Report | None:
        """The best evaluation known: production's, this worker's own published version's
        (better while a pin held it back) or a ``pending`` candidate's."""
        reports = [r for r in (self.production_report, self.own and self.own.report, pending)
                   if r]
        if reports and all(r.get("judged") is not None for r in reports):
            return max(reports, key=judged_order)  # the n-tuple worker's judged measures
        return max(reports, key=measure, default=None)

    def perfect(self, pending: Report | None = None) -> bool:
        """Whether the best model known is proven perfect: nothing is left to learn."""
        return perfect(self.bar(pending))

    def describe_perfect(self, pending: Report | None = None) -> str:
        best = self.bar(pending)
        if best is None:
            return "nothing"
        if self.own is not None and best is self.own.report:
            which = f"this trainer's version {self.own.version}"
        elif pending is not None and best is pending:
            which = "the candidate waiting to be published"
        else:
            which = f"production version {self.production}"
        positions = best.get("optimal_move_positions")
        return (f"{which} is perfect (unbeatable, the optimal move in every one of "
                f"{positions:,} positions)" if positions else f"{which} is perfect")
