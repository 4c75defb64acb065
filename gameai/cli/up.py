"""``gameai up``: the whole service on one machine, from one command.

It opens the model store (the shared embedded Redis under the data directory, unless
``GAMEAI_STORE_URL`` or ``GAMEAI_STORE_URL_FILE`` names one), starts a tic-tac-toe trainer
and the move server as child processes, waits until the server holds a production model,
and prints where everything is. Ctrl-C (or SIGTERM) stops the children with SIGTERM, so
the server drains and the trainer finishes its round, then releases the embedded Redis,
whose append-only file keeps every model for the next run. A second run finds production
in the store: the server is ready at once and the trainer continues from that version.

Only argparse is imported at load time; the work is imported when the command runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gameai.cli.common import USAGE, CommandError

GAME = "tictactoe"
ALGORITHM = "td"
STOP_SECONDS = 20.0
READY_SECONDS = 600.0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gameai up``."""
    p = sub.add_parser(
        "up", help="run everything on this machine: store, trainer, server",
        description="Start the model store (an embedded Redis unless GAMEAI_STORE_URL or "
        "GAMEAI_STORE_URL_FILE is set), a tic-tac-toe trainer that publishes and promotes "
        "its first unbeatable model, and the move server; print the URLs. Ctrl-C stops "
        "everything; the models stay in the store for the next run.")
    p.add_argument("--http-port", type=_port, default=8000,
                   help="REST, web board and /metrics (default 8000)")
    p.add_argument("--grpc-port", type=_port, default=50051, help="gRPC (default 50051)")
    p.add_argument("--metrics-port", type=_port, default=9100,
                   help="the trainer's /metrics and /healthz (default 9100)")
    p.add_argument("--data-dir", metavar="DIR", help="where the embedded Redis keeps the "
                   "models (default: $GAMEAI_DATA_DIR or ~/.local/share/gameai)")
    p.set_defaults(func=run_up)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a port number, got {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be between 1 and 65535, got {port}")
    return port


@dataclass
class Child:
    """A child process of ``gameai up`` with its log file."""

    name: str
    argv: list[str]
    log: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self, env: dict[str, str]) -> None:
        with open(self.log, "ab") as out:
            # A session of its own: the terminal's Ctrl-C reaches only `gameai up`, which
            # then stops the children in order instead of all at once.
            self.process = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=env,
                                            start_new_session=True)

    def failed(self) -> str | None:
        """Why the child is gone (with its last log lines), or ``None`` while it runs."""
        assert self.process is not None
        status = self.process.poll()
        if status is None:
            return None
        return f"the {self.name} exited with status {status}; its log ({self.log}) ends:\n" \
            + tail(self.log)

    def stop(self, timeout: float = STOP_SECONDS) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def run_up(args: argparse.Namespace) -> int:
    from gameai.store.connect import StoreSettings, store_url
    from gameai.store.errors import StoreError

    for port, flag in ((args.http_port, "--http-port"), (args.grpc_port, "--grpc-port"),
                       (args.metrics_port, "--metrics-port")):
        if not port_is_free(port):
            raise CommandError(f"port {port} is in use: choose another with {flag}")
    if len({args.http_port, args.grpc_port, args.metrics_port}) < 3:
        raise CommandError("--http-port, --grpc-port and --metrics-port must differ")
    try:
        settings = StoreSettings.from_env(data_dir=args.data_dir)
    except StoreError as e:
        raise CommandError(str(e), USAGE) from None
    logs = settings.data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)

    stop = _StopSignal()
    try:
        with stop.installed(), store_url(settings) as url:
            return _run(args, url, settings, logs, stop)
    except StoreError as e:
        raise CommandError(str(e)) from None


