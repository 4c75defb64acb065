"""Shadow tests of a candidate: a share of live best-move queries mirrored to the version
aliased ``shadow``, off the request path, and compared with production's answers.

``gameai models shadow --game G --version N --share S`` points the ``shadow`` alias at N
and sets the share (percent of the best-move queries that production answers). The
request path only offers a query (:meth:`Shadow.offer`: a share counter and a
``put_nowait`` into a bounded queue, dropping and counting when it is full); it never waits
and never changes the answer. A worker thread takes the queries, asks the shadow version
for its best move in the same position (at the same depth where both search), and
records whether it is production's; where the game's solver proves the position within
the shadow's small budget, whether each version's move is optimal. The tallies go to
the metrics (``gameai_shadow_*``) and, every :data:`FLUSH_SECONDS`, into the store
(:meth:`gameai.store.ModelStore.record_shadow`), where ``gameai models list``, the model
listing (REST, gRPC, the web board's version panel) and the trainer's gates read them.

The worker is held to a duty cycle: it is busy at most :data:`DUTY` of the time (the rest
it sleeps, and queries that arrive meanwhile are dropped and counted), so a shadow can take
at most that share of a server's time whatever the candidate costs (its search, its
solver): ``gameai bench server`` measures what 100% shadowing costs.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter
from dataclasses import dataclass

from gameai.games import GameError
from gameai.service.analysis import SOLUTIONS
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.service.session import ModelSession
from gameai.store import StoreError

log = logging.getLogger("gameai.service")

QUEUE_SIZE = 1000
SOLVE_MS = 20  # the solver's budget per shadowed query
DUTY = 0.1  # the worker is busy at most this share of the time
MAX_REST = 1.0  # seconds of one rest
FLUSH_SECONDS = 1.0  # tallies go to the store this often
FAILED_KEPT = 10_000  # positions the shadow's solver could not prove, not tried again
TALLIES = ("compared", "agreed", "proved", "production_optimal", "shadow_optimal", "dropped")


@dataclass(frozen=True)
class _Query:
    game: str
    production: ModelSession
    board: str
    to_move: str
    depth: int | None


class Shadow:
    """The process's shadow: the request path offers, a worker thread compares.

    Args:
        registry: where the shadow and production versions are held (``Served``).
        metrics: the ``gameai_shadow_*`` series.
        queue_size: queries that may wait for the worker; more are dropped (counted).
        solve_ms: the solver's budget per query (0: no optimality).
        duty: the share of time the worker may be busy.
    """

    def __init__(self, registry: Registry, metrics: Metrics, *, queue_size: int = QUEUE_SIZE,
                 solve_ms: int = SOLVE_MS, duty: float = DUTY,
                 flush_seconds: float = FLUSH_SECONDS) -> None:
        self.registry = registry
        self.metrics = metrics
        self.solve_ms = solve_ms
        self.duty = duty
        self.flush_seconds = flush_seconds
        self._queue: queue.Queue[_Query] = queue.Queue(maxsize=queue_size)
        self._credit: dict[str, int] = {}
        self._pending: dict[tuple[str, int, int], Counter[str]] = {}
        self._failed: set[tuple[str, str]] = set()
        self._lock = threading.Lock()  # the tallies: the request path counts drops
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.processed = 0  # queries compared by this process (tests wait on it)

    # -- the request path ---------------------------------------------------------------

    def offer(self, game: str, answered_by: ModelSession, board: str, to_move: str,
              depth: int | None) -> None:
        """Mirror this query if the game has a shadow, production answered it and the
        share's turn has come; never blocks, never raises."""
        served = self.registry.served(game)
        share = served.shadow_share
        if not share or answered_by.version != served.aliases.get("production"):
            return
        credit = self._credit.get(game, 0) + share
        if credit < 100:
            self._credit[game] = credit
            return
        self._credit[game] = credit - 100
        try:
            self._queue.put_nowait(_Query(game, answered_by, board, to_move, depth))
        except queue.Full:
            self.metrics.shadow_dropped.labels(game).inc()
            shadow = served.aliases.get("shadow")
            if shadow is not None:
                with self._lock:
                    self._tally(game, shadow, answered_by.version)["dropped"] += 1

    # -- the worker ---------------------------------------------------------------------

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="gameai-shadow", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self.flush()

    def _run(self) -> None:
        last_flush = time.monotonic()
        window_start, busy = time.monotonic(), 0.0
        while not self._stop.is_set():
            try:
                item = self._queue.get(timeout=0.1)
            except queue.Empty:
                item = None
            if item is not None:
                started = time.monotonic()
                try:
                    self.compare(item)
                except Exception:  # a bug must not end the worker: log it, go on
                    log.exception("shadow comparison failed")
                busy += time.monotonic() - started
            self.metrics.shadow_queued.set(self._queue.qsize())
            now = time.monotonic()
            if busy > self.duty * max(now - window_start, 1e-3):
                # over the duty cycle: rest until the busy share is back to it (at most a
                # second: one comparison that took long, a solver's first table, is past)
                self._stop.wait(min(busy / self.duty - (now - window_start), MAX_REST))
                now = time.monotonic()
                window_start, busy = now, 0.0
            elif now - window_start > 1.0:
                window_start, busy = now, 0.0
            if now - last_flush >= self.flush_seconds:
                self.flush()
                last_flush = now

    def compare(self, query: _Query) -> None:
        """Answer ``query`` by the shadow version too and count the comparison."""
        served = self.registry.served(query.game)
        version = served.aliases.get("shadow")
        shadow = served.models.get(version) if version is not None else None
        if shadow is None:
            return
        production = query.production
        try:
            ours = production.position(query.board, query.to_move, query.depth,
                                       best_only=True).evaluation.best
            depth = _depth_for(shadow, query.depth)
            theirs = shadow.position(query.board, query.to_move, depth,
                                     best_only=True).evaluation.best
        except GameError:
            return  # the position answered before: cannot happen, never counted
        with self._lock:
            tally = self._tally(query.game, shadow.version, production.version)
        tally["compared"] += 1
        labels = (query.game, str(shadow.version))
        self.metrics.shadow_compared.labels(*labels).inc()
        if ours.action_id == theirs.action_id:
            tally["agreed"] += 1
            self.metrics.shadow_agreed.labels(*labels).inc()
        optimal = self._optimal(production, query)
        if optimal is not None:
            tally["proved"] += 1
            self.metrics.shadow_proved.labels(*labels).inc()
            for who, move in (("production", ours), ("shadow", theirs)):
                if move.action_id in optimal:
                    tally[f"{who}_optimal"] += 1
                    self.metrics.shadow_optimal.labels(*labels, who).inc()
        self.processed += 1

    def _optimal(self, session: ModelSession, query: _Query) -> tuple[int, ...] | None:
        """The position's optimal actions where the solver proves them within the budget
        (a position it failed on is not tried again)."""
        if not self.solve_ms:
            return None
        key = (query.game, f"{query.board}\n{query.to_move}")
        if key in self._failed:
            return None
        game = session.model.game
        state = game.parse(query.board, to_move=query.to_move)
        solution = SOLUTIONS.proved(game, state, self.solve_ms / 1000)
        if solution is None:
            if len(self._failed) >= FAILED_KEPT:
                self._failed.clear()
            self._failed.add(key)
            return None
        return solution.optimal_moves

    def _tally(self, game: str, shadow: int, production: int) -> Counter[str]:
        key = (game, shadow, production)
        found = self._pending.get(key)
        if found is None:
            found = self._pending[key] = Counter()
        return found

    def flush(self) -> None:
        """Add the tallies counted since the last flush to the store's (kept for the next
        flush while the store is down)."""
        with self._lock:
            pending, self._pending = self._pending, {}
        for (game, shadow, production), counts in pending.items():
            if not counts:
                continue
            try:
                self.registry.store.record_shadow(game=game, version=shadow,
                                                  production=production, counts=dict(counts))
            except StoreError:
                with self._lock:
                    self._tally(game, shadow, production).update(counts)


def _depth_for(session: ModelSession, asked: int | None) -> int | None:
    """The shadow's search depth: the request's where it searches too, else its own
    default (a model that does not search: none)."""
    default = session.model.default_depth
    if default is None:
        return None
    return asked if asked is not None else default
