"""Real processes for the suites: a private Redis holding models, ``gameai serve``
processes on free loopback ports, and their figures read from ``/proc``.

Nothing here is a stand-in: the servers are the ``gameai serve`` command as operators run
it, the store is a real ``redis-server``, and memory and file descriptors are what the
kernel reports for the server's whole process tree (workers included).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from gameai.games import get_game
from gameai.models import TableModel
from gameai.store import ModelStore, RedisServer
from gameai.store.embedded import free_port

READY_TIMEOUT = 60.0


def gameai_command(*args: str) -> list[str]:
    """``gameai ARGS`` run by this interpreter (so the venv's code, not an installed one)."""
    return [sys.executable, "-m", "gameai", *args]


@dataclass
class ServerProcess:
    """A running ``gameai serve``; its output goes to ``log_path``."""

    process: subprocess.Popen[bytes]
    http_port: int
    grpc_port: int
    log_path: Path
    command: list[str] = field(default_factory=list)
    _client: httpx.Client | None = field(default=None, repr=False)

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def grpc(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def pids(self) -> list[int]:
        """The process and every descendant (the workers of ``--workers N``)."""
        return process_tree(self.pid)

    def rss_bytes(self) -> int:
        return sum(rss_bytes(pid) for pid in self.pids())

    def fds(self) -> int:
        return sum(open_fds(pid) for pid in self.pids())

    @property
    def client(self) -> httpx.Client:
        """A keep-alive HTTP client for this server (``httpx.get`` builds an SSL context
        per call, ~90 ms here: far too slow to time a switch with)."""
        if self._client is None:
            self._client = httpx.Client(base_url=self.http, timeout=5)
        return self._client

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def readyz(self) -> tuple[int, dict[str, Any]]:
        r = self.client.get("/readyz")
        return r.status_code, r.json()

    def metrics_text(self) -> str:
        return self.client.get("/metrics").text

    def metric(self, name: str, labels: dict[str, str] | None = None) -> float | None:
        """The sum of the samples of ``name`` whose labels include ``labels``."""
        return sample(self.metrics_text(), name, labels)

    def served_aliases(self, game: str = "tictactoe") -> tuple[dict[str, int], int]:
        """The aliases and canary weight this server serves for ``game`` right now."""
        games = self.client.get("/v1/games").json()["games"]
        entry = next(g for g in games if g["name"] == game)
        return dict(entry["aliases"]), int(entry["canary_weight"])

    def terminate(self, timeout: float = 30.0) -> int:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def sample(text: str, name: str, labels: dict[str, str] | None = None) -> float | None:
    """Sum of the samples of ``name`` in Prometheus text whose labels include ``labels``;
    ``None`` when there is none."""
    from prometheus_client.parser import text_string_to_metric_families

    total, seen = 0.0, False
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in (labels or {}).items()):
                total += s.value
                seen = True
    return total if seen else None


def start_server(store_url: str | None, *, log_dir: Path, prefix: str = "gameai",
                 games: Sequence[str] = ("tictactoe",), workers: int = 1,
                 extra: Sequence[str] = (), env: dict[str, str] | None = None,
                 wait_ready: bool = True) -> ServerProcess:
    """``gameai serve`` on free loopback ports, waited for until ``/readyz`` answers 200
    (or, with ``wait_ready=False``, until ``/healthz`` does). ``store_url`` ``None``: the
    store is given in ``extra`` (``--store-file``)."""
    http_port, grpc_port = free_port(), free_port()
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"serve-{http_port}.log"
    store = ["--store", store_url] if store_url is not None else []  # else in ``extra``
    command = gameai_command(
        "serve", *store, "--store-prefix", prefix, "--games", ",".join(games),
        "--http-port", str(http_port), "--grpc-port", str(grpc_port),
        "--workers", str(workers), *extra)
    base = {k: v for k, v in os.environ.items() if not k.startswith("GAMEAI_")}
    base["GAMEAI_CACHE_DIR"] = os.environ.get("GAMEAI_CACHE_DIR", str(log_dir / "cache"))
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   env={**base, **(env or {})})
    server = ServerProcess(process, http_port, grpc_port, log_path, command)
    path = "/readyz" if wait_ready else "/healthz"
    wait_until(lambda: _answers(server, path), READY_TIMEOUT,
               lambda: f"gameai serve never answered {path}: {server.log_text()[-2000:]}",
               alive=process)
    if workers > 1:  # every worker up: several answers in a row
        for _ in range(5):
            wait_until(lambda: _answers(server, path), 10, lambda: "a worker died",
                       alive=process)
    return server


def _answers(server: ServerProcess, path: str) -> bool:
    try:
        return server.client.get(path, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def wait_until(condition: Any, timeout: float, what: Any = "condition",
               alive: subprocess.Popen[bytes] | None = None, step: float = 0.02) -> float:
    """Seconds until ``condition()`` held; ``TimeoutError`` (naming ``what``) after
    ``timeout``, or ``RuntimeError`` at once if the process ``alive`` exits."""
    start = time.monotonic()
    while not condition():
        if alive is not None and alive.poll() is not None:
            raise RuntimeError(what() if callable(what) else what)
        if time.monotonic() - start > timeout:
            raise TimeoutError(what() if callable(what) else what)
        time.sleep(step)
    return time.monotonic() - start


# -- the store -----------------------------------------------------------------------------

@contextmanager
def private_redis(work_dir: Path, *, persist: bool = False,
                  password: str | None = None) -> Iterator[RedisServer]:
    """A ``redis-server`` of this run alone on a free loopback port."""
    with RedisServer(work_dir / "redis", tcp=True, persist=persist,
                     password=password) as server:
        yield server


def perfect_model(game: str = "tictactoe") -> TableModel:
    from gameai.models.oracle import solver_model

    return solver_model(get_game(game))


def variant(model: TableModel, n: int) -> bytes:
    """The model's bytes with other metadata: a distinct version that plays the same."""
    return TableModel(model.game, model.info.with_updates(games_played=n), model.keys,
                      model.values).to_bytes()


def seed_store(store: ModelStore, games: Sequence[str], *, versions: int = 2,
               canary_weight: int = 0) -> dict[str, list[int]]:
    """Publish ``versions`` distinct versions of each game's perfect model; the first is
    ``production``, the last ``canary`` at ``canary_weight``. Returns the numbers."""
    numbers: dict[str, list[int]] = {}
    for name in games:
        model = perfect_model(name)
        numbers[name] = [store.publish(variant(model, i), by="stress").version
                         for i in range(versions)]
        store.set_alias(game=model.game.name, alias="production", version=numbers[name][0],
                        by="stress")
        if versions > 1:
            store.set_canary(game=model.game.name, version=numbers[name][-1],
                             weight=canary_weight, by="stress")
    return numbers


# -- /proc -----------------------------------------------------------------------------------

def process_tree(pid: int) -> list[int]:
    pids, pending = [], [pid]
    while pending:
        current = pending.pop()
        pids.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(c) for c in (task / "children").read_text().split())
        except OSError:
            continue
    return pids


def rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def open_fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (nearest rank) of ``values``; NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]
