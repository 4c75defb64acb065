"""The composition root: ``serve(settings)`` builds and runs the whole move server.

One asyncio loop per process runs both transports: the gRPC server (``grpc.aio``) and the
REST app (uvicorn), over one registry that follows the store from a background thread.
With ``workers > 1`` the process starts that many copies, which share the ports through
``SO_REUSEPORT`` (see docs/service.md for the measurements behind the default).

SIGTERM or SIGINT drains: readiness and gRPC health turn NOT_SERVING first while the
server still answers for the drain period (load balancers move away), then the listeners
close, requests in flight complete, and the process exits within the grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.synchronize import Event
from types import FrameType
from typing import NoReturn

import uvicorn

from gameai import host
from gameai.service.exact import ExactPlay
from gameai.service.grpc_server import build_server, set_health
from gameai.service.http_protocol import BoundedHttpToolsProtocol
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.service.rest import create_app
from gameai.service.runtime import Runtime
from gameai.service.settings import Settings
from gameai.service.shadow import Shadow
from gameai.service.workers import run_workers
from gameai.store import ModelStore
from gameai.store.connect import embedded_redis

log = logging.getLogger("gameai.service")
STORE_TIMEOUT = 1.0  # seconds per store call: a slow store must not hold requests long
EXIT_RESERVE = 0.5  # seconds of the grace period kept for stopping the registry and exiting


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: the composition root owns the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@dataclass
class Ports:
    http: int
    grpc: int


class MoveServer:
    """Both transports of one process over one runtime. ``await start()``, then
    ``await stop()``; the ports given as 0 are chosen by the system (see :attr:`ports`)."""

    def __init__(self, settings: Settings, store: ModelStore, *,
                 metrics: Metrics | None = None) -> None:
        self.settings = settings
        self.store = store
        self.metrics = metrics or Metrics()
        self.registry = Registry(store, settings.games, self.metrics,
                                 poll_seconds=settings.poll_seconds,
                                 ready_when=settings.ready_when)
        self.shadow = Shadow(self.registry, self.metrics, queue_size=settings.shadow_queue,
                             solve_ms=settings.shadow_solve_ms)
        self.registry.mirror = self.shadow.offer
        self.registry.exact = self.exact = exact_play(settings, store, self.registry,
                                                      self.metrics)
        self.runtime = Runtime(settings, self.registry, self.metrics, shadow=self.shadow)
        self.ports = Ports(settings.http_port, settings.grpc_port)
        self._health_task: asyncio.Task[None] | None = None
        self._http_task: asyncio.Task[None] | None = None
        self._stopped = asyncio.Event()

    async def start(self, *, wait_seconds: float = 5.0) -> Ports:
        s = self.settings
        await asyncio.to_thread(self.registry.start, wait_seconds=wait_seconds)
        self.shadow.start()
        self.grpc, grpc_port, self.health = build_server(self.runtime, host=s.host,
                                                         port=s.grpc_port)
        sock = _listen(s.host, s.http_port, reuse_port=s.workers > 1)
        self.ports = Ports(sock.getsockname()[1], grpc_port)
        config = uvicorn.Config(create_app(self.runtime), log_level="warning",
                                access_log=False, lifespan="off",
                                http=BoundedHttpToolsProtocol,
                                timeout_graceful_shutdown=max(int(s.grace_seconds), 1),
                                timeout_keep_alive=30)
        self.http = _Uvicorn(config)
        await self.grpc.start()
        self._http_task = asyncio.create_task(self.http.serve(sockets=[sock]))
        while not self.http.started and not self._http_task.done():
            await asyncio.sleep(0.01)
        if self._http_task.done():
            self._http_task.result()  # raises what stopped it
        self._health_task = asyncio.create_task(self._follow_readiness())
        log.info("serving %s: http %s:%d, grpc %s:%d", ",".join(s.games), s.host,
                 self.ports.http, s.host, self.ports.grpc)
        return self.ports

    async def _follow_readiness(self) -> None:
        serving = None
        while not self.runtime.draining:
            ready = self.registry.ready
            if ready != serving:
                await set_health(self.health, serving=ready)
                serving = ready
            self.metrics.ready.set(1 if ready else 0)
            await asyncio.sleep(0.2)

    async def stop(self, grace: float | None = None, drain: float | None = None) -> None:
        """Drain and stop: NOT_SERVING first while still serving for ``drain`` seconds,
        then the listeners close and in-flight requests complete, all within ``grace``
        (less :data:`EXIT_RESERVE`, kept for the registry to stop and the process to end)."""
        if self.runtime.draining:
            await self._stopped.wait()
            return
        loop = asyncio.get_running_loop()
        grace = self.settings.grace_seconds if grace is None else grace
        drain = min(self.settings.drain_seconds if drain is None else drain, grace)
        deadline = loop.time() + max(0.0, grace - EXIT_RESERVE)
        self.runtime.draining = True
        self.metrics.ready.set(0)
        if self._health_task is not None:
            self._health_task.cancel()
        await self.health.enter_graceful_shutdown()
        await asyncio.sleep(drain)
        self.health.close_watches()  # watchers have seen NOT_SERVING; don't wait on them
        left = max(0.0, deadline - loop.time())
        self.http.config.timeout_graceful_shutdown = left  # type: ignore[assignment]
        self.http.should_exit = True
        waits = [self.grpc.stop(left)]
        if self._http_task is not None:
            waits.append(self._http_task)
            stragglers = asyncio.create_task(self._close_stragglers(self._http_task))
        try:
            await asyncio.wait_for(asyncio.gather(*waits, return_exceptions=True), left + 0.2)
        except TimeoutError:
            log.warning("requests still running at the end of the %.0f s grace period", grace)
        if self._http_task is not None:
            stragglers.cancel()
        try:
            await asyncio.wait_for(asyncio.to_thread(self.registry.stop), EXIT_RESERVE)
        except TimeoutError:
            log.warning("the store follower did not stop in time; exiting anyway")
        try:
            await asyncio.wait_for(asyncio.to_thread(self.shadow.stop, 0.2), EXIT_RESERVE)
        except TimeoutError:
            log.warning("the shadow worker did not stop in time; exiting anyway")
        try:  # the proofs still queued for the shared table (they can be found again)
            await asyncio.wait_for(asyncio.to_thread(self.exact.close, 0.2), EXIT_RESERVE)
        except TimeoutError:
            log.warning("the proved table's writer did not stop in time; exiting anyway")
        self._stopped.set()


    async def _close_stragglers(self, http_task: asyncio.Task[None]) -> None:
        """Ask every HTTP connection to close, again and again until uvicorn has stopped.

        uvicorn asks the open connections once, as it stops listening; a connection
        accepted in that same instant is missed, and its client (keep-alive) was served
        on it until the end of the grace period (seen once in six runs under SIGTERM)."""
        asked: set[int] = set()
        while not http_task.done():
            for connection in list(self.http.server_state.connections):
                if id(connection) not in asked:
                    asked.add(id(connection))
                    connection.shutdown()
            await asyncio.sleep(0.05)


def exact_play(settings: Settings, store: ModelStore, registry: Registry, metrics: Metrics
               ) -> ExactPlay:
    """Exact play over the store's shared table of proved positions, with every served
    game's counters from 0 (a first hit is an increase)."""
    exact = ExactPlay(store.proved(max_entries=settings.proved_max), metrics,
                      dict(settings.exact_ms), store_up=lambda: registry.store_up,
                      background=dict(settings.exact_background_ms))
    for game in registry.games:
        metrics.proved_hits.labels(game)
        metrics.proved_misses.labels(game)
        metrics.proved_unasked.labels(game)
        if dict(settings.exact_background_ms).get(game):
            for result in ("proved", "failed", "dropped"):
                metrics.proved_background.labels(game, result)
        for proved in ("true", "false"):
            metrics.exact_moves.labels(game, proved)
    return exact


