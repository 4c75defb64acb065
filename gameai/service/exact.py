"""Exact play: the solver's proved moves, shared by every server through the store.

The ``best`` level asks :meth:`ExactPlay.prove` before it plays the network's move: a
position this process proved (or read) before, then the store's table of proved positions
(:class:`gameai.store.ProvedTable`, which every server and the book builder write), then
the game's solver within the game's budget (``GAMEAI_EXACT_MS``, measured per game:
docs/levels.md). Whatever the solver proves here is written to the table, so the book grows
from live traffic and no server proves a position twice. Hints (``analyze``) read and write
the same way (:func:`gameai.service.analysis.analyze`).

Each server keeps an index of the table's keys (:class:`gameai.store.ProvedIndex`, read
off the request path), so a position the table does not hold, most of them, costs no round
trip: on two saturated CPUs that round trip cost a best-move request more wall time than
the network's search (docs/levels.md).

The table is a cache of proofs, never a requirement: while the store is down, or when it
does not answer, the server goes on with its own proofs and the solver.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping

from gameai.games import GameError, State, TooLarge
from gameai.games.interface import Solution
from gameai.service.analysis import SOLUTIONS
from gameai.service.metrics import Metrics
from gameai.store import ProvedIndex, ProvedTable, StoreError

log = logging.getLogger("gameai.service")

WRITES_QUEUED = 10_000  # proofs waiting for the writer; more are not offered ("dropped")
STAGE_CELLS = 3  # a stage is a band of this many numbers of empty cells
TRIES_BEFORE_JUDGING = 10  # solves of a stage before its success rate decides anything
MIN_SUCCESS = 0.1  # below this share of proofs a stage is tried only ...
PROBE_EVERY = 10  # ... one time in this many (the rate is measured again), at first ...
MAX_PROBE_EVERY = 1000  # ... then twice as seldom after each probe that fails, up to this
TRIES_KEPT = 200  # past this many tries a stage's counts are halved: recent ones weigh more
INDEX_REFRESH_SECONDS = 0.5  # how often the local index of the table reads what was added


class ExactPlay:
    """Proofs for the server's answers: kept here, shared through the store, or found by the
    solver within a budget.

    Args:
        table: the store's table of proved positions (``None``: this process's own only).
        metrics: where hits, misses, writes and the table's size are counted.
        budgets: the solver's budget per best-move query, in milliseconds, by game name (a
            game not named: none).
        store_up: whether the store answers now (the table is skipped while it does not:
            a dead store must not hold a request for its timeouts).
    """

    def __init__(self, table: ProvedTable | None, metrics: Metrics,
                 budgets: Mapping[str, int], *,
                 store_up: Callable[[], bool] = lambda: True) -> None:
        self.table = table
        self.metrics = metrics
        self.budgets = dict(budgets)
        self._store_up = store_up
        self._solving = threading.Lock()  # one best-move solve at a time per process
        self.stages = Stages()
        self._writes: queue.Queue[tuple[State, Solution] | None] = queue.Queue(WRITES_QUEUED)
        self._writer: threading.Thread | None = None
        self._writer_lock = threading.Lock()
        self._indexes: dict[str, ProvedIndex] = {}  # by game, made at the game's first lookup
        self._indexer: threading.Thread | None = None
        self._closing = threading.Event()

    def budget(self, game: str) -> float:
        """The solver's budget, in seconds, for one best-move query of ``game``."""
        return self.budgets.get(game, 0) / 1000

    def prove(self, state: State, seconds: float) -> Solution | None:
        """The solution of ``state``: held, read from the table, or proved within
        ``seconds`` (0: never solve); ``None`` when none of them has it. The solver is not
        asked where it has kept failing (:class:`Stages`)."""
        found = self.lookup(state)
        if found is not None or seconds <= 0:
            return found
        stage = (state.game.name, str(state).count("-") // STAGE_CELLS)
        if not self.stages.worth_trying(stage):
            return None
        solution = self._solve(state, seconds)
        self.stages.count(stage, proved=solution is not None)
        if solution is not None:
            self.record(state, solution)
        return solution

    def _solve(self, state: State, seconds: float) -> Solution | None:
        started = time.perf_counter()
        if not self._solving.acquire(timeout=seconds):
            return None  # another request holds the solver for its whole budget
        try:
            left = seconds - (time.perf_counter() - started)
            if left <= 0:
                return None
            return state.game.solve(state, time_limit=left)
        except (TooLarge, GameError):
            return None
        finally:
            self._solving.release()

    def lookup(self, state: State) -> Solution | None:
        """The solution of ``state`` this process holds, else the shared table's (kept here
        from then on); never solves."""
        game = state.game
        held = SOLUTIONS.kept(game, state)
        if held is not None:
            return held
        if self.table is None or not self._store_up():
            return None
        if not self._index(game.name).might_hold(state.canonical()[0]):
            self.metrics.proved_misses.labels(game.name).inc()
            self.metrics.proved_unasked.labels(game.name).inc()
            return None
        try:
            found = self.table.get(state)
        except StoreError as e:
            log.debug("proved table unread: %s", e)
            return None
        if found is None:
            self.metrics.proved_misses.labels(game.name).inc()
            return None
        self.metrics.proved_hits.labels(game.name).inc()
        SOLUTIONS.keep(game, state, found)
        return found

    def _index(self, game: str) -> ProvedIndex:
        """The local index of ``game``'s table (:class:`gameai.store.ProvedIndex`), kept
        current by a thread of its own from the first call."""
        index = self._indexes.get(game)
        if index is None:
            assert self.table is not None
            with self._writer_lock:
                index = self._indexes.setdefault(game, ProvedIndex(self.table, game))
                if self._indexer is None:
                    self._indexer = threading.Thread(target=self._index_all, daemon=True,
                                                     name="proved-table-index")
                    self._indexer.start()
        return index

    def _index_all(self) -> None:
        """Keep every game's index current: what was added, every
        :data:`INDEX_REFRESH_SECONDS` (at once while an index has more to read)."""
        while not self._closing.is_set():
            behind = False
            for game, index in list(self._indexes.items()):
                if not self._store_up():
                    continue
                try:
                    index.refresh()
                except StoreError as e:
                    log.debug("proved table's keys unread: %s", e)
                    continue
                behind = behind or not index.ready
                self.metrics.proved_indexed.labels(game).set(index.read)
            if not behind:
                self._closing.wait(INDEX_REFRESH_SECONDS)

    def solve_within(self, state: State, seconds: float) -> Solution | None:
        """:meth:`prove` for work with a budget of its own (a review, a shadow test): held,
        read from the table, or solved within ``seconds`` (as
        :meth:`gameai.service.analysis._Solutions.proved`: a position that failed within
        the hints' budget is not tried in less), the proof offered to the table; no stages
        and no waiting on the best-move solve."""
        found = self.lookup(state)
        if found is not None:
            return found
        solution = SOLUTIONS.proved(state.game, state, seconds)
        if solution is not None:
            self.offer(state, solution)
        return solution

    def record(self, state: State, solution: Solution) -> None:
        """Keep a proof here and offer it to the shared table (:meth:`offer`)."""
        SOLUTIONS.keep(state.game, state, solution)
        self.offer(state, solution)

    def offer(self, state: State, solution: Solution) -> None:
        """Offer a proof to the shared table, off the request path (a writer thread; past
        :data:`WRITES_QUEUED` waiting, the proof is not offered)."""
        if self.table is None:
            return
        with self._writer_lock:
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_all, daemon=True,
                                                name="proved-table-writer")
                self._writer.start()
        try:
            self._writes.put_nowait((state, solution))
        except queue.Full:
            self.metrics.proved_writes.labels(state.game.name, "dropped").inc()

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every proof offered so far was written (or refused); whether it was
        within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self._writes.unfinished_tasks:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def close(self, timeout: float = 1.0) -> None:
        """Write what is queued (for at most ``timeout`` seconds), then stop the writer and
        the indexes' reader."""
        self._closing.set()
        if self._indexer is not None:
            self._indexer.join(timeout)
        if self._writer is not None:
            self.flush(timeout)
            self._writes.put(None)
            self._writer.join(timeout)

    def _write_all(self) -> None:
        while True:
            item = self._writes.get()
            try:
                if item is None:
                    return
                self._write(*item)
            finally:
                self._writes.task_done()

    def _write(self, state: State, solution: Solution) -> None:
        name = state.game.name
        if self.table is None or not self._store_up():
            self.metrics.proved_writes.labels(name, "error").inc()
            return
        try:
            written, size = self.table.put(state, solution)
        except StoreError as e:
            log.debug("proof not written to the proved table: %s", e)
            self.metrics.proved_writes.labels(name, "error").inc()
            return
        self.metrics.proved_writes.labels(name, written).inc()
        self.metrics.proved_size.labels(name).set(size)
        if written != "full":  # held now: this process's index need not wait to read it
            self._index(name).add([state.canonical()[0]])


