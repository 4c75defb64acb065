"""The background lane: batches run one at a time per process, off the event loop, with a
bounded queue, so one client's batches cannot starve everybody's one-board requests."""

from __future__ import annotations

import threading
import time

import grpc
import httpx

from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.service.lanes import BACKGROUND, QUEUE
from gameai.store import ModelStore
from tests.service.conftest import RunningServer

BATCH = {"boards": ["X--|-O-|---", "---|---|---"]}
BATCH_QUEUE = QUEUE[BACKGROUND]


def test_waiting_batches_are_bounded_and_moves_still_answer(module_store: ModelStore,
                                                            start_server) -> None:
    running: RunningServer = start_server(module_store)
    runtime = running.server.runtime
    lanes = runtime.lanes
    lanes.running[BACKGROUND] += 1  # a batch that never ends holds the lane
    codes: list[int] = []

    def batch() -> None:
        codes.append(httpx.post(f"{running.http}/v1/games/tictactoe/evaluate-batch",
                                json=BATCH, timeout=30).status_code)
    waiting = [threading.Thread(target=batch) for _ in range(BATCH_QUEUE)]
    for thread in waiting:
        thread.start()
    deadline = time.monotonic() + 10
    while lanes.waiting(BACKGROUND) < BATCH_QUEUE:
        assert time.monotonic() < deadline, f"{lanes.waiting(BACKGROUND)} waiting"
        time.sleep(0.01)

    started = time.monotonic()
    move = httpx.post(f"{running.http}/v1/games/tictactoe/best-move",
                      json={"board": "X--|-O-|---"}, timeout=5)
    assert move.status_code == 200 and time.monotonic() - started < 1
    full = httpx.post(f"{running.http}/v1/games/tictactoe/evaluate-batch", json=BATCH)
    assert full.status_code == 429
    assert full.json()["error"]["code"] == "RESOURCE_EXHAUSTED"
    assert full.json()["error"]["field"] == "boards"
    with grpc.insecure_channel(running.grpc) as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        try:
            stub.EvaluateBatch(move_pb2.EvaluateBatchRequest(game="tictactoe",
                                                             boards=BATCH["boards"]), timeout=5)
            raise AssertionError("a batch past the queue was accepted")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert e.details().startswith("boards:")

    running.loop.call_soon_threadsafe(lanes._release, BACKGROUND)
    for thread in waiting:
        thread.join(30)
    assert codes == [200] * BATCH_QUEUE
