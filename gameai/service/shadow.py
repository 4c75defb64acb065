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

The worker wakes every :data:`WAKE_SECONDS` and compares what queued meanwhile in one go,
held to a duty cycle: it is busy at most :data:`DUTY` of the time (the rest it sleeps, and
queries that find the buffer full meanwhile are dropped and counted), so a shadow can take
at most about that share of a server's time whatever the candidate costs (its search, its
solver): ``gameai bench server`` measures what 100% shadowing costs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque

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
WAKE_SECONDS = 0.05  # the worker wakes this often and takes what queued meanwhile
MAX_REST = 1.0  # seconds of one rest
FLUSH_SECONDS = 1.0  # tallies go to the store this often
OPTIMAL_KEPT = 100_000  # positions whose optimal moves (or failure) the worker keeps
TALLIES = ("compared", "agreed", "proved", "production_optimal", "shadow_optimal", "dropped")

# one mirrored query: game, the session that answered, board, to_move, depth
_Query = tuple[str, ModelSession, str, str, int | None]


class Shadow:
    """The process's shadow: the request path offers, a worker thread compares.

    The request path appends to a bounded buffer and never wakes the worker: the worker
    wakes every :data:`WAKE_SECONDS` and takes the whole buffer at once, so mirroring costs
    the request path an append and no thread handoff (waking a thread per query cost a
    third of a busy server's throughput in the GIL's handoffs).

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
        self.queue_size = queue_size
        self._buffer: deque[_Query] = deque()
        self._credit: dict[str, int] = {}
        # drops: the request path (one thread, the event loop) counts them per (game,
        # shadow, production); the worker reports what it has not reported yet
        self._dropped: dict[tuple[str, int, int], int] = {}
        self._dropped_seen: dict[tuple[str, int, int], int] = {}
        self._pending: dict[tuple[str, int, int], dict[str, int]] = {}
        # each position's optimal actions as the solver proved them (None: not within the
        # budget, not tried again): the same positions come back again and again
        self._optimal_of: dict[tuple[str, str], tuple[int, ...] | None] = {}
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
        if len(self._buffer) < self.queue_size:
            self._buffer.append((game, answered_by, board, to_move, depth))
            return
        shadow = served.aliases.get("shadow")
        if shadow is not None:
            key = (game, shadow, answered_by.version)
            self._dropped[key] = self._dropped.get(key, 0) + 1

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
        rest = WAKE_SECONDS
        while not self._stop.wait(rest):
            started = time.monotonic()
            self.work()
            busy = time.monotonic() - started
            # the duty cycle: rest at least long enough that the busy share stays at it
            rest = min(max(WAKE_SECONDS, busy / self.duty - busy), MAX_REST)
            if started - last_flush >= self.flush_seconds:
                self.flush()
                last_flush = started

    def work(self) -> int:
        """Compare every query buffered now (the worker's step; tests call it too), and
        update the metrics once for them all. Returns how many were compared."""
        before = {key: dict(tally) for key, tally in self._pending.items()}
        done = 0
        for _ in range(len(self._buffer)):
            query = self._buffer.popleft()
            try:
                done += self.compare(query)
            except Exception:  # a bug must not end the worker: log it, go on
                log.exception("shadow comparison failed")
        for (game, shadow, _production), tally in self._pending.items():
            had = before.get((game, shadow, _production), {})
            labels = (game, str(shadow))
            for name, metric in (("compared", self.metrics.shadow_compared),
                                 ("agreed", self.metrics.shadow_agreed),
                                 ("proved", self.metrics.shadow_proved)):
                if tally[name] > had.get(name, 0):
                    metric.labels(*labels).inc(tally[name] - had.get(name, 0))
            for who in ("production", "shadow"):
                name = f"{who}_optimal"
                if tally[name] > had.get(name, 0):
                    self.metrics.shadow_optimal.labels(*labels, who).inc(
                        tally[name] - had.get(name, 0))
        for key, total in list(self._dropped.items()):
            new = total - self._dropped_seen.get(key, 0)
            if new:
                self._dropped_seen[key] = total
                self.metrics.shadow_dropped.labels(key[0]).inc(new)
                self._tally(*key)["dropped"] += new
        self.metrics.shadow_queued.set(len(self._buffer))
        self.processed += done
        return done

    def compare(self, query: _Query) -> int:
        """Answer ``query`` by the shadow version too and count the comparison in the
        tallies that go to the store (the metrics follow in :meth:`work`); 1 if compared,
        0 when there is no shadow any more."""
        game, production, board, to_move, depth = query
        served = self.registry.served(game)
        version = served.aliases.get("shadow")
        shadow = served.models.get(version) if version is not None else None
        if shadow is None:
            return 0
        try:
            ours = production.position(board, to_move, depth, best_only=True).evaluation.best
            theirs = shadow.position(board, to_move, _depth_for(shadow, depth),
                                     best_only=True).evaluation.best
        except GameError:
            return 0  # the position answered before: cannot happen, never counted
        tally = self._tally(game, shadow.version, production.version)
        tally["compared"] += 1
        if ours.action_id == theirs.action_id:
            tally["agreed"] += 1
        optimal = self._optimal(production, game, board, to_move)
        if optimal is not None:
            tally["proved"] += 1
            if ours.action_id in optimal:
                tally["production_optimal"] += 1
            if theirs.action_id in optimal:
                tally["shadow_optimal"] += 1
        return 1

    def _optimal(self, session: ModelSession, game_name: str, board: str, to_move: str
                 ) -> tuple[int, ...] | None:
        """The position's optimal actions where the solver proves them within the budget
        (a position it failed on is not tried again)."""
        if not self.solve_ms:
            return None
        key = (game_name, f"{board} {to_move}")  # the solutions' key: the state as text
        if key in self._optimal_of:
            return self._optimal_of[key]
        game = session.model.game
        solution = SOLUTIONS.kept_text(game, key[1])
        if solution is None:
            state = game.parse(board, to_move=to_move)
            shared = self.registry.exact
            solution = (shared.solve_within(state, self.solve_ms / 1000) if shared is not None
                        else SOLUTIONS.proved(game, state, self.solve_ms / 1000))
        if len(self._optimal_of) >= OPTIMAL_KEPT:
            self._optimal_of.clear()
        found = None if solution is None else solution.optimal_moves
        self._optimal_of[key] = found
        return found

    def _tally(self, game: str, shadow: int, production: int) -> dict[str, int]:
        key = (game, shadow, production)
        found = self._pending.get(key)
        if found is None:
            found = self._pending[key] = dict.fromkeys(TALLIES, 0)
        return found

    def flush(self) -> None:
        """Add the tallies counted since the last flush to the store's (kept for the next
        flush while the store is down). Runs on the worker thread (and at stop)."""
        pending, self._pending = self._pending, {}
        for (game, shadow, production), counts in pending.items():
            counts = {name: n for name, n in counts.items() if n}
            if not counts:
                continue
            try:
                self.registry.store.record_shadow(game=game, version=shadow,
                                                  production=production, counts=counts)
            except StoreError:
                tally = self._tally(game, shadow, production)
                for name, n in counts.items():
                    tally[name] += n


def _depth_for(session: ModelSession, asked: int | None) -> int | None:
    """The shadow's search depth: the request's where it searches too, else its own
    default (a model that does not search: none)."""
    default = session.model.default_depth
    if default is None:
        return None
    return asked if asked is not None else default
