"""``gameai bench server``: throughput and latency of a real server, printed as figures.

Starts an embedded Redis with the perfect tictactoe model and, for each worker count, a
``gameai serve`` process on free loopback ports. Client processes (separate from the
server, ``--client-processes``) then drive, in alternating rounds so drift hits both
sides alike:

* gRPC ``BestMove`` against the same server's ``grpc.health.v1.Health/Check``;
* REST ``best-move`` against ``/healthz``, over keep-alive HTTP/1.1 connections;
* p50 and p99 latency of the move calls at ``--clients`` concurrent clients;
* ``EvaluateBatch`` with 1,000 boards a request, in positions per second;
* the cost of a shadow test at 100% (docs/operations.md): best-move throughput on both
  transports with the shadow alias's share at 0 and at 100%, round by round, and what the
  shadow compared and dropped meanwhile;
* whole-game reviews of 42-ply Connect Four games (every position unseen, so nothing comes
  from the answer cache) at the default depth, by an n-tuple network of the default shape
  trained for ``--review-games`` self-play games: the model alone (``solve_ms`` 0) and with
  the default solver budget.

The throughput ratios are taken round by round (``--rounds``), each move run against the
baseline run just before it, and the median is reported with every round's figure.

The boards cycle through every live tictactoe position the solver enumerates, so the
answers are real lookups (after the first pass, the server's per-version answer cache).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BATCH_SIZE = 1000
# 42-ply Connect Four games that fill the board without a win (seeded random play: the
# first six such games of seeds 0, 1, 2, ...), so every review has all 42 plies.
DRAWN_GAMES = ("111561466663112343747547223422774655235375",
               "725674152326376743436621154672551427513413",
               "722224546225766455561775676744343331133111",
               "453645655545237421423624211327176376317761",
               "616347555325775466312274121137536362271444",
               "662762645513763154172142444336355752771312")


def main(args: argparse.Namespace) -> int:
    from gameai.games import get_game
    from gameai.games.mnk.positions import live_boards
    from gameai.models.oracle import solver_model
    from gameai.store import ModelStore, RedisServer

    workers = [int(w) for w in str(args.workers).split(",") if w.strip()]
    report: dict[str, Any] = {"load_average_before": os.getloadavg(), "cpus": os.cpu_count(),
                              "seconds_per_measurement": args.seconds,
                              "clients": args.clients, "runs": {}}
    with tempfile.TemporaryDirectory() as tmp, \
            RedisServer(tmp, tcp=True, persist=False) as redis:
        store = ModelStore.from_url(redis.url)
        perfect = solver_model(get_game("tictactoe"))
        version = store.publish(perfect.to_bytes(), by="bench").version
        store.set_alias(game="tictactoe", alias="production", version=version, by="bench")
        # the shadow candidate: the same play under other metadata (what a shadow costs,
        # not what it finds, is measured here)
        shadow = store.publish(perfect.with_info(perfect.info.with_updates(
            algorithm="shadow-candidate")).to_bytes(), by="bench").version
        store.set_shadow(game="tictactoe", version=shadow, share=0, by="bench")
        c4 = store.publish(review_model(args.review_games).to_bytes(), by="bench").version
        store.set_alias(game="connect-four", alias="production", version=c4, by="bench")
        store.close()
        boards = live_boards(get_game("tictactoe"))
        report["core_batch_positions_per_second"] = core_batch_rate(redis.url, boards)
        for count in workers:
            with serving(redis.url, count) as (http_port, grpc_port, pid):
                report["runs"][str(count)] = measure(args, http_port, grpc_port, boards, pid,
                                                     redis.url)
            if not args.json:
                print_run(count, report["runs"][str(count)])
    report["review_games_trained"] = args.review_games
    report["load_average_after"] = os.getloadavg()
    report["best_workers"] = max(report["runs"], key=lambda w: report["runs"][w]["grpc"]["move"]
                                 ["rate"] + report["runs"][w]["rest"]["move"]["rate"])
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"\ncore batch (no transport): {report['core_batch_positions_per_second']:,.0f} "
              "positions/s")
        print(f"most move throughput: {report['best_workers']} worker process(es); load "
              f"average before/after: {report['load_average_before'][0]:.2f}/"
              f"{report['load_average_after'][0]:.2f} on {report['cpus']} cpus")
    return 0


def core_batch_rate(url: str, boards: list[str]) -> float:
    """Positions per second of :func:`gameai.service.core.evaluate_batch` alone, in this process."""
    from gameai.service import core
    from gameai.service.metrics import Metrics
    from gameai.service.registry import Registry
    from gameai.store import ModelStore

    store = ModelStore.from_url(url)
    registry = Registry(store, ("tictactoe",), Metrics())
    registry.store_up = True
    registry.refresh()
    batch = (boards * (BATCH_SIZE // len(boards) + 1))[:BATCH_SIZE]
    done, started = 0, time.perf_counter()
    while time.perf_counter() - started < 1.0:
        core.evaluate_batch(registry, game="tictactoe", boards=batch)
        done += len(batch)
    store.close()
    return done / (time.perf_counter() - started)


def http(method: str, url: str, body: dict[str, Any] | None = None, *,
         timeout: float = 60.0) -> tuple[int, str]:
    """One HTTP request with the standard library (the image has no HTTP client package,
    issue 28): the status and the body's text, whatever the status. Raises ``OSError``
    when nothing answers."""
    import urllib.error
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return int(response.status), response.read().decode()
    except urllib.error.HTTPError as e:
        return int(e.code), e.read().decode()


@contextmanager
def serving(url: str, workers: int, games: tuple[str, ...] = ("tictactoe", "connect-four"),
            env: dict[str, str] | None = None) -> Iterator[tuple[int, int, int]]:
    """A ``gameai serve`` process (with ``workers`` workers) of ``games`` on free ports,
    with ``env`` added to this process's environment, once it is ready (every game has its
    production version loaded)."""
    from gameai.store.embedded import free_port

    http_port, grpc_port = free_port(), free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "gameai", "serve", "--store", url, "--http-port", str(http_port),
         "--grpc-port", str(grpc_port), "--workers", str(workers), "--log-level", "warning",
         "--drain-seconds", "0", "--grace-seconds", "5", "--poll-seconds", "0.2",
         "--games", ",".join(games)],
        env={**{k: v for k, v in os.environ.items() if not k.startswith("GAMEAI_ADMIN")},
             **(env or {})})
    try:
        deadline = time.monotonic() + 180  # the network's search compiles as it loads
        ready = 0
        while ready < 5:  # several answers in a row: every worker is up
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            try:
                ok = http("GET", f"http://127.0.0.1:{http_port}/readyz", timeout=5)[0] == 200
                ready = ready + 1 if ok else 0
            except OSError:
                ready = 0
            time.sleep(0.2)
        yield http_port, grpc_port, process.pid
    finally:
        process.terminate()
        process.wait(30)


def measure(args: argparse.Namespace, http_port: int, grpc_port: int,
            boards: list[str], pid: int, url: str) -> dict[str, Any]:
    """Rounds of baseline then move calls on each transport; the ratio is taken round by
    round (each move run against the baseline run just before it) and its median kept."""
    jobs = {"grpc": ("grpc-health", "grpc-move"), "rest": ("rest-health", "rest-move")}
    raw: dict[str, dict[str, list[dict[str, Any]]]] = {t: {"baseline": [], "move": []}
                                                       for t in jobs}
    processes = max(1, args.client_processes)
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        for _ in range(args.rounds):
            for transport, (baseline, move) in jobs.items():
                raw[transport]["baseline"].append(
                    drive(pool, baseline, args, http_port, grpc_port, boards, pid))
                raw[transport]["move"].append(
                    drive(pool, move, args, http_port, grpc_port, boards, pid))
        batch = drive(pool, "grpc-batch", args, http_port, grpc_port, boards, pid)
        shadow = measure_shadow(pool, args, http_port, grpc_port, boards, pid, url)
    result: dict[str, Any] = {"shadow": shadow, "review": measure_review(http_port)}
    for transport in jobs:
        summary: dict[str, Any] = {kind: combine(runs) for kind, runs in raw[transport].items()}
        ratios = [m["rate"] / b["rate"] for b, m in zip(raw[transport]["baseline"],
                                                          raw[transport]["move"], strict=True)]
        summary["ratio"] = statistics.median(ratios)
        summary["ratios"] = ratios
        # The server's CPU seconds per request: what a saturated server's throughput is
        # made of, and far less disturbed by other load on the machine than wall rates.
        summary["cpu_ratio"] = (summary["baseline"]["cpu_us"] / summary["move"]["cpu_us"])
        result[transport] = summary
    result["batch"] = combine([batch])
    result["batch"]["positions_per_second"] = result["batch"]["rate"] * BATCH_SIZE
    return result


def set_shadow_share(url: str, http_port: int, share: int) -> None:
    """Set the shadow alias's share and wait until the server follows it (every worker
    process: several answers in a row)."""
    from gameai.store import ModelStore

    with ModelStore.from_url(url) as store:
        store.set_shadow(game="tictactoe", version=None, share=share, by="bench")
    seen, deadline = 0, time.monotonic() + 30
    while seen < 10:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not follow the shadow share {share}")
        games = json.loads(http("GET", f"http://127.0.0.1:{http_port}/v1/games")[1])["games"]
        ok = next(g for g in games if g["name"] == "tictactoe")["shadow_share"] == share
        seen = seen + 1 if ok else 0
        time.sleep(0.05)


def shadow_counts(http_port: int) -> dict[str, float]:
    """The server's shadow counters (every worker's, merged), from ``/metrics``."""
    text = http("GET", f"http://127.0.0.1:{http_port}/metrics")[1]
    out = {"compared": 0.0, "dropped": 0.0}
    for line in text.splitlines():
        for name in out:
            if line.startswith(f"gameai_shadow_{name}_total{{"):
                out[name] += float(line.rsplit(" ", 1)[1])
    return out


def measure_shadow(pool: Any, args: argparse.Namespace, http_port: int, grpc_port: int,
                   boards: list[str], pid: int, url: str) -> dict[str, Any]:
    """Best-move throughput with the shadow's share at 0 and at 100%, round by round on
    each transport (each on-run against the off-run just before it), and the shadow's
    compared and dropped queries during the on-runs."""
    out: dict[str, Any] = {}
    for transport in ("grpc", "rest"):
        off: list[dict[str, Any]] = []
        on: list[dict[str, Any]] = []
        counted = {"compared": 0.0, "dropped": 0.0}
        for _ in range(args.rounds):
            set_shadow_share(url, http_port, 0)
            off.append(drive(pool, f"{transport}-move", args, http_port, grpc_port, boards,
                             pid))
            set_shadow_share(url, http_port, 100)
            before = shadow_counts(http_port)
            on.append(drive(pool, f"{transport}-move", args, http_port, grpc_port, boards,
                            pid))
            time.sleep(1.5)  # the queue drains
            after = shadow_counts(http_port)
            for name in counted:
                counted[name] += after[name] - before[name]
        set_shadow_share(url, http_port, 0)
        ratios = [b["rate"] / a["rate"] for a, b in zip(off, on, strict=True)]
        answered = sum(len(r["latencies"]) for r in on)
        summary = {"off": combine(off), "on": combine(on)}
        # the server's CPU per answer, the shadow worker's included (same process): what a
        # saturated server's throughput is made of, far steadier than wall rates under load
        cpu_ratio = summary["off"]["cpu_us"] / summary["on"]["cpu_us"]
        out[transport] = {**summary, "ratio": statistics.median(ratios), "ratios": ratios,
                          "cpu_ratio": cpu_ratio, "answered_on": answered, **counted}
    return out


def review_model(games: int) -> Any:
    """The Connect Four n-tuple network the reviews are timed with: the default shape,
    trained for ``games`` self-play games (seed 1)."""
    from gameai.games import get_game
    from gameai.trainer.training import make_learner, train

    learner = make_learner(get_game("connect-four"), "ntuple", seed=1)
    return train(learner, games=games, eval_share=0.0, record_time=False).model


def measure_review(http_port: int) -> dict[str, Any]:
    """Milliseconds per review of :data:`DRAWN_GAMES` over REST, each game reviewed once
    (its positions unseen): half by the model alone, half with the default solver
    budget."""
    half = len(DRAWN_GAMES) // 2
    out: dict[str, Any] = {}
    review = f"http://127.0.0.1:{http_port}/v1/games/connect-four/review"
    for label, games, extra in (("model_only", DRAWN_GAMES[:half], {"solve_ms": 0}),
                                ("default_solver", DRAWN_GAMES[half:], {})):
        times, proved = [], []
        for moves in games:
            started = time.perf_counter()
            status, text = http("POST", review, {"moves": moves, **extra})
            times.append((time.perf_counter() - started) * 1e3)
            body = json.loads(text) if status == 200 else {}
            if status != 200 or len(body["plies"]) != 42:
                raise RuntimeError(f"review failed: {status} {text[:200]}")
            proved.append(body["proved"])
        out[label] = {"ms": times, "max_ms": max(times),
                      "median_ms": statistics.median(times), "proved": proved,
                      "depth": body.get("depth")}
    return out


def combine(runs: list[dict[str, Any]]) -> dict[str, Any]:
    latencies = sorted(x for run in runs for x in run["latencies"])
    errors = sum(run["errors"] for run in runs)
    rate = statistics.median(run["rate"] for run in runs)
    cpu_us = sum(run["cpu"] for run in runs) / max(1, len(latencies)) * 1e6
    return {"rate": rate, "errors": errors, "p50_ms": percentile(latencies, 50) * 1e3,
            "p99_ms": percentile(latencies, 99) * 1e3, "requests": len(latencies),
            "cpu_us": cpu_us}


def percentile(sorted_values: list[float], p: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, round(p / 100 * (len(sorted_values) - 1)))
    return sorted_values[index]


def drive(pool: Any, job: str, args: argparse.Namespace, http_port: int, grpc_port: int,
          boards: list[str], pid: int) -> dict[str, Any]:
    """Run ``job`` from the client processes for ``args.seconds``; rate is requests/s."""
    processes = max(1, args.client_processes)
    per_process = [args.clients // processes + (i < args.clients % processes)
                   for i in range(processes)]
    cpu_before = tree_cpu_seconds(pid)
    parts = pool.starmap(_client_process, [
        (job, n, args.seconds, http_port, grpc_port, boards[i::processes])
        for i, n in enumerate(per_process) if n])
    return {"rate": sum(p["count"] for p in parts) / args.seconds,
            "latencies": [x for p in parts for x in p["latencies"]],
            "errors": sum(p["errors"] for p in parts),
            "cpu": tree_cpu_seconds(pid) - cpu_before}


def tree_cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of a process and its children (the workers), from
    /proc. Includes the clients' warm-up, a few percent of a run."""
    ticks = os.sysconf("SC_CLK_TCK")
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
            for task in Path(f"/proc/{current}/task").iterdir():
                children = (task / "children").read_text().split()
                pending.extend(int(c) for c in children)
        except (OSError, IndexError, ValueError):
            continue
    return total


