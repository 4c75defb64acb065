"""Several worker processes share the ports (SO_REUSEPORT) and one merged /metrics."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from multiprocessing.synchronize import Event
from pathlib import Path

import grpc
import httpx
import pytest

from gameai.models import TableModel
from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.service.settings import Settings
from gameai.store import RedisServer
from gameai.store.embedded import free_port
from gameai.stress.harness import gameai_command
from tests.service.conftest import new_store
from tests.service.test_shutdown import start_serving


def counted(text: str, transport: str) -> float:
    pattern = re.compile(r'^gameai_requests_total\{([^}]*)\} (\S+)$', re.MULTILINE)
    return sum(float(value) for labels, value in pattern.findall(text)
               if f'transport="{transport}"' in labels and 'method="BestMove"' in labels)


@pytest.mark.slow
def test_two_workers_answer_and_merge_their_metrics(redis_server: RedisServer,
                                                    perfect: TableModel,
                                                    tmp_path: Path) -> None:
    store = new_store(redis_server.url)
    version = store.publish(perfect.to_bytes(), by="tests").version
    store.set_alias(game="tictactoe", alias="production", version=version, by="tests")
    process, http_port, grpc_port = start_serving(redis_server.url, store.keys.prefix,
                                                  tmp_path, "--workers", "2",
                                                  "--drain-seconds", "0")
    try:
        base = f"http://127.0.0.1:{http_port}"
        for _ in range(30):  # a new connection each: the kernel spreads them over workers
            r = httpx.post(f"{base}/v1/games/tictactoe/best-move", json={"board": "---|---|---"})
            assert r.status_code == 200 and r.json()["model_version"] == version
        with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            stub = move_pb2_grpc.MoveServiceStub(channel)
            for _ in range(10):
                stub.BestMove(move_pb2.BestMoveRequest(game="tictactoe", board="---|---|---"))
        for _ in range(5):  # whichever worker answers the scrape sees every worker's count
            text = httpx.get(f"{base}/metrics").text
            assert counted(text, "rest") == 30 and counted(text, "grpc") == 10
            assert re.search(r'^gameai_models_loaded\{game="tictactoe"\} 1\.0$', text, re.M)
            assert re.search(r"^gameai_store_up 1\.0$", text, re.M)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
        store.close()


def still_starting(settings: Settings, marker_dir: str, handles_signals: Event) -> None:
    """A worker that has not got as far as handling signals: SIGTERM kills it."""
    Path(marker_dir, str(os.getpid())).touch()
    time.sleep(60)


def handles_then_dies(settings: Settings, marker_dir: str, handles_signals: Event) -> None:
    """A worker that says it handles signals, and then dies of one."""
    handles_signals.set()
    Path(marker_dir, str(os.getpid())).touch()
    time.sleep(60)


def workers_exit_status(target: str, tmp_path: Path) -> int:
    """``run_workers`` (two workers running ``target``) in a process of its own, sent
    SIGTERM once both workers run: its exit status."""
    script = ("import sys\n"
              "from gameai.service.settings import Settings\n"
              "from gameai.service.workers import run_workers\n"
              f"from tests.service.test_workers import {target}\n"
              f"sys.exit(run_workers(Settings(workers=2), {str(tmp_path)!r}, {target}))\n")
    parent = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).parents[2])
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.iterdir())) < 2:
            assert parent.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        parent.send_signal(signal.SIGTERM)
        return parent.wait(timeout=30)
    finally:
        if parent.poll() is None:
            parent.kill()


def test_a_worker_stopped_while_starting_is_a_clean_stop(tmp_path: Path) -> None:
    # SIGTERM reaching a worker still importing (the CI run that found it: exit status 15)
    assert workers_exit_status("still_starting", tmp_path) == 0


def test_a_worker_that_handles_signals_and_dies_of_one_fails_the_server(tmp_path: Path) -> None:
    assert workers_exit_status("handles_then_dies", tmp_path) == signal.SIGTERM


@pytest.mark.slow
def test_sigterm_while_the_workers_start_exits_cleanly(redis_server: RedisServer,
                                                        tmp_path: Path) -> None:
    """An orchestrator may stop a pod that has only just started: ``gameai serve`` exits 0
    at once, not with the status of a worker killed mid-import."""
    command = gameai_command("serve", "--store", redis_server.url, "--store-prefix", "early",
                             "--http-port", str(free_port()), "--grpc-port", str(free_port()),
                             "--workers", "2")
    with open(tmp_path / "serve.log", "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
        deadline = time.monotonic() + 60
        while len(children.read_text().split()) < 3:  # two workers and the resource tracker
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        time.sleep(0.1)  # the parent forwards signals from its next statement on
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0, (tmp_path / "serve.log").read_text()
    finally:
        if process.poll() is None:
            process.kill()
