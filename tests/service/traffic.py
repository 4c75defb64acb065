"""Steady client traffic on both transports, recording every answer (or failure)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import grpc
import httpx

from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc


@dataclass(frozen=True)
class Answer:
    at: float  # time.monotonic()
    transport: str
    version: int  # 0 when the request failed
    error: str = ""


class Traffic:
    """Best-move requests in a loop over REST and over gRPC until :meth:`stop`."""

    def __init__(self, http_url: str, grpc_target: str, *, board: str = "X--|-O-|---",
                 pause: float = 0.002) -> None:
        self.answers: list[Answer] = []
        self.board = board
        self.pause = pause
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._rest, args=(http_url,), daemon=True),
                         threading.Thread(target=self._grpc, args=(grpc_target,), daemon=True)]
        for thread in self._threads:
            thread.start()

    def _rest(self, url: str) -> None:
        with httpx.Client(base_url=url, timeout=5) as client:
            while not self._stop.is_set():
                try:
                    r = client.post("/v1/games/tictactoe/best-move", json={"board": self.board})
                    ok = r.status_code == 200
                    self._record("rest", r.json()["model_version"] if ok else 0,
                                 "" if ok else f"{r.status_code} {r.text}")
                except httpx.HTTPError as e:
                    self._record("rest", 0, repr(e))
                time.sleep(self.pause)

    def _grpc(self, target: str) -> None:
        with grpc.insecure_channel(target) as channel:
            stub = move_pb2_grpc.MoveServiceStub(channel)
            request = move_pb2.BestMoveRequest(game="tictactoe", board=self.board)
            while not self._stop.is_set():
                try:
                    self._record("grpc", stub.BestMove(request, timeout=5).model_version)
                except grpc.RpcError as e:
                    self._record("grpc", 0, f"{e.code()} {e.details()}")
                time.sleep(self.pause)

    def _record(self, transport: str, version: int, error: str = "") -> None:
        self.answers.append(Answer(time.monotonic(), transport, version, error))

    def stop(self) -> list[Answer]:
        self._stop.set()
        for thread in self._threads:
            thread.join(10)
        return self.answers

    def wait_for(self, count: int, timeout: float = 10) -> None:
        """Until ``count`` more answers have arrived on each transport."""
        deadline = time.monotonic() + timeout
        start = {t: self.count(t) for t in ("rest", "grpc")}
        while any(self.count(t) < start[t] + count for t in start):
            assert time.monotonic() < deadline, "traffic stalled"
            time.sleep(0.01)

    def count(self, transport: str) -> int:
        return sum(1 for a in list(self.answers) if a.transport == transport)