def _client_process(job: str, concurrency: int, seconds: float, http_port: int,
                    grpc_port: int, boards: list[str]) -> dict[str, Any]:
    return asyncio.run(_clients(job, concurrency, seconds, http_port, grpc_port, boards))


async def _clients(job: str, concurrency: int, seconds: float, http_port: int,
                   grpc_port: int, boards: list[str]) -> dict[str, Any]:
    latencies: list[float] = []
    errors = [0]
    channels: list[Any] = []
    if job.startswith("grpc"):
        import grpc

        # A connection per client (no shared subchannel), so that with several server
        # processes the kernel can spread them as it spreads the HTTP connections.
        channels = [grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}",
                                              options=[("grpc.use_local_subchannel_pool", 1)])
                    for _ in range(concurrency)]
        for channel in channels:
            await channel.channel_ready()
    calls: list[Any] = ([_GrpcCall(job, channel, boards) for channel in channels] if channels
                        else [_RestCall(job, http_port, boards)] * concurrency)
    warm_until = time.perf_counter() + 0.3
    end = warm_until + seconds

    async def one_client(offset: int) -> None:
        call = calls[offset]
        state = await call.open()
        i = offset
        while True:
            started = time.perf_counter()
            if started >= end:
                break
            ok = await call.run(state, i)
            i += concurrency
            if started >= warm_until:
                latencies.append(time.perf_counter() - started)
                errors[0] += 0 if ok else 1
        await call.close(state)

    await asyncio.gather(*(one_client(i) for i in range(concurrency)))
    for channel in channels:
        await channel.close()
    return {"count": len(latencies), "latencies": latencies, "errors": errors[0]}


