"""``gameai stress rollouts``: rollouts under traffic on two servers sharing one Redis.

Two ``gameai serve`` processes follow one private Redis while a client process sends
best-move and evaluate requests (gRPC and REST, production track, sticky client ids) to
both. Meanwhile, ``--cycles`` times (20): publish a new version, send it a canary share,
promote it, take the canary to 0%, and roll production back. After every change the
suite polls both servers until each serves the new state.

Goals: no failed request; every answer names a version that was live (production, or the
canary at a weight above 0) on the server that answered at some moment while the request
was in flight; both servers switch within a second of each change.

An answer is judged against the states the store went through: state ``k`` is in force on
server ``j`` from the moment its change was sent until server ``j`` was seen serving
state ``k + 1``. A version published but never made live must never answer.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from gameai.games import get_game
from gameai.games.mnk.positions import live_boards
from gameai.models import TableModel
from gameai.store import ModelStore
from gameai.stress.harness import (
    ServerProcess,
    percentile,
    perfect_model,
    private_redis,
    start_server,
    variant,
)
from gameai.stress.report import Report
from gameai.stress.traffic import Answer, TrafficRun, mixed_calls

WEIGHTS = (10, 25, 50, 75)
SWITCH_LIMIT = 1.0


@dataclass(frozen=True)
class State:
    """What the store says after a change, and when the change was made."""

    what: str
    production: int
    canary: int | None
    weight: int
    sent: float  # just before the store call
    done: float  # when it returned

    def live(self) -> set[int]:
        return {self.production} | ({self.canary} if self.canary and self.weight else set())


def run(seconds: float = 20.0, *, cycles: int = 20, rate: float = 300.0,
        command: str = "gameai stress rollouts") -> Report:
    report = Report("rollouts", command)
    dwell = max(0.05, seconds / (cycles * 5))
    with tempfile.TemporaryDirectory(prefix="gameai-stress-") as tmp, \
            private_redis(Path(tmp)) as redis, ModelStore.from_url(redis.url) as store:
        model = perfect_model()
        first = store.publish(variant(model, 0), by="stress").version
        store.set_alias(game="tictactoe", alias="production", version=first, by="stress")
        servers = [start_server(redis.url, log_dir=Path(tmp), workers=1,
                                extra=("--log-level", "warning")) for _ in range(2)]
        try:
            calls = mixed_calls({"tictactoe": live_boards(get_game("tictactoe"), limit=2000)},
                                models=("", "production"))
            traffic = TrafficRun([(s.http_port, s.grpc_port) for s in servers], calls,
                                 concurrency=8, rate=rate)
            states = [State("start", first, None, 0, float("-inf"), float("-inf"))]
            seen: list[list[float]] = [[float("-inf")] * len(servers)]
            published: list[int] = [first]
            try:
                time.sleep(0.5)
                for i in range(cycles):
                    _cycle(store, model, i, servers, states, seen, published, dwell)
                time.sleep(0.5)
            finally:
                answers = traffic.stop()
            _judge(report, answers, states, seen, published, len(servers))
        finally:
            for server in servers:
                server.terminate()
    return report


def _cycle(store: ModelStore, model: TableModel, i: int, servers: list[ServerProcess],
           states: list[State], seen: list[list[float]], published: list[int],
           dwell: float) -> None:
    game = "tictactoe"
    before = states[-1]
    fresh = store.publish(variant(model, i + 1), by="stress").version
    published.append(fresh)
    time.sleep(dwell)  # traffic flows while a version exists that is not live
    weight = WEIGHTS[i % len(WEIGHTS)]
    steps = [
        (f"canary v{fresh} at {weight}%", lambda: store.set_canary(
            game=game, version=fresh, weight=weight, by="stress"),
         before.production, fresh, weight),
        (f"promote v{fresh}", lambda: store.set_alias(
            game=game, alias="production", version=fresh, by="stress"), fresh, fresh, weight),
        ("canary to 0%", lambda: store.set_canary(game=game, version=None, weight=0,
                                                    by="stress"), fresh, fresh, 0),
        ("roll back production", lambda: store.rollback(game=game, alias="production",
                                                        by="stress"),
         before.production, fresh, 0),
    ]
    for what, change, production, canary, w in steps:
        sent = time.monotonic()
        change()
        done = time.monotonic()
        states.append(State(what, production, canary, w, sent, done))
        seen.append([_wait_for(server, production, canary, w) for server in servers])
        time.sleep(dwell)


def _wait_for(server: ServerProcess, production: int, canary: int | None, weight: int,
              timeout: float = 10.0) -> float:
    """When the server was first seen serving this state (``inf`` if never)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        aliases, served_weight = server.served_aliases()
        if aliases.get("production") == production and served_weight == weight and (
                canary is None or aliases.get("canary") == canary):
            return time.monotonic()
        time.sleep(0.005)
    return float("inf")


def _valid(answer: Answer, states: list[State], seen: list[list[float]]) -> bool:
    """Whether a state in force on the answering server while the request was in flight
    had the answering version live."""
    j = answer.server
    for k, state in enumerate(states):
        start = state.sent
        end = seen[k + 1][j] if k + 1 < len(states) else float("inf")
        if start <= answer.done and end >= answer.sent and answer.version in state.live():
            return True
    return False


def _judge(report: Report, answers: list[Answer], states: list[State],
           seen: list[list[float]], published: list[int], servers: int) -> None:
    failed = [a for a in answers if not a.ok]
    report.check("requests during the rollouts", f"{len(answers):,} answered, "
                 f"{len(failed)} failed" + (f" (first: {failed[0].error})" if failed else ""),
                 "0 failed", not failed and len(answers) > 0)
    changes = Counter(s.what.split(" v")[0].split(" at")[0] for s in states[1:])
    report.note("changes made", ", ".join(f"{k}: {v}" for k, v in changes.items())
                + f"; {len(published) - 1} versions published under traffic")
    invalid = [a for a in answers if a.ok and not _valid(a, states, seen)]
    report.check("answers from a version live at that moment",
                 f"{len(answers) - len(failed) - len(invalid):,} of {len(answers) - len(failed):,}"
                 + (f" (first stray: v{invalid[0].version} via {invalid[0].transport})"
                    if invalid else ""), "all", not invalid)
    never_live = set(published) - {v for s in states for v in s.live()}
    stray = [a for a in answers if a.version in never_live]
    report.check("answers from versions never made live", len(stray), "0", not stray)
    lags = [seen[k][j] - states[k].done for k in range(1, len(states)) for j in range(servers)]
    worst = max(lags) if lags else float("inf")
    report.check(f"switch time of {servers} servers after each of {len(states) - 1} changes",
                 f"p50 {percentile(lags, 50) * 1e3:.0f} ms, max {worst * 1e3:.0f} ms",
                 f"every one < {SWITCH_LIMIT:g} s", worst < SWITCH_LIMIT)
    versions = Counter(a.version for a in answers if a.ok)
    report.note("answers per version", ", ".join(f"v{v}: {n:,}" for v, n in
                                                  sorted(versions.items())))
    report.figures.update(answers=len(answers), failed=len(failed), invalid=len(invalid),
                          changes=len(states) - 1, switch_p50=percentile(lags, 50),
                          switch_max=worst)
