"""The local backend: hosts in threads of this process (the kernels release the GIL), one
per slot up to the machine's cores. Nothing to install; the default."""

from __future__ import annotations

import concurrent.futures as cf
import os

import numpy as np

from gameai.models.ntuple_kernels import Net
from gameai.trainer.selfplay.host import Host, Played, Share
from gameai.trainer.selfplay.sparse import Update


class ThreadHost:
    """A :class:`Host` behind a one-thread executor, so its calls run in order."""

    def __init__(self, name: str, net: Net, weights: np.ndarray) -> None:
        self.name = name
        self.host = Host(net, weights)
        self._pool = cf.ThreadPoolExecutor(1, thread_name_prefix=f"selfplay-{name}")

    def play(self, shares: list[Share], schedule: np.ndarray,
             back: list[Update] | None = None) -> cf.Future[list[Played]]:
        return self._pool.submit(self.host.play, shares, schedule, back)

    def apply(self, updates: list[Update]) -> None:
        if updates:
            self._pool.submit(self.host.apply, updates)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class LocalBackend:
    name = "local"

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or os.cpu_count() or 1
        self._made = 0

    def room(self, hosts: int) -> int:
        return max(0, self.threads - hosts)

    def new_host(self, net: Net, weights: np.ndarray, schedule: np.ndarray) -> ThreadHost:
        self._made += 1
        return ThreadHost(f"thread-{self._made}", net, weights)

    def machines(self) -> dict[str, float]:
        return {"nodes": 1, "cpus": float(os.cpu_count() or 1)}

    def close(self) -> None:
        pass
