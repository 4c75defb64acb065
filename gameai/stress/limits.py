"""One greedy client must not starve the others.

A polite client sends one best-move at a time at 50 per second per transport, first
alone (the baseline), then while a greedy client keeps 16 connections busy with
10,000-board batches (REST and gRPC, as fast as the server answers them). The polite
client's latency and errors are compared between the two runs.
"""

from __future__ import annotations

from pathlib import Path

from gameai.games import get_game
from gameai.games.mnk.positions import live_boards
from gameai.store import ModelStore
from gameai.stress.harness import percentile, perfect_model, start_server, variant
from gameai.stress.report import Report
from gameai.stress.traffic import Answer, Call, TrafficRun, mixed_calls

POLITE_P99_LIMIT = 0.25  # seconds: the p99 alert threshold of deploy/prometheus/rules


def fairness(report: Report, work: Path, url: str, seconds: float) -> None:
    with ModelStore.from_url(url, prefix="fair") as store:
        version = store.publish(variant(perfect_model(), 0), by="stress").version
        store.set_alias(game="tictactoe", alias="production", version=version, by="stress")
    server = start_server(url, log_dir=work / "fair", prefix="fair", workers=2,
                          extra=("--log-level", "warning"))
    try:
        boards = live_boards(get_game("tictactoe"), limit=2000)
        targets = [(server.http_port, server.grpc_port)]
        polite_calls = mixed_calls({"tictactoe": boards}, methods=("BestMove",))
        alone = TrafficRun(targets, polite_calls, concurrency=2, rate=100,
                           seconds=seconds).wait(seconds + 60)
        batch = tuple((boards * 3)[:10_000])
        greedy = TrafficRun(targets, [Call(t, "EvaluateBatch", "tictactoe", batch)
                                      for t in ("rest", "grpc")], concurrency=16)
        greedy.wait_for(16)
        crowded = TrafficRun(targets, polite_calls, concurrency=2, rate=100,
                             seconds=seconds).wait(seconds + 60)
        hog = greedy.stop()
    finally:
        server.terminate()
    _judge(report, alone, crowded, hog, seconds)


def _judge(report: Report, alone: list[Answer], crowded: list[Answer], hog: list[Answer],
           seconds: float) -> None:
    def summary(answers: list[Answer]) -> tuple[float, float, int]:
        lat = [a.latency for a in answers if a.ok]
        return percentile(lat, 50), percentile(lat, 99), sum(not a.ok for a in answers)

    p50, p99, errors = summary(alone)
    c50, c99, c_errors = summary(crowded)
    served = sum(a.ok for a in hog)
    hog_errors = sorted({a.error.split(" ")[0] for a in hog if not a.ok})
    span = max(a.done for a in hog) - min(a.sent for a in hog) if hog else 1.0
    report.note("greedy client: 16 connections of 10,000-board batches",
                f"{served:,} batches answered in {span:.1f} s "
                f"({served * 10_000 / span:,.0f} positions/s), "
                f"{len(hog) - served} refused ({', '.join(hog_errors) or 'none'})")
    report.check("polite client alone / next to the greedy one",
                 f"p50 {p50 * 1e3:.1f} / {c50 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} / "
                 f"{c99 * 1e3:.1f} ms, errors {errors} / {c_errors} "
                 f"({len(alone)} / {len(crowded)} requests)",
                 f"no errors; p99 < {POLITE_P99_LIMIT * 1e3:.0f} ms when crowded",
                 errors == 0 and c_errors == 0 and c99 < POLITE_P99_LIMIT and len(crowded) > 0)
