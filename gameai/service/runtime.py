"""What both transports share in one process: settings, registry, metrics, drain state,
the priority lanes of long work, and the shadow worker."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from gameai.service.lanes import BACKGROUND, INTERACTIVE, Lanes
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.service.settings import Settings
from gameai.service.shadow import Shadow

# Batch requests are background work (gameai.service.lanes): one at a time per process, in
# a thread, after any interactive work waiting, so a client sending many large batches
# cannot hold up hints, reviews or streams; at most 32 more wait (their bodies unread), the
# rest get 429.


@dataclass
class Runtime:
    settings: Settings
    registry: Registry
    metrics: Metrics
    draining: bool = False  # set at SIGTERM: readiness turns false while in-flight work ends
    _lanes: Lanes | None = field(default=None, repr=False)
    shadow: Shadow | None = field(default=None, repr=False)

    @property
    def lanes(self) -> Lanes:
        """The process's priority lanes (made on first use, on the running loop)."""
        if self._lanes is None:
            self._lanes = Lanes(self.metrics)
        return self._lanes

    @asynccontextmanager
    async def batch_lane(self) -> AsyncIterator[None]:
        """Hold a background slot for the body of the ``async with``.

        Raises:
            Busy: 32 background requests are already waiting here.
        """
        async with self.lanes.slot(BACKGROUND, field="boards"):
            yield

    async def run_batch(self, work: Any, *args: Any) -> Any:
        """``work(*args)`` in a thread, in the background lane."""
        async with self.batch_lane():
            return await asyncio.to_thread(work, *args)

    async def run_interactive(self, work: Any, *args: Any, **kwargs: Any) -> Any:
        """``work(*args, **kwargs)`` in a thread, in the interactive lane."""
        async with self.lanes.slot(INTERACTIVE, field="body"):
            return await asyncio.to_thread(work, *args, **kwargs)
