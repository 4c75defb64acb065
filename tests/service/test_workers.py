"""Several worker processes share the ports (SO_REUSEPORT) and one merged /metrics."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import grpc
import httpx
import pytest

from gameai.models import TableModel
from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.store import RedisServer
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
