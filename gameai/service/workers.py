"""Several server processes sharing the ports through ``SO_REUSEPORT``.

The kernel spreads new connections over the processes. Each process is a full server
(the composition root's ``target`` function) with its own registry; their metrics are merged through
prometheus-client's multiprocess mode, so a scrape of any of them sees the sum of all.
The parent forwards SIGTERM/SIGINT and exits when every worker has drained. A worker the
signal reaches while it is still starting (importing, before it handles signals) has served
nothing and has nothing to drain: its death by that signal is a clean stop, not a failure.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from multiprocessing.synchronize import Event
from types import FrameType

from gameai.service.settings import Settings

log = logging.getLogger("gameai.service")
METRICS_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"


def run_workers(settings: Settings, store_url: str,
                target: Callable[[Settings, str, Event], None]) -> int:
    """Start ``settings.workers`` processes, each running ``target(settings, store_url,
    handles_signals)`` (a module-level function: the processes are spawned; it sets
    ``handles_signals`` once SIGTERM and SIGINT no longer kill it), and wait for them; the
    worst exit status."""
    metrics_dir = tempfile.mkdtemp(prefix="gameai-metrics-")
    os.environ[METRICS_DIR_VARIABLE] = metrics_dir  # read by the workers at import
    context = multiprocessing.get_context("spawn")
    handling = [context.Event() for _ in range(settings.workers)]
    workers = [context.Process(target=target, args=(settings, store_url, handling[i]),
                               name=f"gameai-worker-{i}") for i in range(settings.workers)]
    for worker in workers:
        worker.start()
    forwarded: set[int] = set()

    def forward(signum: int, frame: FrameType | None) -> None:
        forwarded.add(signum)
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
    return max(_status(worker, handled.is_set(), forwarded)
               for worker, handled in zip(workers, handling, strict=True))


def _status(worker: multiprocessing.process.BaseProcess, handled: bool,
            forwarded: set[int]) -> int:
    """A worker's exit status, 0 for a clean stop (a death by a signal ``-signum`` counts
    as ``signum``)."""
    code = worker.exitcode or 0
    if code < 0 and -code in forwarded and not handled:
        log.info("%s was stopped by %s while starting (it had served nothing)", worker.name,
                 signal.Signals(-code).name)
        return 0
    return abs(code)
