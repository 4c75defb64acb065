"""``gameai up --games three-mens-morris``: the trainer worker learns the game by itself,
publishes and promotes a model that passes the gates, and the server answers moves that
carry their origin."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.deploy.test_live import start_up

pytestmark = pytest.mark.slow


def test_up_learns_and_serves_three_mens_morris(tmp_path: Path) -> None:
    up = start_up(tmp_path / "data", "--games", "three-mens-morris")
    try:
        up.wait_for("gameai is up:", timeout=300)
        with httpx.Client(base_url=f"http://127.0.0.1:{up.http}", timeout=10) as client:
            answer = client.post("/v1/games/three-mens-morris/best-move",
                                 json={"board": "XO-|XOX|O--", "to_move": "X"})
            assert answer.status_code == 200, answer.text
            move = answer.json()["move"]
            assert move["from"]["index"] in (0, 3, 5)  # one of X's pieces moves
            model = client.get("/v1/games/three-mens-morris/models/production").json()
        report = model["evaluation"]
        assert model["algorithm"] == "td" and report["game_value"] == "x_wins"
        assert report["losses_as_x"] == report["draws_as_x"] == 0  # X wins every line
        assert report["optimal_move_rate"] >= 0.95
    finally:
        code = up.stop()
    assert code == 0, up.text
