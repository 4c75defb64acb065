"""``gameai stress load``: sustained mixed traffic at 70% of the measured maximum.

A private Redis holds two games (tictactoe and connect-3x4-3), each with a production
version and a canary at 20%. A ``gameai serve`` process (two workers, the default on two
cores) serves them. Client processes then

1. measure the maximum: as many requests as the server answers in ``--probe-seconds``,
   closed loop, mixed gRPC and REST, best-move, evaluate and small batches, over the
   production track, the canary alias and pinned version numbers;
2. hold 70% of that rate, open loop, for ``--seconds``, while the server's resident
   memory and open file descriptors (whole process tree) are sampled from ``/proc``.

Goals: no failed request, latency reported (p50/p99 by transport), memory flat (less than
10% growth between the end of the warm-up and the end of the run), descriptors flat.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from gameai.games import get_game
from gameai.games.mnk.positions import live_boards
from gameai.store import ModelStore
from gameai.stress.harness import (
    ServerProcess,
    percentile,
    private_redis,
    seed_store,
    start_server,
)
from gameai.stress.report import Report
from gameai.stress.traffic import Answer, TrafficRun, mixed_calls

GAMES = ("tictactoe", "connect-3x4-3")
MODELS = ("", "production", "canary", "1", "2")
MAX_RSS_GROWTH = 0.10
MAX_FD_GROWTH = 5


def run(seconds: float = 30.0, *, share: float = 0.7, probe_seconds: float = 3.0,
        workers: int = 2, processes: int = 2, concurrency: int = 8,
        judge_rate: bool = True, command: str = "gameai stress load") -> Report:
    """Run the suite; ``judge_rate=False`` reports the rate held without a goal (the test
    suite's short run shares two cores with its own clients, so a rate there measures the
    neighbours; the command judges it)."""
    report = Report("load", command)
    with tempfile.TemporaryDirectory(prefix="gameai-stress-") as tmp, \
            private_redis(Path(tmp)) as redis:
        with ModelStore.from_url(redis.url) as store:
            seed_store(store, GAMES, versions=2, canary_weight=20)
        server = start_server(redis.url, log_dir=Path(tmp), games=GAMES, workers=workers,
                              extra=("--log-level", "warning"))
        try:
            boards = {g: live_boards(get_game(g), limit=2000) for g in GAMES}
            calls = mixed_calls(boards, models=MODELS, batch_every=40, batch_size=20)
            targets = [(server.http_port, server.grpc_port)]
            probe = TrafficRun(targets, calls, processes=processes, concurrency=concurrency,
                               seconds=probe_seconds).wait(probe_seconds + 60)
            maximum = sum(a.ok for a in probe) / probe_seconds
            target = share * maximum
            samples: list[tuple[float, int, int]] = []
            stop = threading.Event()
            sampler = threading.Thread(target=_sample_process,
                                       args=(server, samples, stop), daemon=True)
            counted_before = _server_count(server)
            started = time.monotonic()
            sampler.start()
            answers = TrafficRun(targets, calls, processes=processes, concurrency=concurrency,
                                 rate=target, seconds=seconds).wait(seconds + 60)
            stop.set()
            sampler.join()
            counted = _server_count(server) - counted_before
            _judge(report, answers, probe, samples, started, seconds, maximum, target,
                   counted, workers, judge_rate)
        finally:
            server.terminate()
    return report


def _sample_process(server: ServerProcess, samples: list[tuple[float, int, int]],
                    stop: threading.Event) -> None:
    while not stop.is_set():
        samples.append((time.monotonic(), server.rss_bytes(), server.fds()))
        stop.wait(0.25)


def _server_count(server: ServerProcess) -> float:
    return server.metric("gameai_requests_total") or 0.0


def _judge(report: Report, answers: list[Answer], probe: list[Answer],
           samples: list[tuple[float, int, int]], started: float, seconds: float,
           maximum: float, target: float, counted: float, workers: int,
           judge_rate: bool) -> None:
    failed = [a for a in answers if not a.ok]
    achieved = len(answers) / seconds
    report.note("maximum (closed loop, mixed)", f"{maximum:,.0f} req/s "
                f"({sum(not a.ok for a in probe)} errors while probing)")
    held = f"{achieved:,.0f} req/s for {seconds:g} s ({len(answers):,} requests)"
    if judge_rate:
        report.check("rate held", held, f">= 95% of target {target:,.0f} req/s",
                     achieved >= 0.95 * target)
    else:
        report.note("rate held (not judged)", f"{held}, target {target:,.0f} req/s")
    report.check("failed requests", f"{len(failed)}"
                 + (f" (first: {failed[0].error})" if failed else ""), "0", not failed)
    report.check("requests counted by the server", f"{counted:,.0f} of {len(answers):,}",
                 "all", counted == len(answers))
    mix = Counter(f"{a.transport} {a.method}" for a in answers)
    report.note("mix", ", ".join(f"{k} {v:,}" for k, v in sorted(mix.items())))
    versions = Counter(a.version for a in answers if a.ok)
    report.note("answering versions",
                ", ".join(f"v{k}: {v:,}" for k, v in sorted(versions.items())))
    for transport in ("grpc", "rest"):
        lat = [a.latency * 1e3 for a in answers if a.transport == transport and a.ok
               and a.method != "EvaluateBatch"]
        report.note(f"{transport} latency p50 / p99 (one board)",
                    f"{percentile(lat, 50):.2f} / {percentile(lat, 99):.2f} ms")
    batch = [a.latency * 1e3 for a in answers if a.ok and a.method == "EvaluateBatch"]
    report.note("batch (20 boards) latency p50 / p99",
                f"{percentile(batch, 50):.2f} / {percentile(batch, 99):.2f} ms")
    warm = started + max(2.0, 0.2 * seconds)
    after = [s for s in samples if s[0] >= warm]
    if len(after) < 4:
        report.check("memory and descriptors sampled", f"{len(after)} samples", ">= 4", False)
        return
    window = max(1, len(after) // 10)
    rss_start = max(s[1] for s in after[:window])
    rss_end = max(s[1] for s in after[-window:])
    growth = (rss_end - rss_start) / rss_start
    report.check(f"resident memory ({workers} workers + parent)",
                 f"{rss_start / 2**20:.1f} -> {rss_end / 2**20:.1f} MiB ({growth:+.1%})",
                 f"< {MAX_RSS_GROWTH:.0%} growth after warm-up", growth < MAX_RSS_GROWTH)
    fd_start = max(s[2] for s in after[:window])
    fd_end = max(s[2] for s in after[-window:])
    report.check("open file descriptors", f"{fd_start} -> {fd_end}",
                 f"growth <= {MAX_FD_GROWTH}", fd_end - fd_start <= MAX_FD_GROWTH)
    report.figures.update(maximum=maximum, target=target, achieved=achieved,
                          requests=len(answers), failed=len(failed), rss_start=rss_start,
                          rss_end=rss_end, fd_start=fd_start, fd_end=fd_end)