class _GrpcCall:
    def __init__(self, job: str, channel: Any, boards: list[str]) -> None:
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc

        moves = move_pb2_grpc.MoveServiceStub(channel)
        if job == "grpc-health":
            health = health_pb2_grpc.HealthStub(channel)
            request = health_pb2.HealthCheckRequest(service="")
            self.requests = [request]
            self.method = health.Check
        elif job == "grpc-move":
            self.requests = [move_pb2.BestMoveRequest(game="tictactoe", board=b)
                             for b in boards]
            self.method = moves.BestMove
        else:
            batch = [(boards * (BATCH_SIZE // len(boards) + 1))[i:i + BATCH_SIZE]
                     for i in range(0, len(boards), 97)]
            self.requests = [move_pb2.EvaluateBatchRequest(game="tictactoe", boards=b)
                             for b in batch]
            self.method = moves.EvaluateBatch

    async def open(self) -> None:
        return None

    async def run(self, state: None, i: int) -> bool:
        import grpc

        try:
            await self.method(self.requests[i % len(self.requests)])
            return True
        except grpc.aio.AioRpcError:
            return False

    async def close(self, state: None) -> None:
        return None


class _RestCall:
    """Keep-alive HTTP/1.1 over raw asyncio streams: a client far lighter than the server."""

    def __init__(self, job: str, port: int, boards: list[str]) -> None:
        self.port = port
        if job == "rest-health":
            self.requests = [b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n"]
        else:
            self.requests = []
            for board in boards:
                body = json.dumps({"board": board}).encode()
                self.requests.append(
                    b"POST /v1/games/tictactoe/best-move HTTP/1.1\r\nHost: bench\r\n"
                    b"Content-Type: application/json\r\nContent-Length: "
                    + str(len(body)).encode() + b"\r\n\r\n" + body)

    async def open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection("127.0.0.1", self.port)

    async def run(self, state: tuple[asyncio.StreamReader, asyncio.StreamWriter],
                  i: int) -> bool:
        reader, writer = state
        writer.write(self.requests[i % len(self.requests)])
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        await reader.readexactly(length)
        return head.startswith(b"HTTP/1.1 200")

    async def close(self, state: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
        state[1].close()


def print_run(workers: int, run: dict[str, Any]) -> None:
    print(f"\n== {workers} server process(es)")
    for transport, label in (("grpc", "gRPC BestMove vs Health/Check"),
                             ("rest", "REST best-move vs /healthz")):
        r = run[transport]
        rounds = ", ".join(f"{x:.2f}" for x in r["ratios"])
        print(f"{label}: {r['move']['rate']:,.0f} vs {r['baseline']['rate']:,.0f} req/s, "
              f"ratio {r['ratio']:.2f} (rounds {rounds}); move p50 "
              f"{r['move']['p50_ms']:.2f} ms, p99 {r['move']['p99_ms']:.2f} ms; "
              f"errors {r['move']['errors']}")
        print(f"  server CPU per request: move {r['move']['cpu_us']:.0f} us, baseline "
              f"{r['baseline']['cpu_us']:.0f} us, ratio {r['cpu_ratio']:.2f}")
    b = run["batch"]
    print(f"gRPC EvaluateBatch ({BATCH_SIZE} boards): {b['positions_per_second']:,.0f} "
          f"positions/s; p50 {b['p50_ms']:.1f} ms, p99 {b['p99_ms']:.1f} ms; "
          f"errors {b['errors']}")
    for transport, label in (("grpc", "gRPC BestMove"), ("rest", "REST best-move")):
        s = run["shadow"][transport]
        rounds = ", ".join(f"{x:.2f}" for x in s["ratios"])
        print(f"{label} shadowed at 100%: {s['on']['rate']:,.0f} vs {s['off']['rate']:,.0f} "
              f"req/s unshadowed, ratio {s['ratio']:.2f} (rounds {rounds}); p99 "
              f"{s['on']['p99_ms']:.2f} vs {s['off']['p99_ms']:.2f} ms; server CPU per "
              f"answer {s['on']['cpu_us']:.0f} vs {s['off']['cpu_us']:.0f} us (ratio "
              f"{s['cpu_ratio']:.2f}); of {s['answered_on']:,} answers "
              f"{s['compared']:,.0f} compared, {s['dropped']:,.0f} dropped")
    for label, r in run["review"].items():
        print(f"42-ply Connect Four review ({label.replace('_', ' ')}, depth {r['depth']}): "
              f"median {r['median_ms']:.0f} ms, max {r['max_ms']:.0f} ms over "
              f"{len(r['ms'])} games (plies proved: {r['proved']})")
