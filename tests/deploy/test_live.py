"""The running system: ``gameai up`` starts a real embedded Redis, trainer and server on
free loopback ports; a real Prometheus scrapes them with the deployed jobs and alert rules,
and every dashboard query and alert expression is run against it. Ctrl-C stops it all,
and a second run serves the stored model at once.

The tests of this module share one ``gameai up`` and run in file order; the last one stops
it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import httpx
import pytest

from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.store.embedded import free_port
from tests.deploy.conftest import DEPLOY, alert_rules_of
from tests.deploy.prometheus_server import PrometheusServer, loopback_config
from tests.deploy.promql import for_prometheus
from tests.deploy.test_grafana import queries

pytestmark = pytest.mark.slow

# Queries that are rightly empty on a healthy system: they count failures or changes.
EMPTY_WHEN_HEALTHY = {
    "Server error ratio", "Server error ratio by transport and method", "Alias changes",
    # parallel self-play's figures: a trainer with one actor (gameai up's) has none
    "Games/s per actor", "Cluster", "Merge lag and staleness",
    # a shadow test's figures: none until an operator shadows a candidate
    "Shadow test: agreement and optimal moves", "Shadow traffic",
    # proofs written to the shared table: only a game with an exact budget (Connect Four)
    # writes there, and this stack serves tic-tac-toe (tests/service/test_exact.py checks
    # the metrics on a Connect Four server)
    "Shared table of proved positions",
}


@dataclass
class Up:
    """A running ``gameai up`` and what it printed."""

    process: subprocess.Popen[str]
    http: int
    grpc: int
    metrics: int
    data_dir: Path
    output: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(self.output)

    def wait_for(self, line: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not any(line in seen for seen in self.output):
            if self.process.poll() is not None:
                time.sleep(0.2)  # let the reader thread catch the last lines
                raise AssertionError(f"gameai up exited {self.process.returncode}:\n{self.text}")
            assert time.monotonic() < deadline, f"no {line!r} after {timeout:.0f} s:\n{self.text}"
            time.sleep(0.05)

    def stop(self, timeout: float = 60) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout)


def start_up(data_dir: Path, *extra: str, metrics_port: int | None = None) -> Up:
    # PYTHONUNBUFFERED is not set in a user's shell: up must flush what it prints itself.
    env = {k: v for k, v in os.environ.items()
           if k not in ("GAMEAI_STORE_URL", "GAMEAI_STORE_URL_FILE", "PYTHONUNBUFFERED")}
    up = Up(subprocess.Popen(
        [sys.executable, "-m", "gameai", "up", "--http-port", str(free_port()),
         "--grpc-port", str(free_port()), "--metrics-port", str(metrics_port or free_port()),
         "--data-dir", str(data_dir), *extra], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True, env=env, start_new_session=True),
        http=0, grpc=0, metrics=0, data_dir=data_dir)
    args = up.process.args
    assert isinstance(args, list)
    up.http, up.grpc, up.metrics = (int(args[args.index(f)+1]) for f in
                                    ("--http-port", "--grpc-port", "--metrics-port"))

    def read() -> None:
        assert up.process.stdout is not None
        for line in up.process.stdout:
            up.output.append(line.rstrip("\n"))
    threading.Thread(target=read, daemon=True).start()
    return up


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Up]:
    running = start_up(tmp_path_factory.mktemp("up"))
    try:
        running.wait_for("gameai is up:", timeout=300)
        yield running
    finally:
        if running.process.poll() is None:
            running.process.kill()
            running.process.wait()


def traffic(up: Up) -> None:
    """Requests of every kind on both transports, good and bad."""
    with httpx.Client(base_url=f"http://127.0.0.1:{up.http}", timeout=10) as client:
        for board in ("X--|-O-|---", "---|---|---", "XO-|-X-|---"):
            assert client.post("/v1/games/tictactoe/best-move", json={"board": board}
                               ).status_code == 200
            assert client.post("/v1/games/tictactoe/evaluate", json={"board": board}
                               ).status_code == 200
        assert client.post("/v1/games/tictactoe/evaluate-batch",
                           json={"boards": ["---|---|---"] * 50}).status_code == 200
        assert client.post("/v1/games/tictactoe/best-move", json={"board": "XXX|---"}
                           ).status_code == 422
        assert client.get("/v1/games").status_code == 200
    with grpc.insecure_channel(f"127.0.0.1:{up.grpc}") as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        stub.BestMove(move_pb2.BestMoveRequest(game="tictactoe", board="X--|-O-|---"), timeout=5)
        with pytest.raises(grpc.RpcError) as bad:
            stub.BestMove(move_pb2.BestMoveRequest(game="tictactoe", board="XXXX"), timeout=5)
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_up_prints_the_urls_and_serves_a_model(up: Up) -> None:
    http = f"http://127.0.0.1:{up.http}"
    for url in (f"{http}/", f"{http}/docs", f"127.0.0.1:{up.grpc}", f"{http}/metrics",
                f"http://127.0.0.1:{up.metrics}/metrics"):
        assert url in up.text
    assert httpx.get(f"{http}/readyz").status_code == 200
    assert "<html" in httpx.get(f"{http}/").text.lower()
    assert httpx.get(f"{http}/docs").status_code == 200
    answer = httpx.post(f"{http}/v1/games/tictactoe/best-move",
                        json={"board": "XX-|OO-|---"}).json()
    assert answer["model_version"] >= 1
    assert (answer["move"]["row"], answer["move"]["col"]) == (0, 2)  # win at once


def test_image_healthcheck_probes_both_real_roles(up: Up) -> None:
    script = DEPLOY / "docker" / "healthcheck.py"
    for argv in (["gameai", "serve", "--http-port", str(up.http)],
                 ["gameai", "trainer", "--metrics-port", str(up.metrics)]):
        env = {**os.environ, "GAMEAI_HEALTHCHECK_URL": ""}
        code = (f"import sys; sys.path.insert(0, {str(script.parent)!r}); import healthcheck; "
                f"sys.exit(healthcheck.main([healthcheck.health_url({argv!r}, {{}})]))")
        assert subprocess.run([sys.executable, "-c", code], env=env, timeout=30).returncode == 0


def test_prometheus_runs_every_dashboard_query_and_alert(up: Up, tmp_path: Path) -> None:
    config = loopback_config({"gameai-server": [f"127.0.0.1:{up.http}"],
                              "gameai-trainer": [f"127.0.0.1:{up.metrics}"]})
    with PrometheusServer(config, tmp_path) as prom:
        traffic(up)
        prom.wait_until(lambda: _scrapes(prom) >= 4, "scraping", 60)
        traffic(up)
        prom.wait_until(lambda: _scrapes(prom) >= 8, "scraping after traffic", 60)

        targets = prom.api("targets")["activeTargets"]
        assert {(t["labels"]["job"], t["health"]) for t in targets} == {
            ("gameai-server", "up"), ("gameai-trainer", "up")}, json.dumps(targets)[:2000]

        empty = []
        for path in sorted((DEPLOY / "grafana" / "dashboards").glob("*.json")):
            board = json.loads(path.read_text())
            for where, query in queries(board):
                if query.startswith("label_values("):
                    metric, label = query[len("label_values("):-1].split(", ")
                    answer = prom.api(f"label/{label}/values?match[]={metric}")
                    assert "tictactoe" in answer, where
                    continue
                answer = prom.query(for_prometheus(query, rate_interval="1m"))
                assert answer["status"] == "success", f"{where}: {answer}"
                if not answer["data"]["result"]:
                    empty.append(where)
        unexpected = [w for w in empty if w.split(" / ")[1].removeprefix("annotation ")
                      not in EMPTY_WHEN_HEALTHY]
        assert not unexpected, f"no data for: {unexpected}"

        for rule in alert_rules_of(DEPLOY / "prometheus" / "rules"):
            answer = prom.query(rule["expr"])
            assert answer["status"] == "success", f"{rule['alert']}: {answer}"
        prom.wait_until(lambda: _rules_evaluated(prom), "evaluating the rules", 30)
        for group in prom.api("rules")["groups"]:
            for rule in group["rules"]:
                assert rule["health"] == "ok", f"{rule['name']}: {rule.get('lastError')}"
        firing = [a for a in prom.api("alerts")["alerts"] if a["state"] == "firing"]
        assert not firing, firing


def _scrapes(prom: PrometheusServer) -> int:
    answer = prom.query('min(count_over_time(up{job=~"gameai-.*"}[5m]))')
    result = answer.get("data", {}).get("result", []) if answer else []
    return int(float(result[0]["value"][1])) if result else 0


def _rules_evaluated(prom: PrometheusServer) -> bool:
    groups = prom.api("rules")["groups"]
    return all(r.get("lastEvaluation", "").startswith("20") for g in groups for r in g["rules"])


def test_ctrl_c_stops_everything_and_a_second_run_reuses_the_model(up: Up) -> None:
    version = httpx.get(f"http://127.0.0.1:{up.http}/v1/games/tictactoe/models").json()
    assert up.stop() == 0, up.text
    assert "stopping" in up.text
    socket = up.data_dir / "redis" / "redis.sock"
    assert not socket.exists(), "the embedded Redis is still running"
    for port in (up.http, up.grpc, up.metrics):
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)

    again = start_up(up.data_dir)
    try:
        again.wait_for("gameai is up:", timeout=120)
        assert "production is version" in again.text and "reused" in again.text
        served = httpx.get(f"http://127.0.0.1:{again.http}/v1/games/tictactoe/models").json()
        assert served["aliases"]["production"] >= version["aliases"]["production"]
        assert httpx.get(f"http://127.0.0.1:{again.http}/readyz").status_code == 200
        assert again.stop() == 0, again.text
    finally:
        if again.process.poll() is None:
            again.process.kill()