class Stages:
    """Where the solver proves positions within the budget, learned as it goes: a position's
    stage is its game and its number of empty cells (in bands of :data:`STAGE_CELLS`). A
    stage whose solves (after :data:`TRIES_BEFORE_JUDGING`) succeed less than
    :data:`MIN_SUCCESS` of the time is only probed: once in :data:`PROBE_EVERY` requests,
    then twice as seldom after each probe that fails (up to once in
    :data:`MAX_PROBE_EVERY`), so early positions, which no budget of milliseconds proves,
    do not each spend the whole budget (they are the book's: ``gameai book build``); a
    probe that succeeds brings the probes back to one in :data:`PROBE_EVERY`, and the
    counts decay, so a stage comes back when it starts succeeding (the search's table
    fills, the machine is freer)."""

    def __init__(self) -> None:
        # stage -> [tries, proved, asked since the last probe, probe interval]
        self._counts: dict[tuple[str, int], list[int]] = {}
        self._lock = threading.Lock()

    def _counted(self, stage: tuple[str, int]) -> list[int]:
        return self._counts.setdefault(stage, [0, 0, 0, PROBE_EVERY])

    @staticmethod
    def _failing(counts: list[int]) -> bool:
        tries, proved = counts[0], counts[1]
        return tries >= TRIES_BEFORE_JUDGING and proved < MIN_SUCCESS * tries

    def worth_trying(self, stage: tuple[str, int]) -> bool:
        with self._lock:
            counts = self._counted(stage)
            if not self._failing(counts):
                return True
            counts[2] += 1
            if counts[2] < counts[3]:
                return False
            counts[2] = 0
            return True

    def count(self, stage: tuple[str, int], *, proved: bool) -> None:
        with self._lock:
            counts = self._counted(stage)
            if proved:
                counts[3] = PROBE_EVERY
            elif self._failing(counts):  # a probe that failed
                counts[3] = min(2 * counts[3], MAX_PROBE_EVERY)
            counts[0] += 1
            counts[1] += int(proved)
            if counts[0] >= TRIES_KEPT:
                counts[0] //= 2
                counts[1] //= 2
