"""What both transports share in one process: settings, registry, metrics, drain state,
and the batch lane."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from gameai.service.errors import Busy
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.service.settings import Settings

# Batch requests run one at a time per process, in a thread, so a client sending many
# large batches cannot queue them ahead of everybody's one-board requests on the event
# loop; at most BATCH_QUEUE more wait (their bodies unread), the rest get 429.
BATCH_SLOTS = 1
BATCH_QUEUE = 32


@dataclass
class Runtime:
    settings: Settings
    registry: Registry
    metrics: Metrics
    draining: bool = False  # set at SIGTERM: readiness turns false while in-flight work ends
    _batch_slots: asyncio.Semaphore = field(
        default_factory=lambda: asyncio.Semaphore(BATCH_SLOTS), repr=False)
    _batch_waiting: int = 0

    @asynccontextmanager
    async def batch_lane(self) -> AsyncIterator[None]:
        """Hold a batch slot for the body of the ``async with``.

        Raises:
            Busy: ``BATCH_QUEUE`` batch requests are already waiting here.
        """
        if self._batch_waiting >= BATCH_QUEUE:
            raise Busy(f"{self._batch_waiting} batch requests are already waiting on this "
                       "server; retry later", field="boards")
        self._batch_waiting += 1
        try:
            await self._batch_slots.acquire()
        finally:
            self._batch_waiting -= 1
        try:
            yield
        finally:
            self._batch_slots.release()

    async def run_batch(self, work: Any, *args: Any) -> Any:
        """``work(*args)`` in a thread, in the batch lane."""
        async with self.batch_lane():
            return await asyncio.to_thread(work, *args)