def _listen(host: str, port: int, *, reuse_port: bool) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that say so, and
    # without it every keep-alive response waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


async def run(settings: Settings, store_url: str) -> int:
    """One worker process: serve until SIGTERM/SIGINT, then drain."""
    store = ModelStore.from_url(store_url, prefix=settings.store_prefix,
                                timeout=STORE_TIMEOUT, retries=1)
    server = MoveServer(settings, store)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await server.start()
    await stop.wait()
    log.info("draining (grace %.0f s)", settings.grace_seconds)
    _exit_at_the_deadline(settings.grace_seconds)
    started = loop.time()
    await server.stop()
    store.close()
    log.info("stopped %.2f s after the signal", loop.time() - started)
    return 0


def _exit_at_the_deadline(grace: float) -> None:
    """The last resort of a drain: when the grace period ends, the process exits (status
    1), whatever still runs. ``stop()`` works to an earlier deadline, but a batch still
    computing in a thread, or a store call waiting on a dead Redis, would otherwise hold
    the interpreter's exit past the point where an orchestrator sends SIGKILL."""
    def expire() -> None:
        log.warning("the %.0f s grace period is over: exiting with work still running", grace)
        logging.shutdown()
        os._exit(1)
    timer = threading.Timer(max(0.0, grace - 0.1), expire)
    timer.daemon = True
    timer.start()


@contextlib.contextmanager
def store_url(settings: Settings) -> Iterator[str]:
    """The configured store's URL, or an embedded Redis's for the duration."""
    if settings.store_url:
        yield settings.store_url
        return
    log.info("no store URL: using the embedded Redis in %s", settings.data_dir / "redis")
    with embedded_redis(settings.data_dir) as url:
        yield url


def serve(settings: Settings) -> int:
    """The process's composition root (``gameai serve``)."""
    logging.basicConfig(level=settings.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with store_url(settings) as url:
        if settings.workers == 1:
            code = asyncio.run(run(settings, url))
        else:
            code = run_workers(settings, url, target=serve_worker)
    exit_now(code)


def serve_worker(settings: Settings, store_url: str, handles_signals: Event) -> None:
    """One of several worker processes (:func:`gameai.service.workers.run_workers`). Until
    it serves, SIGTERM or SIGINT ends it at once with status 0: there is nothing to drain."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, _stop_before_serving)
    handles_signals.set()
    host.install()  # a spawned process starts from nothing
    logging.basicConfig(level=settings.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(processName)s: %(message)s")
    exit_now(asyncio.run(run(settings, store_url)))


def _stop_before_serving(signum: int, frame: FrameType | None) -> None:
    log.info("%s before serving: stopping", signal.Signals(signum).name)
    exit_now(0)


def exit_now(code: int) -> NoReturn:
    """Leave the process at once, logs and output flushed. Everything is stopped by now;
    the interpreter's own teardown (threads joined, numba and gRPC finalised) took over
    two seconds per process on a busy machine, past the end of the grace period."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
