"""Several server processes sharing the ports through ``SO_REUSEPORT``.

The kernel spreads new connections over the processes. Each process is a full server
(the composition root's ``target`` function) with its own registry; their metrics are merged through
prometheus-client's multiprocess mode, so a scrape of any of them sees the sum of all.
The parent forwards SIGTERM/SIGINT and exits when every worker has drained.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from types import FrameType

from gameai.service.settings import Settings

log = logging.getLogger("gameai.service")
METRICS_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"


def run_workers(settings: Settings, store_url: str,
                target: Callable[[Settings, str], None]) -> int:
    """Start ``settings.workers`` processes, each running ``target(settings, store_url)`` (a
    module-level function: the processes are spawned), and wait for them; the worst exit
    status."""
    metrics_dir = tempfile.mkdtemp(prefix="gameai-metrics-")
    os.environ[METRICS_DIR_VARIABLE] = metrics_dir  # read by the workers at import
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=target, args=(settings, store_url),
                               name=f"gameai-worker-{i}") for i in range(settings.workers)]
    for worker in workers:
        worker.start()

    def forward(signum: int, frame: FrameType | None) -> None:
        for worker in workers:
            if worker.is_alive() and worker.pid is not None:
                os.kill(worker.pid, signum)
    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for worker in workers:
            worker.join()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        shutil.rmtree(metrics_dir, ignore_errors=True)
    return max(abs(worker.exitcode or 0) for worker in workers)
