"""SIGTERM on a real ``gameai serve`` process: NOT_SERVING first, in-flight requests
complete, exit within the grace period."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from gameai.models import TableModel
from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.store import RedisServer
from gameai.stress import harness
from tests.service.conftest import new_store

# big enough that each request takes a while, so some are in flight when the signal comes
BOARDS = ["X--|-O-|---", "---|---|---", "XO-|---|---", "X-O|-X-|---"] * 12_500


def start_serving(url: str, prefix: str, log_dir: Path,
                  *extra: str) -> tuple[subprocess.Popen[bytes], int, int]:
    """``gameai serve`` with a 5 s grace period, ready: its process and ports."""
    server = harness.start_server(url, log_dir=log_dir, prefix=prefix,
                                  extra=("--grace-seconds", "5", "--log-level", "warning",
                                         *extra))
    return server.process, server.http_port, server.grpc_port


def serving_some(http_port: int) -> bool:
    """True while the server counts a request of either transport in flight."""
    text = httpx.get(f"http://127.0.0.1:{http_port}/metrics", timeout=5).text
    counts = re.findall(r'^gameai_inflight_requests\{transport="\w+"\} (\S+)$', text, re.M)
    return any(float(count) > 0 for count in counts)


@pytest.mark.slow
def test_sigterm_drains_then_exits(redis_server: RedisServer, perfect: TableModel,
                                   tmp_path: Path) -> None:
    store = new_store(redis_server.url)
    version = store.publish(perfect.to_bytes(), by="tests").version
    store.set_alias(game="tictactoe", alias="production", version=version, by="tests")
    process, http_port, grpc_port = start_serving(redis_server.url, store.keys.prefix,
                                                  tmp_path, "--max-batch", "50000",
                                                  "--max-body-bytes", "2000000")
    channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
    statuses: list[int] = []
    watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))

    def follow() -> None:
        try:
            for answer in watch:
                statuses.append(answer.status)
        except grpc.RpcError:
            pass
    threading.Thread(target=follow, daemon=True).start()
    while not statuses:
        time.sleep(0.01)
    results: list[tuple[float, str]] = []

    def rest_batch() -> None:
        try:
            r = httpx.post(f"http://127.0.0.1:{http_port}/v1/games/tictactoe/evaluate-batch",
                           json={"boards": BOARDS}, timeout=10)
            results.append((time.monotonic(), str(r.status_code)))
        except httpx.ConnectError:
            results.append((time.monotonic(), "refused"))

    def grpc_batch() -> None:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        try:
            stub.EvaluateBatch(move_pb2.EvaluateBatchRequest(game="tictactoe", boards=BOARDS),
                               timeout=10)
            results.append((time.monotonic(), "OK"))
        except grpc.RpcError as e:
            results.append((time.monotonic(), e.code().name))

    clients = [threading.Thread(target=f) for f in (rest_batch, grpc_batch) * 3]
    for client in clients:
        client.start()
    # signal while the server is working on some of them (a fixed sleep let a fast machine
    # finish all six first)
    deadline = time.monotonic() + 10
    while not serving_some(http_port) and time.monotonic() < deadline:
        time.sleep(0.002)
    signalled = time.monotonic()
    process.send_signal(signal.SIGTERM)
    returncode = process.wait(timeout=10)
    exited = time.monotonic()
    for client in clients:
        client.join(10)
    channel.close()
    assert returncode == 0
    assert exited - signalled < 5  # within the grace period, not after it
    assert health_pb2.HealthCheckResponse.NOT_SERVING in statuses
    assert statuses[0] == health_pb2.HealthCheckResponse.SERVING
    # sent before the signal, so all complete: some after it, while draining
    assert sorted(code for _, code in results) == ["200"] * 3 + ["OK"] * 3, results
    assert any(at > signalled for at, _ in results)
    store.close()


@pytest.mark.slow
def test_an_open_health_watch_does_not_hold_the_shutdown(redis_server: RedisServer,
                                                         perfect: TableModel,
                                                         tmp_path: Path) -> None:
    """A Watch stream (a load balancer's) sees NOT_SERVING and then ends cleanly; before,
    it kept the server alive for the whole grace period and was then cancelled."""
    store = new_store(redis_server.url)
    version = store.publish(perfect.to_bytes(), by="tests").version
    store.set_alias(game="tictactoe", alias="production", version=version, by="tests")
    process, _, grpc_port = start_serving(redis_server.url, store.keys.prefix, tmp_path,
                                          "--drain-seconds", "0.5")
    statuses: list[int] = []
    ended: list[str] = []
    with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        watch = health_pb2_grpc.HealthStub(channel).Watch(
            health_pb2.HealthCheckRequest(service=""))

        def follow() -> None:
            try:
                statuses.extend(answer.status for answer in watch)
                ended.append("OK")
            except grpc.RpcError as e:
                ended.append(e.code().name)
        reader = threading.Thread(target=follow)
        reader.start()
        while not statuses:
            time.sleep(0.01)
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        returncode = process.wait(timeout=10)
        elapsed = time.monotonic() - signalled
        reader.join(5)
    assert returncode == 0
    assert elapsed < 2.5, f"{elapsed:.1f} s: the watch held the shutdown (grace is 5 s)"
    assert statuses == [health_pb2.HealthCheckResponse.SERVING,
                        health_pb2.HealthCheckResponse.NOT_SERVING]
    assert ended == ["OK"]
    store.close()
