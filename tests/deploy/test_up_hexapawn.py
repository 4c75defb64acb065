"""``gameai up --games hexapawn``: a game that plugs in (examples/hexapawn) is learned by
the trainer worker, promoted through the gates and served over REST and gRPC, with no line
of gameai naming it."""

from __future__ import annotations

from pathlib import Path

import grpc
import httpx
import pytest

from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from tests.deploy.test_live import start_up

pytestmark = pytest.mark.slow


def test_up_learns_and_serves_hexapawn(tmp_path: Path) -> None:
    up = start_up(tmp_path / "data", "--games", "hexapawn")
    try:
        up.wait_for("gameai is up:", timeout=300)
        with httpx.Client(base_url=f"http://127.0.0.1:{up.http}", timeout=10) as client:
            listed = client.get("/v1/games").json()["games"]
            assert [(g["name"], g["start"], g["ready"]) for g in listed] == [
                ("hexapawn", "OOO|---|XXX", True)]
            answer = client.post("/v1/games/hexapawn/best-move", json={"moves": "8-5"})
            assert answer.status_code == 200, answer.text
            move = answer.json()["move"]
            assert move["index"] == 4 and move["from"]["index"] in (0, 2)  # O takes the pawn
            model = client.get("/v1/games/hexapawn/models/production").json()
        report = model["evaluation"]
        assert model["algorithm"] == "td" and report["game_value"] == "o_wins"
        assert report["losses_as_o"] == 0 and report["optimal_move_rate"] == 1.0
        with grpc.insecure_channel(f"127.0.0.1:{up.grpc}") as channel:
            best = move_pb2_grpc.MoveServiceStub(channel).BestMove(
                move_pb2.BestMoveRequest(game="hexapawn", board="OOO|---|XXX"))
        assert (best.move.from_index, best.move.index) == (7, 4)  # the longest defence
    finally:
        code = up.stop()
    assert code == 0, up.text
