"""Two priority classes for the work that takes a thread: interactive before background.

One-board answers (best-move, evaluate) take microseconds and run on the event loop; work
that takes longer runs in a thread and first takes a slot here. There are
:data:`WORK_SLOTS` slots per process, of which background work (batches, background
streams) holds at most :data:`BACKGROUND_SLOTS`; a slot that frees goes to the longest
waiting interactive request (hints, reviews, streams by default) and only when none waits
to a background one. A long stream takes a slot per step (a depth of the model's search,
a slice of the solver's), so an interactive request waits for one step at most, never for
a whole background analysis. Each class is measured: requests waiting and running, the
time waited, and requests refused because too many already wait (429, retry later).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from gameai.service.errors import Busy
from gameai.service.metrics import Metrics

INTERACTIVE = "interactive"
BACKGROUND = "background"
LANES = (INTERACTIVE, BACKGROUND)
WORK_SLOTS = 2  # threads of long work at once per process (two cores)
BACKGROUND_SLOTS = 1  # of which background work holds at most this many
QUEUE = {INTERACTIVE: 64, BACKGROUND: 32}  # requests that may wait per class; then 429


class Lanes:
    """The slots of one process's event loop (create it and use it on that loop)."""

    def __init__(self, metrics: Metrics, *, slots: int = WORK_SLOTS,
                 background_slots: int = BACKGROUND_SLOTS,
                 queue: dict[str, int] | None = None) -> None:
        self.slots = slots
        self.background_slots = background_slots
        self.queue = dict(queue or QUEUE)
        self.running = dict.fromkeys(LANES, 0)
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {lane: deque() for lane in LANES}
        self._metrics = metrics
        for lane in LANES:  # every series from 0
            metrics.lane_waiting.labels(lane).set(0)
            metrics.lane_running.labels(lane).set(0)
            metrics.lane_refused.labels(lane)

    def waiting(self, lane: str) -> int:
        return len(self._waiting[lane])

    def check(self, lane: str, *, field: str = "") -> None:
        """Raise :class:`Busy` now if a request of ``lane`` would be refused (a stream
        checks before its first event, so the refusal is a status, not an event)."""
        if len(self._waiting[lane]) >= self.queue[lane]:
            self._metrics.lane_refused.labels(lane).inc()
            raise Busy(f"{len(self._waiting[lane])} {lane} requests are already waiting on "
                       "this server; retry later", field=field)

    @asynccontextmanager
    async def slot(self, lane: str, *, field: str = "") -> AsyncIterator[None]:
        """Hold a slot of ``lane`` for the body of the ``async with``.

        Raises:
            Busy: ``QUEUE[lane]`` requests of the class are already waiting (``field``
                names the request's field for the error).
        """
        if lane not in self.running:
            raise ValueError(f"no lane {lane!r}")
        started = time.perf_counter()
        if not self._free(lane) or self._ahead(lane):
            if len(self._waiting[lane]) >= self.queue[lane]:
                self._metrics.lane_refused.labels(lane).inc()
                raise Busy(f"{len(self._waiting[lane])} {lane} requests are already waiting "
                           "on this server; retry later", field=field)
            turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting[lane].append(turn)
            self._report(lane)
            try:
                await turn
            except BaseException:
                if turn.done() and not turn.cancelled():
                    self._release(lane)  # granted as it was cancelled: pass it on
                else:
                    self._waiting[lane].remove(turn)
                    self._report(lane)
                raise
        else:
            self.running[lane] += 1
        self._metrics.lane_wait.labels(lane).observe(time.perf_counter() - started)
        self._report(lane)
        try:
            yield
        finally:
            self._release(lane)

    def _free(self, lane: str) -> bool:
        if sum(self.running.values()) >= self.slots:
            return False
        return lane == INTERACTIVE or self.running[BACKGROUND] < self.background_slots

    def _ahead(self, lane: str) -> bool:
        """Whether a request that must go first is already waiting."""
        return bool(self._waiting[INTERACTIVE]) or (
            lane == BACKGROUND and bool(self._waiting[BACKGROUND]))

    def _release(self, lane: str) -> None:
        self.running[lane] -= 1
        self._grant()
        self._report(lane)

    def _grant(self) -> None:
        """Hand free slots to the waiting, interactive first."""
        for lane in LANES:
            queue = self._waiting[lane]
            while queue and self._free(lane):
                if lane == BACKGROUND and self._waiting[INTERACTIVE]:
                    return
                turn = queue.popleft()
                if turn.cancelled():
                    continue
                self.running[lane] += 1
                turn.set_result(None)
                self._report(lane)

    def _report(self, lane: str) -> None:
        self._metrics.lane_waiting.labels(lane).set(len(self._waiting[lane]))
        self._metrics.lane_running.labels(lane).set(self.running[lane])
