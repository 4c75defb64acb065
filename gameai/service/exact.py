"""Exact play: the solver's proved moves, shared by every server through the store.

The ``best`` level asks :meth:`ExactPlay.prove` before it plays the network's move: a
position this process proved (or read) before, then the store's table of proved positions
(:class:`gameai.store.ProvedTable`, which every server and the book builder write), then
the game's solver within the game's budget (``GAMEAI_EXACT_MS``, measured per game:
docs/levels.md). Whatever the solver proves here is written to the table, so the book grows
from live traffic and no server proves a position twice. Hints (``analyze``) read and write
the same way (:func:`gameai.service.analysis.analyze`).

The table is a cache of proofs, never a requirement: while the store is down, or when it
does not answer, the server goes on with its own proofs and the solver.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping

from gameai.games import GameError, State, TooLarge
from gameai.games.interface import Solution
from gameai.service.analysis import SOLUTIONS
from gameai.service.metrics import Metrics
from gameai.store import ProvedTable, StoreError

log = logging.getLogger("gameai.service")


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

    def budget(self, game: str) -> float:
        """The solver's budget, in seconds, for one best-move query of ``game``."""
        return self.budgets.get(game, 0) / 1000

    def prove(self, state: State, seconds: float) -> Solution | None:
        """The solution of ``state``: held, read from the table, or proved within
        ``seconds`` (0: never solve); ``None`` when none of them has it."""
        found = self.lookup(state)
        if found is not None or seconds <= 0:
            return found
        started = time.perf_counter()
        if not self._solving.acquire(timeout=seconds):
            return None  # another request holds the solver for its whole budget
        try:
            left = seconds - (time.perf_counter() - started)
            if left <= 0:
                return None
            solution = state.game.solve(state, time_limit=left)
        except (TooLarge, GameError):
            return None
        finally:
            self._solving.release()
        self.record(state, solution)
        return solution

    def lookup(self, state: State) -> Solution | None:
        """The solution of ``state`` this process holds, else the shared table's (kept here
        from then on); never solves."""
        game = state.game
        held = SOLUTIONS.kept(game, state)
        if held is not None:
            return held
        if self.table is None or not self._store_up():
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

    def record(self, state: State, solution: Solution) -> None:
        """Keep a proof here and offer it to the shared table."""
        game = state.game
        SOLUTIONS.keep(game, state, solution)
        if self.table is None or not self._store_up():
            return
        try:
            written, size = self.table.put(state, solution)
        except StoreError as e:
            log.debug("proof not written to the proved table: %s", e)
            self.metrics.proved_writes.labels(game.name, "error").inc()
            return
        self.metrics.proved_writes.labels(game.name, written).inc()
        self.metrics.proved_size.labels(game.name).set(size)
