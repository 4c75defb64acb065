"""Metrics: names and labels of docs/contracts.md, read back from the server's own registry,
checked by promtool and scraped by a real Prometheus."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import grpc
import httpx
import pytest

from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.store import ModelStore
from tests.deploy.prometheus_server import PrometheusServer
from tests.service.conftest import RunningServer


def test_requests_are_counted_by_transport_method_game_version_and_code(
        server: RunningServer) -> None:
    metric = server.metrics.registry.get_sample_value
    rest = {"transport": "rest", "method": "BestMove", "game": "tictactoe", "version": "1",
            "code": "200"}
    grpc_ok = {"transport": "grpc", "method": "BestMove", "game": "tictactoe", "version": "1",
               "code": "OK"}
    before = (metric("gameai_requests_total", rest) or 0,
              metric("gameai_requests_total", grpc_ok) or 0)
    for _ in range(3):
        r = httpx.post(f"{server.http}/v1/games/tictactoe/best-move",
                       json={"board": "---|---|---"})
        assert r.status_code == 200
    with grpc.insecure_channel(server.grpc) as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        for _ in range(2):
            stub.BestMove(move_pb2.BestMoveRequest(game="tictactoe", board="---|---|---"))
        with pytest.raises(grpc.RpcError):
            stub.BestMove(move_pb2.BestMoveRequest(game="go", board="-"))
    httpx.post(f"{server.http}/v1/games/not-a-game/best-move", json={"board": "-"})
    # the middleware counts a request once its answer is sent, which the client may see
    # a moment before: wait for the last one
    deadline = time.monotonic() + 5
    while metric("gameai_requests_total", {"transport": "rest", "method": "BestMove",
                                           "game": "", "version": "", "code": "404"}) is None \
            and time.monotonic() < deadline:
        time.sleep(0.01)
    assert metric("gameai_requests_total", rest) == before[0] + 3
    assert metric("gameai_requests_total", grpc_ok) == before[1] + 2
    # an unknown game's name never becomes a label value
    assert metric("gameai_requests_total", {"transport": "grpc", "method": "BestMove",
                                            "game": "", "version": "", "code": "NOT_FOUND"})
    assert metric("gameai_requests_total", {"transport": "rest", "method": "BestMove",
                                            "game": "", "version": "", "code": "404"})
    assert metric("gameai_request_duration_seconds_bucket",
                  {"transport": "rest", "method": "BestMove", "le": "0.0001"}) is not None
    assert metric("gameai_request_duration_seconds_count",
                  {"transport": "grpc", "method": "BestMove"}) >= 3
    assert metric("gameai_inflight_requests", {"transport": "rest"}) == 0
    assert metric("gameai_alias_version", {"game": "tictactoe", "alias": "production"}) == 1
    assert metric("gameai_models_loaded", {"game": "tictactoe"}) == 1
    assert metric("gameai_model_loads_total", {"game": "tictactoe", "result": "ok"}) == 1
    assert metric("gameai_store_up") == 1 and metric("gameai_ready") == 1
    assert metric("gameai_canary_weight", {"game": "tictactoe"}) == 0


def test_exposition_passes_promtool(server: RunningServer) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian: prometheus)")
    text = httpx.get(f"{server.http}/metrics").text
    for name in ("gameai_requests_total", "gameai_request_duration_seconds_bucket",
                 "gameai_store_up", "gameai_ready", "gameai_store_reconnects_total"):
        assert name in text
    checked = subprocess.run([promtool, "check", "metrics"], input=text, text=True,
                             capture_output=True, timeout=30)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.slow
def test_a_real_prometheus_scrapes_the_server(server: RunningServer, tmp_path: Path) -> None:
    if shutil.which("prometheus") is None:
        pytest.skip("prometheus is not installed")
    config = {"global": {"scrape_interval": "1s"},
              "scrape_configs": [{"job_name": "gameai", "static_configs": [
                  {"targets": [f"127.0.0.1:{server.ports.http}"]}]}]}
    with PrometheusServer(config, tmp_path) as prom:
        httpx.post(f"{server.http}/v1/games/tictactoe/best-move", json={"board": "---|---|---"})
        query = ('sum(gameai_requests_total{transport="rest"}) > 0 '
                 'and on() gameai_store_up == 1')
        prom.wait_until(lambda: (prom.query(query) or {}).get("data", {}).get("result"),
                        "seeing the server's request counter", 30)


def test_load_failures_count_from_zero(server: RunningServer) -> None:
    """A counter child created at its first increment has no increase() in Prometheus, so
    the GameaiModelLoadFailures alert would miss the first corrupt version."""
    metric = server.metrics.registry.get_sample_value
    for result in ("corrupt", "missing", "error"):
        assert metric("gameai_model_loads_total",
                      {"game": "tictactoe", "result": result}) == 0


def test_ready_stays_0_while_draining_when_the_store_changes(
        module_store: ModelStore, start_server: Callable[..., RunningServer]) -> None:
    """The gauge says what /readyz says; only the server knows it is draining."""
    running = start_server(module_store)
    metric = running.metrics.registry.get_sample_value
    assert metric("gameai_ready") == 1
    stopping = asyncio.run_coroutine_threadsafe(running.server.stop(grace=3, drain=1),
                                                running.loop)
    while not running.server.runtime.draining:
        time.sleep(0.01)
    running.registry.refresh()  # as the follower does when the store changes
    assert metric("gameai_ready") == 0
    assert httpx.get(f"{running.http}/readyz").status_code == 503
    stopping.result(10)
