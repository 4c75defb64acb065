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

import contextlib
import logging
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping

from gameai.games import Game, GameError, OptimalMoves, State, TooLarge
from gameai.games.interface import OwnSolvers, Solution
from gameai.service.analysis import SOLUTIONS
from gameai.service.metrics import Metrics
from gameai.store import ProvedIndex, ProvedTable, StoreError

log = logging.getLogger("gameai.service")

OPTIMAL_KEPT = 50_000  # positions whose optimal moves alone were proved, kept (then cleared)
WRITES_QUEUED = 10_000  # proofs waiting for the writer; more are not offered ("dropped")
STAGE_CELLS = 3  # a stage is a band of this many numbers of empty cells
TRIES_BEFORE_JUDGING = 10  # solves of a stage before its success rate decides anything
MIN_SUCCESS = 0.1  # below this share of proofs a stage is tried only ...
PROBE_EVERY = 10  # ... one time in this many (the rate is measured again), at first ...
MAX_PROBE_EVERY = 1000  # ... then twice as seldom after each probe that fails, up to this
# A stage proving less than this share of its positions gets this share of the budget: the
# solves that succeed take 0.15-0.3 ms (median) at every stage, so where most fail, the
# second half of the budget mostly buys failures (docs/levels.md, "Where the budget goes")
HALF_BUDGET_BELOW = 0.5
THIN_BUDGET = 0.5
TRIES_KEPT = 200  # past this many tries a stage's counts are halved: recent ones weigh more
INDEX_REFRESH_SECONDS = 0.5  # how often the local index of the table reads what was added
BACKGROUND_QUEUED = 1_000  # positions waiting for the background prover; past it the oldest goes
BACKGROUND_TABLE_BITS = 20  # the background solver's own table: 2**20 slots (16 MiB)
BACKGROUND_IDLE_SECONDS = 0.05  # the prover searches only after this long without a request
BACKGROUND_SLICE_SECONDS = 0.02  # ... in slices this long, then looks again


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
        background: the background prover's budget a position, in milliseconds, by game
            name (:class:`Prover`; a game not named: none).
        own_table_bits: the solvers' table (``None``: the game's own, which the process
            shares; a judge gives the policy it plays a table of its own of ``2**N``
            slots, :meth:`gameai.games.Game.own_solvers`, so its opponent's proofs are
            not shared).
    """

    def __init__(self, table: ProvedTable | None, metrics: Metrics,
                 budgets: Mapping[str, float], *,
                 store_up: Callable[[], bool] = lambda: True,
                 background: Mapping[str, int] | None = None,
                 own_table_bits: int | None = None) -> None:
        self.table = table
        self._own_bits = own_table_bits
        self._own: dict[str, OwnSolvers] = {}
        self._optimal: dict[tuple[str, object], OptimalMoves] = {}  # proved, not solved whole
        self._optimal_lock = threading.Lock()
        self.metrics = metrics
        self.budgets = dict(budgets)
        self.prover = Prover(self, background or {})
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

    def prove(self, state: State, seconds: float, *, learn: bool = True
              ) -> Solution | OptimalMoves | None:
        """The proof of ``state``'s optimal moves: a solution held or read from the table,
        else proved within ``seconds`` (0: never solve); ``None`` when none of them has it.
        With ``learn`` (the game's own budget) the solver is not asked where it has kept
        failing, and its successes and failures are counted (:class:`Stages`); a request's
        own budget (``learn=False``) is always tried and counts nothing. It first proves
        the optimal moves alone (:meth:`gameai.games.Game.prove_optimal`: the position's
        score and one null-window search a move, a fraction of a whole solution's cost in
        the opening), then, with what is left of ``seconds``, the whole solution, which is
        kept and written to the table; where that does not finish in time the optimal moves
        are kept here and the position is offered to the background prover."""
        self.prover.busy()
        found = self.held(state)
        if found is not None or seconds <= 0:
            return found
        stage = stage_of(state)
        if learn and not self.stages.worth_trying(stage):
            self.prover.offer(state)  # its budget may prove what this one does not try
            return None
        proof = self._solve(state, seconds * (self.stages.budget_share(stage) if learn else 1))
        if learn:
            self.stages.count(stage, proved=proof is not None)
        if isinstance(proof, Solution):
            self.record(state, proof)
            return proof
        if proof is not None:
            with self._optimal_lock:
                if len(self._optimal) >= OPTIMAL_KEPT:
                    self._optimal.clear()
                self._optimal[(state.game.name, state.key)] = proof
        self.prover.offer(state)  # solved whole later, for the table and the next request
        return proof

    def _solve(self, state: State, seconds: float) -> Solution | OptimalMoves | None:
        """The whole solution of ``state`` within ``seconds``, or its optimal moves alone
        where only they fit, or ``None`` (one solve at a time: the solver's table is
        shared)."""
        started = time.perf_counter()
        if not self._solving.acquire(timeout=seconds):
            return None  # another request holds the solver for its whole budget
        try:
            optimal, solve = self._solvers(state.game)
            left = seconds - (time.perf_counter() - started)
            if left <= 0:
                return None
            try:
                proof = optimal(state, left)
            except (TooLarge, GameError):
                return None
            left = seconds - (time.perf_counter() - started)
            if left > 0:  # the table the first proof filled makes the whole one cheaper
                with contextlib.suppress(TooLarge, GameError):
                    return solve(state, left)
            return proof
        finally:
            self._solving.release()

    def _solvers(self, game: Game) -> OwnSolvers:
        """The two proofs the best level asks for: on a table of this object's own
        (``own_table_bits``, where the game has one), else the game's own, on its shared
        table; chosen at the game's first solve."""
        found = self._own.get(game.name)
        if found is None:
            own = None if self._own_bits is None else game.own_solvers(
                table_bits=self._own_bits)
            found = self._own[game.name] = own or OwnSolvers(
                lambda s, t: game.prove_optimal(s, time_limit=t),
                lambda s, t: game.solve(s, time_limit=t))
        return found

    def held(self, state: State) -> Solution | OptimalMoves | None:
        """:meth:`lookup`'s solution, else the optimal moves this process proved alone
        (never solves)."""
        return self.lookup(state) or self._optimal.get((state.game.name, state.key))

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
        self.prover.close(timeout)
        if self._indexer is not None:
            self._indexer.join(timeout)
        if self._writer is not None:
            self.flush(timeout)
            self._writes.put(None)
            self._writer.join(timeout)

    def _write_all(self) -> None:
        while True:
            item = self._writes.get()
            if item is None:
                self._writes.task_done()
                return
            state, solution = item
            try:
                self._write(state, solution)
            except Exception:  # e.g. the store's connection closed under a write at
                # shutdown: that proof is lost (it can be found again), never the writer
                log.warning("a proof was not written to the proved table", exc_info=True)
                self.metrics.proved_writes.labels(state.game.name, "error").inc()
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


class Prover:
    """Proves, off the request path, the positions a request's budget did not prove, so
    that the next request that meets one (on any server: the proof goes to the shared
    table) is answered exact: the book grows from live traffic in the middle game too.

    One thread, at the lowest scheduling priority, with a solver and table of its own
    (:meth:`Game.own_solver`; its search releases the interpreter's lock, so the requests
    go on beside it), spends at most the game's background budget on each position,
    newest first (the positions of games still being played are the likeliest to be met
    again soon); at most :data:`BACKGROUND_QUEUED` wait, each once, the oldest dropped
    for a new one. It learns where its budget proves positions as the request path does
    (:class:`Stages` of its own), so the opening's positions, which its seconds do not
    prove either, are only probed. It searches only while the server is idle: after
    :data:`BACKGROUND_IDLE_SECONDS` without a best-move request, in slices of
    :data:`BACKGROUND_SLICE_SECONDS` (its table keeps what a slice proved), so a busy
    server's requests never share their CPU with it.
    """

    def __init__(self, exact: ExactPlay, budgets: Mapping[str, int]) -> None:
        self._exact = exact
        self._seconds = {game: ms / 1000 for game, ms in budgets.items() if ms > 0}
        self._waiting: deque[State] = deque()
        self._queued: set[tuple[str, int]] = set()  # waiting or being proved
        self._proving = False
        self._solvers: dict[str, Callable[[State, float], Solution] | None] = {}
        self._thread: threading.Thread | None = None
        self._changed = threading.Condition()
        self._last_request = 0.0
        self._stop = threading.Event()
        self.stages = Stages()

    def busy(self) -> None:
        """A request came: the prover waits until the server is idle again."""
        self._last_request = time.monotonic()

    @property
    def waiting(self) -> int:
        """Positions waiting to be proved."""
        return len(self._waiting)

    def offer(self, state: State) -> None:
        """Queue ``state`` to be proved, unless its game has no background budget or it
        is queued already (past :data:`BACKGROUND_QUEUED` waiting, the oldest is
        dropped)."""
        game = state.game.name
        if game not in self._seconds or self._stop.is_set():
            return
        key = _key(state)
        with self._changed:
            if key in self._queued:
                return
            if len(self._waiting) >= BACKGROUND_QUEUED:
                oldest = self._waiting.popleft()
                self._queued.discard(_key(oldest))
                self._exact.metrics.proved_background.labels(oldest.game.name,
                                                             "dropped").inc()
            self._waiting.append(state)
            self._queued.add(key)
            self._changed.notify_all()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name="proved-table-prover")
                self._thread.start()

    def wait(self, timeout: float = 10.0) -> bool:
        """Wait until every position queued so far was tried; whether it was within
        ``timeout`` seconds."""
        with self._changed:
            return self._changed.wait_for(
                lambda: not self._waiting and not self._proving, timeout)

    def close(self, timeout: float = 1.0) -> None:
        """Stop after the position being proved (waiting ``timeout`` seconds at most); what
        waits is dropped (a later request can queue it again)."""
        self._stop.set()
        with self._changed:
            self._waiting.clear()
            self._queued.clear()
            self._changed.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        _lowest_priority()
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._waiting or self._stop.is_set())
                if self._stop.is_set():
                    return
                state = self._waiting.pop()  # the newest
                self._proving = True
            try:
                self._prove(state)
            except Exception:  # a bug here must not end the prover, nor the server
                log.exception("the background prover failed on a position")
            finally:
                with self._changed:
                    self._queued.discard(_key(state))
                    self._proving = False
                    self._changed.notify_all()

    def _prove(self, state: State) -> None:
        game = state.game
        if SOLUTIONS.kept(game, state) is not None:
            return
        if game.name not in self._solvers:
            try:
                self._solvers[game.name] = game.own_solver(table_bits=BACKGROUND_TABLE_BITS)
            except (TooLarge, GameError) as e:  # no memory for its table, say
                log.warning("no background prover for %s: %s", game.name, e)
                self._solvers[game.name] = None
        solver = self._solvers[game.name]
        if solver is None:
            return
        stage = stage_of(state)
        if not self.stages.worth_trying(stage):
            return
        left = self._seconds[game.name]
        while left > 0 and not self._stop.is_set():
            idle = time.monotonic() - self._last_request
            if idle < BACKGROUND_IDLE_SECONDS:
                self._stop.wait(BACKGROUND_IDLE_SECONDS - idle)
                continue
            started = time.perf_counter()
            try:
                solution = solver(state, min(BACKGROUND_SLICE_SECONDS, left))
            except TooLarge:  # not within the slice (a search's timeout is one)
                left -= time.perf_counter() - started
                continue
            except GameError:  # not a position it proves
                return
            self._exact.metrics.proved_background.labels(game.name, "proved").inc()
            self.stages.count(stage, proved=True)
            self._exact.record(state, solution)
            return
        if left <= 0:
            self.stages.count(stage, proved=False)
            self._exact.metrics.proved_background.labels(game.name, "failed").inc()


def _key(state: State) -> tuple[str, int]:
    return state.game.name, state.canonical()[0]


def _lowest_priority() -> None:
    """This thread at the lowest scheduling priority (Linux: a thread's nice value is its
    own), where the system allows it."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


def stage_of(state: State) -> tuple[str, int]:
    """A position's stage (:class:`Stages`): its game and its number of empty cells, in
    bands of :data:`STAGE_CELLS`."""
    return state.game.name, str(state).count("-") // STAGE_CELLS


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
    fills, the machine is freer). A stage that proves less than half of its positions gets
    half the budget (:meth:`budget_share`)."""

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

    def budget_share(self, stage: tuple[str, int]) -> float:
        """The share of the budget a solve of ``stage`` gets: :data:`THIN_BUDGET` once the
        stage is judged to prove less than :data:`HALF_BUDGET_BELOW` of its positions,
        else all of it."""
        with self._lock:
            tries, proved = self._counted(stage)[:2]
        judged = tries >= TRIES_BEFORE_JUDGING
        return THIN_BUDGET if judged and proved < HALF_BUDGET_BELOW * tries else 1.0

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