def _run(args: argparse.Namespace, url: str, settings: Any, logs: Path,
         stop: _StopSignal) -> int:
    production = _production_version(url, settings.prefix)
    env = {k: v for k, v in os.environ.items() if k != "GAMEAI_STORE_URL_FILE"}
    env |= {"GAMEAI_STORE_URL": url, "GAMEAI_STORE_PREFIX": settings.prefix}
    gameai = [sys.executable, "-m", "gameai"]
    trainer = Child("trainer", [*gameai, "trainer", "--game", GAME, "--algorithm", ALGORITHM,
                                "--metrics-port", str(args.metrics_port), "--promote", "auto",
                                "--resume"],
                    logs / "trainer.log")
    # One server process unless GAMEAI_WORKERS says otherwise: on one machine that also
    # trains, a second worker doubles the start-up (~3 s -> ~10 s measured) for no gain.
    workers = [] if os.environ.get("GAMEAI_WORKERS") else ["--workers", "1"]
    server = Child("server", [*gameai, "serve", "--games", GAME, "--http-port",
                              str(args.http_port), "--grpc-port", str(args.grpc_port),
                              *workers], logs / "server.log")
    children = [server, trainer]
    where = settings.where
    if production:
        print(f"store: {where}; {GAME} production is version {production}, reused")
    else:
        print(f"store: {where}; no {GAME} model yet: the trainer learns one first")
    try:
        for child in children:
            child.start(env)
        http = f"http://127.0.0.1:{args.http_port}"
        _wait(f"{http}/healthz", children, stop, "the server to start")
        _wait_ready(f"{http}/readyz", f"http://127.0.0.1:{args.metrics_port}/metrics",
                    children, stop)
        print(urls(args, logs))
        while True:
            _check(children, stop)
            stop.wait(0.5)
    except KeyboardInterrupt:
        print("stopping the server and the trainer, then the store ...", flush=True)
        return 0
    finally:
        for child in children:
            child.stop()


def urls(args: argparse.Namespace, logs: Path) -> str:
    http = f"http://127.0.0.1:{args.http_port}"
    return "\n".join([
        "",
        "gameai is up:",
        f"  web board        {http}/",
        f"  REST API docs    {http}/docs   (OpenAPI: {http}/openapi.json)",
        f"  gRPC             127.0.0.1:{args.grpc_port}   (gameai.v1.MoveService, reflection on)",
        f"  server metrics   {http}/metrics",
        f"  trainer metrics  http://127.0.0.1:{args.metrics_port}/metrics",
        f"  logs             {logs}",
        "Ctrl-C stops everything; the models stay in the store for the next run.",
        "",
    ])


def _production_version(url: str, prefix: str) -> int | None:
    from gameai.store import ModelStore

    store = ModelStore.from_url(url, prefix=prefix)
    try:
        return store.resolve(game=GAME, ref="production")
    finally:
        store.close()


def _check(children: list[Child], stop: _StopSignal) -> None:
    """Raise if a child died (with its log) or the user asked to stop."""

    for child in children:
        if problem := child.failed():
            raise CommandError(problem)
    if stop.requested:
        raise KeyboardInterrupt


def _wait(url: str, children: list[Child], stop: _StopSignal, what: str,
          progress: Callable[[], None] | None = None) -> None:
    """Poll ``url`` until it answers 200, watching the children all the while."""

    deadline = time.monotonic() + READY_SECONDS
    while http_status(url) != 200:
        _check(children, stop)
        if time.monotonic() > deadline:
            raise CommandError(f"gave up waiting for {what} after {READY_SECONDS:.0f} s")
        if progress:
            progress()
        stop.wait(0.2)


def _wait_ready(readyz: str, trainer_metrics: str, children: list[Child],
                stop: _StopSignal) -> None:
    """Wait for the server to hold a production model, showing the trainer's games."""
    from tqdm import tqdm

    if http_status(readyz) == 200:
        return
    with tqdm(desc=f"training {GAME} until a model passes the gates", unit=" games",
              unit_scale=True, leave=False, file=sys.stderr) as bar:
        def progress() -> None:
            games = scrape_sum(trainer_metrics, "gameai_trainer_games_total")
            if games is not None and games > bar.n:
                bar.update(games - bar.n)

        _wait(readyz, children, stop, "the first model", progress)


def http_status(url: str, timeout: float = 2.0) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        return int(e.code)
    except (urllib.error.URLError, OSError):
        return None


def scrape_sum(url: str, metric: str) -> int | None:
    """The sum of a metric's samples on a /metrics page, or ``None`` if unreachable."""
    try:
        with urllib.request.urlopen(url, timeout=2.0) as response:
            text = response.read().decode()
    except (urllib.error.URLError, OSError):
        return None
    total = 0.0
    for line in text.splitlines():
        if line.startswith(metric) and line[len(metric):len(metric) + 1] in ("{", " "):
            total += float(line.rsplit(" ", 1)[1])
    return int(total)


def port_is_free(port: int) -> bool:
    """Nothing listens on ``port``. Connections of a previous run that linger in TIME_WAIT
    do not count: the servers bind with SO_REUSEADDR too."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class _StopSignal:
    """SIGINT and SIGTERM set a flag the main loop polls, so shutdown runs in order."""

    def __init__(self) -> None:
        self.requested = False

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        previous = {s: signal.signal(s, self._handle) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)

    def _handle(self, signum: int, frame: object) -> None:
        self.requested = True

    def wait(self, seconds: float) -> None:
        time.sleep(seconds)

