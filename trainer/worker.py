"""``gameai trainer``: the long-running worker that learns, publishes and promotes.

It trains in short rounds of self-play (a fraction of a second each). Every
``publish_every`` games (and at most once per ``publish_min_seconds``, so a fast game does
not flood the store with versions) it exports the model, evaluates it and publishes it as
a candidate with the evaluation in its metadata; with ``--promote auto`` the candidate becomes
``production`` when the gates pass (:mod:`trainer.gates`).

Store outages: a candidate that cannot be published is kept and retried with backoff
(1 s doubling to 30 s) while training goes on; a newer candidate replaces it, since it
holds everything the older one learned. Each candidate carries its own publish token, so a
retry after a lost reply never publishes twice. Nothing is lost: the learner lives in
memory and every game played ends up in the next version that gets through.

SIGTERM (or Ctrl-C): the round in progress finishes, a candidate still being evaluated is
dropped, a publish in flight completes (it is atomic), and the process exits 0.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from gameai.models import Model
from gameai.store import ModelStore, StoreError, StoreUnavailable
from trainer.evaluate import evaluate
from trainer.learner import Learner
from trainer.metrics import MetricsServer, TrainerMetrics
from trainer.settings import SettingsError, WorkerSettings
from trainer.training import opening_values, with_evaluation

log = logging.getLogger("gameai.trainer")
ROUND_SECONDS = 0.25  # self-play between checks of the stop flag and the retry clock
RETRY_FIRST, RETRY_MAX = 1.0, 30.0
STALL_SECONDS = 600.0  # /healthz turns 503 if the loop has not come round for this long
PING_SECONDS = 5.0  # how often a background thread checks the store for store_up


class _Stopping(Exception):
    """Raised by the signal handler to abandon a candidate being evaluated."""


@dataclass
class _Candidate:
    model: Model
    token: str


class Worker:
    """The training loop; :func:`main` builds it with real parts, tests may too."""

    def __init__(self, settings: WorkerSettings, learner: Learner, store: ModelStore,
                 metrics: TrainerMetrics, *, by: str) -> None:
        self.settings, self.learner, self.store, self.metrics = settings, learner, store, metrics
        self.by = by
        self.stop = threading.Event()
        self.heartbeat = time.monotonic()
        self.pending: _Candidate | None = None
        self.published: list[int] = []
        self._start = learner.games_played  # a warm start resumes the parent's count
        self._abortable = False
        self._retry_at = 0.0
        self._backoff = RETRY_FIRST
        self._last_candidate = -float("inf")

    @property
    def played(self) -> int:
        """Games this worker has played (not counting a warm start's parent)."""
        return self.learner.games_played - self._start

    def request_stop(self, *_: object) -> None:
        """The signal handler: finish the round; drop a candidate still being evaluated."""
        self.stop.set()
        if self._abortable:
            raise _Stopping

    def watch_store(self) -> threading.Thread:
        """Start a thread that pings the store every few seconds for ``store_up``, so the
        gauge is fresh between publishes and training never waits on it."""
        def loop() -> None:
            while True:
                try:
                    self.store.ping()
                    self.metrics.store_up(True)
                except StoreError:
                    self.metrics.store_up(False)
                if self.stop.wait(PING_SECONDS):
                    return

        thread = threading.Thread(target=loop, name="store-watch", daemon=True)
        thread.start()
        return thread

    def health(self) -> dict[str, Any] | None:
        if time.monotonic() - self.heartbeat > STALL_SECONDS:
            return None
        return {"status": "ok", "games": self.learner.games_played,
                "pending_publish": self.pending is not None}

    def run(self) -> None:
        s = self.settings
        since, chunk = 0, 200
        while not self.stop.is_set():
            self.heartbeat = time.monotonic()
            left = s.max_games - self.played if s.max_games is not None else chunk
            if left <= 0:
                if self.pending is None:
                    break
                self._retry_or_wait()
                continue
            stats = self.learner.play(max(1, min(chunk, left, s.publish_every - since)))
            since += stats.games
            self.metrics.played(stats.games, stats.games_per_second, self.learner.exploration)
            chunk = _next_chunk(chunk, stats.seconds)
            finished = s.max_games is not None and self.played >= s.max_games
            due = time.monotonic() - self._last_candidate >= s.publish_min_seconds
            if (since >= s.publish_every and due) or finished:
                since = 0
                self._last_candidate = time.monotonic()
                try:
                    self.pending = self._candidate()
                except _Stopping:
                    log.info("stopping: the candidate being evaluated is dropped")
                    break
                self._retry_at, self._backoff = 0.0, RETRY_FIRST
            if self.pending is not None and time.monotonic() >= self._retry_at:
                self._publish()
        log.info("stopped after %d games; published versions %s", self.learner.games_played,
                 self.published or "none")

    def _candidate(self) -> _Candidate:
        self._abortable = True
        try:
            model = self.learner.export()
            report = evaluate(model, seed=self.learner.seed)
            model = with_evaluation(
                lambda r: self.learner.export(self.learner.info(evaluation=r)), report)
        finally:
            self._abortable = False
        self.metrics.evaluated(report)
        log.info("candidate after %d games: losses X %s O %s, optimal %s, opening %s",
                 self.learner.games_played, report.get("losses_as_x"),
                 report.get("losses_as_o"), report.get("optimal_move_rate"),
                 [None if v is None else round(v, 3) for v in opening_values(model)])
        return _Candidate(model, uuid.uuid4().hex)

    def _publish(self) -> None:
        from trainer.gates import publish

        assert self.pending is not None
        try:
            done = publish(self.store, self.pending.model, by=self.by,
                           promote=self.settings.promote, token=self.pending.token)
        except StoreUnavailable as e:
            self.metrics.publish_failed()
            self.metrics.store_up(False)
            self._retry_at = time.monotonic() + self._backoff
            log.warning("publish failed, retrying in %.0f s while training goes on: %s",
                        self._backoff, e)
            self._backoff = min(self._backoff * 2, RETRY_MAX)
            return
        except StoreError as e:  # refused: keep training, try the next candidate
            self.metrics.publish_failed()
            self.pending = None
            log.error("the store refused the candidate: %s", e)
            return
        self.metrics.store_up(True)
        self.metrics.published(promoted=done.promoted)
        self.published.append(done.version)
        self.pending = None
        gates = "" if done.gates is None else (
            "; promoted to production" if done.promoted
            else f"; not promoted: {'; '.join(done.gates.reasons)}")
        log.info("published %s version %d%s", self.settings.game.name, done.version, gates)

    def _retry_or_wait(self) -> None:
        if time.monotonic() >= self._retry_at:
            self._publish()
        else:
            self.stop.wait(min(0.2, self._retry_at - time.monotonic()))


def _next_chunk(chunk: int, seconds: float) -> int:
    """Games per round, steered towards ``ROUND_SECONDS`` a round."""
    if seconds <= 0:
        return min(chunk * 2, 1_000_000)
    return max(10, min(int(chunk * ROUND_SECONDS / seconds), chunk * 4, 1_000_000))


def main(settings: WorkerSettings) -> int:
    """The composition root: learner, store, metrics server, signals, loop. Returns 0 once
    the loop has stopped (SIGTERM, Ctrl-C or ``max_games``).

    Raises:
        SettingsError: the metrics port cannot be bound, or the version to warm-start from
            cannot be used; the message names the setting.
        BadParameter, CannotTrain: the learner cannot be built as asked.
        StoreUnavailable: the store cannot be reached.
    """
    from prometheus_client import CollectorRegistry

    from gameai.store.connect import open_store
    from trainer.gates import who
    from trainer.training import make_learner

    learner = make_learner(settings.game, settings.algorithm, seed=settings.seed,
                           params=settings.params)
    logging.basicConfig(level=settings.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    registry = CollectorRegistry()
    metrics = TrainerMetrics(registry, game=settings.game.name, algorithm=settings.algorithm)
    with open_store(settings.store) as store:
        if settings.from_version:
            _warm_start(learner, store, settings, settings.from_version)
        elif settings.resume:
            _resume(learner, store, settings)
        worker = Worker(settings, learner, store, metrics, by=who())
        try:
            server = MetricsServer(registry, host=settings.host,
                                   port=settings.metrics_port, healthy=worker.health)
        except OSError as e:
            raise SettingsError(f"GAMEAI_METRICS_PORT (--metrics-port): cannot listen on "
                                f"{settings.host}:{settings.metrics_port}: "
                                f"{e.strerror}") from e
        server.start()
        log.info("training %s with %s; metrics on http://%s:%d/metrics; store %s",
                 settings.game.name, settings.algorithm, settings.host, server.port,
                 settings.store.where)
        watch = worker.watch_store()
        previous = {sig: signal.signal(sig, worker.request_stop)
                    for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            learner.play(0)  # numba compiles here (seconds, from an empty cache); a SIGTERM
            worker.run()  # meanwhile is handled like any other: finish, exit 0
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            worker.stop.set()
            watch.join(timeout=5)
            server.stop()
    return 0


def _resume(learner: Learner, store: ModelStore, settings: WorkerSettings) -> None:
    """``--resume``: go on from production if there is one; a fresh store starts fresh."""
    if store.resolve(game=settings.game.name, ref="production") is None:
        log.info("--resume: %s has no production version yet; starting fresh",
                 settings.game.name)
        return
    _warm_start(learner, store, settings, "production")


def _warm_start(learner: Learner, store: ModelStore, settings: WorkerSettings,
                ref: str) -> None:
    from gameai.models import CorruptModel

    flag = "--resume" if settings.resume and not settings.from_version else "--from-version"
    try:
        record = store.require(game=settings.game.name, ref=ref)
        model = store.load(game=settings.game.name, version=record.version)
        learner.warm_start(model)
    except (CorruptModel, ValueError) as e:
        raise SettingsError(f"{flag} {ref}: {e}") from e
    except StoreError as e:
        if isinstance(e, StoreUnavailable):
            raise
        raise SettingsError(f"{flag} {ref}: {e}") from e
    learner.parent_version = record.version
    learner.games_played = model.info.games_played  # the schedules resume where it stopped
    log.info("warm start from %s version %d (%d games)", settings.game.name, record.version,
             model.info.games_played)
