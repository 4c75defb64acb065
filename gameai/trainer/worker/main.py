"""``gameai trainer``: the long-running worker that learns, publishes and promotes.

It trains in short rounds of self-play (a fraction of a second each). Every
``publish_every`` games, while evaluation stays within ``eval_share`` of its time, it
exports the model and evaluates it. A candidate is published only when it passes the gates
against the best model known (:mod:`gameai.trainer.worker.gates`: unbeatable, perfect where the
solver
can tell, better than production), or every time with ``--publish every`` (which never
idles: the operator asked for versions); with ``--promote auto`` it then becomes
``production`` unless an operator has pinned production. At most one version goes out per
``publish_min_seconds``.

When the best model known is proven perfect (production's, or one this worker published
and a pin held back), nothing is left to learn: the worker idles, using no CPU and
publishing nothing, and says so in its log, in ``gameai_trainer_idle`` and on
``/healthz``. It resumes when production changes or a pin is released (and promotes its
own better version once the pin is gone).

Operators' changes arrive as events, whatever the worker is doing: a listener thread
(:meth:`Worker.listen`) follows the store's change events, so a pin, a release, a
promotion or a rollback shows on ``/healthz`` and in ``gameai_trainer_production_pinned``
within a second, and a release promotes this worker's held-back version at once when it
passes the gates against production (judged already: the listener never evaluates, the
training loop does, at its next round, for a production it has not seen). After a lost
connection the listener re-reads production; the idle worker also looks every couple of
seconds, the fallback should events stop.

Store outages: a candidate that cannot be published is kept and retried with backoff
(1 s doubling to 30 s) while training goes on; a newer candidate replaces it, since it
holds everything the older one learned. Each candidate carries its own publish token, so a
retry after a lost reply never publishes twice. Nothing is lost: the learner lives in
memory and every game played ends up in the next version that gets through.

SIGTERM (or Ctrl-C): the round in progress finishes, a candidate (or production) still
being evaluated is dropped, a publish in flight completes (it is atomic), and the process
exits 0.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
import uuid
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from gameai.models import Model, ModelInfo
from gameai.models.info import describe_judged
from gameai.store import ModelStore, StoreError, StoreUnavailable
from gameai.store.subscription import Subscription
from gameai.trainer.evaluation.book import default_book
from gameai.trainer.evaluation.evaluate import evaluate
from gameai.trainer.evaluation.judge import GateJudge
from gameai.trainer.evaluation.spread import runner
from gameai.trainer.learners.base import BadParameter, Learner, Params, build_params
from gameai.trainer.training import MEMORY_BUDGET, opening_values, with_evaluation
from gameai.trainer.worker.gates import ShadowGate, check_gates, promote_version, publish
from gameai.trainer.worker.metrics import MetricsServer, TrainerMetrics
from gameai.trainer.worker.production import NotJudged, Own, ProductionView
from gameai.trainer.worker.settings import SettingsError, WorkerSettings

log = logging.getLogger("gameai.trainer")
ROUND_SECONDS = 0.25  # self-play between checks of the stop flag and the retry clock
RETRY_FIRST, RETRY_MAX = 1.0, 30.0
SHADOW_CHECK_SECONDS = 10.0  # how often a shadowed candidate's test is looked at
STALL_SECONDS = 600.0  # /healthz turns 503 if the loop has not come round for this long
PING_SECONDS = 5.0  # how often a background thread checks the store for store_up
IDLE_POLL = 2.0  # seconds between looks at the store while idle


class _Stopping(Exception):
    """Raised by the signal handler to abandon a candidate being evaluated."""


@dataclass
class _Candidate:
    model: Model
    token: str

    @property
    def report(self) -> dict[str, Any]:
        return self.model.info.evaluation


class Worker:
    """The training loop; :func:`main` builds it with real parts, tests may too."""

    def __init__(self, settings: WorkerSettings, learner: Learner, store: ModelStore,
                 metrics: TrainerMetrics, *, by: str) -> None:
        self.settings, self.learner, self.store, self.metrics = settings, learner, store, metrics
        self.by = by
        self.stop = threading.Event()
        self.heartbeat = time.monotonic()
        self.activity = "self-play"  # what /healthz says the worker is doing
        self.pending: _Candidate | None = None
        self.published: list[int] = []
        self.idle = False
        # n-tuple networks are judged as served (with search) by the solver-based measures
        # and held to no regression (gameai.trainer.worker.gates.check_judged); tables keep their
        # gates
        # the searched opponent's proved answers survive restarts in the cache's book
        # on a cluster (--cluster) the judge's matches are Ray tasks across its nodes too
        self.judge = GateJudge(settings.game, games=settings.judge_games,
                               time_limit=settings.judge_time, seed=learner.seed,
                               book=default_book(settings.game),
                               runner=runner(bool(settings.cluster))) \
            if settings.algorithm == "ntuple" else None
        self.view = ProductionView(store, settings.game.name, evaluate=self._evaluate)
        self._start = learner.games_played  # a warm start resumes the parent's count
        self._abortable = False
        self._retry_at = 0.0
        self._backoff = RETRY_FIRST
        self._shadow_check = 0.0  # when to look at a shadowed candidate's test next
        self._last_publish = -float("inf")
        self._play_seconds = 0.0
        self._eval_seconds = 0.0
        # the listener's side: one change of the view or promotion at a time; "changed"
        # asks the training loop for a full look (evaluating a new production); "wake"
        # ends an idle wait early
        self._view_lock = threading.RLock()
        self._changed = threading.Event()
        self._wake = threading.Event()

    @property
    def played(self) -> int:
        """Games this worker has played (not counting a warm start's parent)."""
        return self.learner.games_played - self._start

    def request_stop(self, *_: object) -> None:
        """The signal handler: finish the round; drop an evaluation in progress."""
        self.stop.set()
        self._wake.set()
        if self._abortable:
            raise _Stopping

    def listen(self) -> Subscription:
        """Start following the store's change events (a background thread): an operator's
        change of production reaches this worker within a second, whatever it is doing."""
        return self.store.subscribe(self._on_event, on_status=self._on_events_up)

    def _on_event(self, event: dict[str, Any]) -> None:
        if event.get("game") == self.settings.game.name and (
                event.get("type") == "pin" or event.get("alias") == "production"):
            self.follow()

    def _on_events_up(self, up: bool) -> None:
        if up:  # events sent while the listener was away are gone: read the store again
            self.follow()

    def follow(self) -> None:
        """Take in the store's production and pin now (the listener calls it on an event):
        the pinned gauge and ``/healthz`` follow at once; a release promotes this worker's
        held-back version if the gates pass against a production judged already; the
        training loop then takes a full look at its next round (or wakes from idling)."""
        try:
            with self._view_lock:
                self.view.follow()
                self.metrics.pinned(self.view.pin is not None)
                self._promote_waiting(judged_only=True)
        except StoreError as e:
            log.warning("cannot follow the store's change: %s", e)
        self._changed.set()
        self._wake.set()

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
                "activity": "idle" if self.idle else self.activity,
                "pending_publish": self.pending is not None, "idle": self.idle,
                "production_pinned": self.view.pin is not None,
                **({"stopped": MEMORY_BUDGET, "why": self.learner.full}
                   if self.learner.full is not None else {})}

    def run(self) -> None:
        try:
            self._run()
        except _Stopping:
            log.info("stopping: the evaluation in progress is dropped")
        log.info("stopped after %d games; published versions %s", self.learner.games_played,
                 self.published or "none")

    def _run(self) -> None:
        s = self.settings
        since, chunk = 0, 200
        self._look()  # a perfect production means idle before a single game
        while not self.stop.is_set():
            self.heartbeat = time.monotonic()
            if self._changed.is_set():  # an event: production or its pin moved
                self._look(force=True)
            if self.idle:
                if s.max_games is not None and self.pending is None:
                    log.info("idle with --max-games: nothing left to learn, stopping")
                    break
                self._idle_round()
                continue
            left = s.max_games - self.played if s.max_games is not None else chunk
            if left <= 0:
                if self.pending is None:
                    break
                self._retry_or_wait()
                continue
            room = s.publish_every - since  # games to the next candidate (none: overdue,
            # waiting for the evaluation budget)
            stats = self.learner.play(max(1, min(chunk, left, room if room > 0 else chunk)))
            since += stats.games
            self._play_seconds += stats.seconds
            self.metrics.played(stats.games, stats.games_per_second, self.learner.exploration)
            self.metrics.selfplay(getattr(self.learner, "selfplay_status", None))
            chunk = _next_chunk(chunk, stats.seconds)
            # the learner's table reached the memory limit: its model is the last candidate
            finished = (s.max_games is not None and self.played >= s.max_games) \
                or self.learner.full is not None
            if (since >= s.publish_every and self._evaluation_due()) or finished:
                since = 0
                self._look()
                if not self.idle:
                    self._consider(self._candidate())
                if self.learner.full is not None:
                    self._update_idle()
            self._publish_if_due()

    def _evaluation_due(self) -> bool:
        """Whether evaluating now keeps evaluation (candidates and production) within
        ``eval_share`` of the worker's time; the first evaluation is always due."""
        share = self.settings.eval_share
        return self._eval_seconds <= share / (1 - share) * self._play_seconds \
            if share < 1 else True

    def _evaluate(self, model: Model) -> dict[str, Any]:
        """The evaluator's report on ``model``; abortable by SIGTERM, and timed for the
        evaluation budget."""
        started = time.perf_counter()
        self._abortable = True
        games = model.info.games_played
        try:
            self.activity = f"evaluating the model of {games:,} games" if games else \
                "evaluating a model"
            report = evaluate(model, seed=self.learner.seed)
            if self.judge is not None:
                report["judged"] = self.judge.measures(model, report, progress=self._doing)
            return report
        finally:
            self._abortable = False
            self._eval_seconds += time.perf_counter() - started
            self.activity = "self-play"

    def _doing(self, what: str) -> None:
        """What the worker is doing now, for ``/healthz`` (and ``gameai up``'s bar)."""
        self.activity = what
        self.heartbeat = time.monotonic()

    def _look(self, *, force: bool = False) -> None:
        """Refresh the view of production (evaluating a version not seen before); on a
        change (or ``force``: the listener saw one), promote our own better version if a
        pin held it back, and decide whether anything is left to learn."""
        try:
            with self._view_lock:  # a change the listener took in counts as one here
                force = force or self._changed.is_set()
                self._changed.clear()
                changed = self.view.follow() or force
                self.metrics.pinned(self.view.pin is not None)
                production = self.view.production
            if production is not None:
                self.view.report_of(production)  # evaluates: outside the lock
        except StoreUnavailable as e:
            self.metrics.store_up(False)
            log.debug("cannot look at production: %s", e)
            return
        if not changed:
            return
        if self.view.pin is not None:
            log.info("production %s version %s is %s: automatic promotion holds off until "
                     "it is released", self.settings.game.name, self.view.production,
                     self.view.pin.describe())
        with self._view_lock:
            self._promote_waiting()
        self._update_idle()

    def _promote_waiting(self, *, judged_only: bool = False) -> None:
        """Promote this trainer's own version if it waits (a pin, a shadow test);
        ``judged_only``: only against a production already evaluated (the listener)."""
        own = self.view.own
        if (self.settings.promote == "auto" and own is not None and self.view.pin is None
                and self.view.production != own.version):
            self._promote_own(own, judged_only=judged_only)

    def _shadow_gate(self) -> ShadowGate | None:
        if not self.settings.shadow_gate:
            return None
        return ShadowGate(self.settings.shadow_gate, self.settings.shadow_share)

    def _promote_own(self, own: Own, *, judged_only: bool = False) -> None:
        judge = self.view.judged if judged_only else self.view.report_of
        try:
            done = promote_version(self.store, game=self.settings.game.name,
                                   version=own.version, report=own.report, by=self.by,
                                   production_report=judge, shadow_gate=self._shadow_gate())
        except NotJudged:
            return  # the training loop evaluates production at its next round, then promotes
        except StoreError as e:
            log.warning("cannot promote version %d now: %s", own.version, e)
            return
        if done.promoted:
            self.metrics.promoted()
            self.view.production = own.version
            log.info("promoted %s version %d, held back until now", self.settings.game.name,
                     own.version)

    def _update_idle(self) -> None:
        pending = self.pending.report if self.pending else None
        # --publish every: the operator asked for versions, so the worker never rests
        idle = self.settings.publish != "every" and self.view.perfect(pending)
        if self.learner.full is not None:  # it can learn no more: never resumes
            if not self.idle:
                log.warning("training stopped (%s): %s; its last model was the last "
                            "candidate; nothing more is learned until the trainer is "
                            "restarted with a higher limit", MEMORY_BUDGET, self.learner.full)
            idle = True
        elif idle != self.idle:
            if idle:
                log.info("idle: %s; nothing left to learn, so no training and no versions "
                         "until production changes, a pin is released or the trainer is "
                         "restarted with other settings", self.view.describe_perfect(pending))
            else:
                log.info("resuming training: production is now version %s, not perfect",
                         self.view.production)
        self.idle = idle
        self.metrics.idle(idle)

    def _idle_round(self) -> None:
        self._publish_if_due()
        self._wake.wait(IDLE_POLL)  # an event or a stop ends the wait early
        self._wake.clear()
        if self.stop.is_set():
            return
        self._look(force=self._changed.is_set())

    def _candidate(self) -> _Candidate:
        exported = self.learner.export()
        report = self._evaluate(exported)
        model = with_evaluation(
            lambda r: exported.with_info(self.learner.info(evaluation=r)), report)
        self.metrics.evaluated(report)
        log.info("candidate after %d games: losses X %s O %s, optimal %s, opening moves %s",
                 self.learner.games_played, report.get("losses_as_x"),
                 report.get("losses_as_o"), report.get("optimal_move_rate"),
                 [round(v, 3) for v in opening_values(model) if v is not None])
        if report.get("judged"):
            log.info("candidate judged (%s): %s", report["judged"]["policy"],
                     describe_judged(report["judged"]))
        return _Candidate(model, uuid.uuid4().hex)

    def _consider(self, candidate: _Candidate) -> None:
        """Keep ``candidate`` for publishing if it clears the bar (or every candidate goes
        out, with ``--publish every``); else drop it and say why."""
        if self.settings.publish != "every":
            gates = check_gates(candidate.report, self.view.bar())
            for c in gates.comparisons:
                log.info("gate: %s %s (%s)", c["measure"], c["verdict"], c["detail"])
            if not gates.passed:
                self.metrics.candidate("not_better")
                log.info("candidate not published: %s", "; ".join(gates.reasons))
                return
            # the decision and every comparison travel in the version's own report
            model = candidate.model
            candidate = _Candidate(model.with_info(replace(
                model.info, evaluation={**candidate.report, "gates": gates.to_json()})),
                candidate.token)
        self.metrics.candidate("kept")
        self.pending = candidate
        self._retry_at, self._backoff = 0.0, RETRY_FIRST
        self._update_idle()

    def _publish_if_due(self) -> None:
        now = time.monotonic()
        if (self.pending is not None and now >= self._retry_at
                and now - self._last_publish >= self.settings.publish_min_seconds):
            self._publish()
        if self._shadow_gate() is not None and now >= self._shadow_check:
            # a shadowed candidate waits for the servers' comparisons: look again
            self._shadow_check = now + SHADOW_CHECK_SECONDS
            self._promote_waiting()

    def _publish(self) -> None:
        assert self.pending is not None
        try:
            done = publish(self.store, self.pending.model, by=self.by,
                           promote=self.settings.promote, token=self.pending.token,
                           production_report=self.view.report_of,
                           shadow_gate=self._shadow_gate())
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
        self.metrics.published()
        with self._view_lock:
            if done.promoted:
                self.metrics.promoted()
                self.view.production = done.version
            self.view.own = Own(done.version, self.pending.report)
        self.published.append(done.version)
        self.learner.parent_version = done.version  # what the next candidate grows from
        self._last_publish = time.monotonic()
        self.pending = None
        gates = "" if done.gates is None else (
            "; promoted to production" if done.promoted
            else f"; not promoted: {done.held}" if done.held
            else f"; not promoted: {'; '.join(done.gates.reasons)}")
        log.info("published %s version %d%s", self.settings.game.name, done.version, gates)
        self._update_idle()

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
    from gameai.trainer.training import make_learner
    from gameai.trainer.worker.gates import who

    learner = make_learner(settings.game, settings.algorithm, seed=settings.seed,
                           params=settings.params)
    logging.basicConfig(level=settings.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    registry = CollectorRegistry()
    metrics = TrainerMetrics(registry, game=settings.game.name, algorithm=settings.algorithm)
    with open_store(settings.store) as store:
        if settings.from_version:
            learner = _warm_start(learner, store, settings, settings.from_version)
        elif settings.resume:
            learner = _resume(learner, store, settings)
        if settings.cluster:
            _join_cluster(learner, settings)
        worker = Worker(settings, learner, store, metrics, by=who())
        try:
            server = MetricsServer(registry, host=settings.host,
                                   port=settings.metrics_port, healthy=worker.health)
        except OSError as e:
            raise SettingsError(f"GAMEAI_METRICS_PORT (--metrics-port): cannot listen on "
                                f"{settings.host}:{settings.metrics_port}: "
                                f"{e.strerror}") from e
        server.start()
        log.info("training %s with %s, seed %d (publish %s, promote %s); metrics on "
                 "http://%s:%d/metrics; store %s", settings.game.name, settings.algorithm,
                 settings.seed, settings.publish, settings.promote, settings.host,
                 server.port, settings.store.where)
        watch = worker.watch_store()
        events = worker.listen()
        previous = {sig: signal.signal(sig, worker.request_stop)
                    for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            learner.play(0)  # numba compiles here (seconds, from an empty cache); a SIGTERM
            worker.run()  # meanwhile is handled like any other: finish, exit 0
        finally:
            getattr(learner, "close", lambda: None)()  # the parallel actors, if any
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            worker.stop.set()
            events.close()
            watch.join(timeout=5)
            server.stop()
    return 0


def _join_cluster(learner: Learner, settings: WorkerSettings) -> None:
    """``--cluster``: the n-tuple learner's parallel actors on a Ray cluster."""
    from gameai.trainer.selfplay.ray import RayCluster, RayUnavailable, connect

    params = getattr(learner.params, "actors", 1), getattr(learner.params, "sync_games", 0)
    if settings.algorithm != "ntuple" or params[0] < 2 or params[1] == 0:
        raise SettingsError("--cluster runs the n-tuple learner's parallel actors in rounds: "
                            "--algorithm ntuple --param actors=N (N >= 2)")
    try:
        machines = connect(settings.cluster or "auto")
    except RayUnavailable as e:
        raise SettingsError(str(e)) from e
    log.info("self-play on the Ray cluster at %s: %d nodes, %d CPUs", settings.cluster,
             machines["nodes"], machines["cpus"])
    learner.use_backend(RayCluster(settings.on_node_loss))  # type: ignore[attr-defined]


def _resume(learner: Learner, store: ModelStore, settings: WorkerSettings) -> Learner:
    """``--resume``: go on from production if there is one (:func:`_warm_start`). A store
    without one gets the game's bundled starting model as production (unless
    ``--no-bundled``), so the servers serve it at once and are ready, whichever way the
    trainer was started (Compose, Kubernetes, ``gameai up``); with none bundled, training
    starts fresh (``learner`` is returned as it is)."""
    from gameai.models import CorruptModel
    from gameai.models.bundled import publish_bundled

    game = settings.game.name
    if store.resolve(game=game, ref="production") is None:
        done = None
        if settings.bundled:
            try:
                done = publish_bundled(store, game, algorithm=settings.algorithm,
                                       by="gameai trainer (bundled model)")
            except CorruptModel as e:
                log.warning("--resume: the bundled model of %s is not used (%s)", game, e)
        if done is None:
            log.info("--resume: %s has no production version yet; starting fresh", game)
            return learner
        log.info("--resume: %s had no production version: published its bundled model as "
                 "version %d and made it production (%s)", game, done[0], done[1].judged)
    return _warm_start(learner, store, settings, "production")


def _warm_start(learner: Learner, store: ModelStore, settings: WorkerSettings,
                ref: str) -> Learner:
    """Go on from version ``ref``: its weights, its games and clock, and its recipe (the
    learner is built again with :func:`inherited_params` where they differ from
    ``learner``'s). Returns the learner that trains on."""
    from gameai.models import CorruptModel
    from gameai.trainer.training import make_learner

    flag = "--resume" if settings.resume and not settings.from_version else "--from-version"
    try:
        record = store.require(game=settings.game.name, ref=ref)
        model = store.load(game=settings.game.name, version=record.version)
        recipe = inherited_params(learner.params, model.info, settings)
        if recipe is not None:
            own = asdict(learner.params)
            learner = make_learner(settings.game, settings.algorithm, seed=settings.seed,
                                   params=recipe)
            log.info("warm start: training on with version %d's recipe: %s (a --param "
                     "sets another)", record.version, ", ".join(
                         f"{k}={v}" for k, v in recipe.items() if own[k] != v))
        learner.warm_start(model)
    except (CorruptModel, ValueError) as e:
        raise SettingsError(f"{flag} {ref}: {e}") from e
    except StoreError as e:
        if isinstance(e, StoreUnavailable):
            raise
        raise SettingsError(f"{flag} {ref}: {e}") from e
    learner.parent_version = record.version
    learner.games_played = model.info.games_played  # the schedules resume where it stopped
    learner.training_seconds = model.info.training_seconds  # and so does the clock
    log.info("warm start from %s version %d (%d games)", settings.game.name, record.version,
             model.info.games_played)
    return learner


def inherited_params(own: Params, parent: ModelInfo,
                     settings: WorkerSettings) -> dict[str, Any] | None:
    """The learner parameters a warm start from ``parent`` trains on, where they differ
    from ``own`` (the worker's, None where they do not): the parent's recipe (its
    recorded parameters) under the worker's own ``--param`` values, so that going on from
    a model goes on with what made it (Connect Four's bundled model learns one sibling a
    ply at a step of 0.02, not the defaults). How the games are run (``Params.MACHINE``:
    the parallel actors and their rounds) stays the worker's. A parent of another
    algorithm, or whose recipe this learner cannot take (a parameter since removed or out
    of range), leaves ``own`` as it is, with a warning."""
    if parent.algorithm != settings.algorithm or not parent.params:
        return None
    names = fields(own)
    # a parameter added later is recorded only when set: unrecorded, it was at its default
    recorded = {f.name: f.default for f in names if f.metadata.get("added_later")}
    recorded |= parent.params
    unknown = sorted(set(recorded) - {f.name for f in names})
    if unknown:
        log.warning("warm start: the parent's parameters %s are not this learner's; "
                    "left out", ", ".join(unknown))
    recipe = {**asdict(own),
              **{k: v for k, v in recorded.items() if k not in unknown and k not in own.MACHINE},
              **settings.params}
    try:
        params = build_params(type(own), recipe)
    except BadParameter as e:
        log.warning("warm start: the parent's recipe cannot be used (%s); training on "
                    "with the worker's own parameters", e)
        return None
    return None if params == own else asdict(params)
