"""``gameai up`` refuses what cannot work with a message that says what to change, and
reports a child that dies instead of hanging. (The running system: test_live.py.)"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from gameai.models.ntuple import DEFAULT_DEPTH
from gameai.store.embedded import free_port


def up(tmp_path: Path, *args: str, env: dict[str, str] | None = None,
       timeout: float = 120) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if k not in ("GAMEAI_STORE_URL", "GAMEAI_STORE_URL_FILE")}
    ports = ["--http-port", str(free_port()), "--grpc-port", str(free_port()),
             "--metrics-port", str(free_port())]
    return subprocess.run([sys.executable, "-m", "gameai", "up", *ports, "--data-dir",
                           str(tmp_path / "data"), *args], capture_output=True, text=True,
                          env={**base, **(env or {})}, timeout=timeout)


def test_a_busy_port_is_named_with_its_flag(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = up(tmp_path, "--grpc-port", str(port))
    assert result.returncode == 1
    assert f"port {port} is in use: choose another with --grpc-port" in result.stderr
    assert "Traceback" not in result.stderr


def test_ports_must_differ(tmp_path: Path) -> None:
    result = up(tmp_path, "--http-port", "18123", "--grpc-port", "18123")
    assert result.returncode == 1 and "must differ" in result.stderr


def test_an_unreadable_store_url_file_is_named(tmp_path: Path) -> None:
    result = up(tmp_path, env={"GAMEAI_STORE_URL_FILE": str(tmp_path / "missing")})
    assert result.returncode == 2
    assert (f"GAMEAI_STORE_URL_FILE (--store-file): cannot read {tmp_path / 'missing'}"
            in result.stderr)


def test_an_unreachable_store_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    url = f"redis://:hidden-password@127.0.0.1:{free_port()}/0"
    result = up(tmp_path, env={"GAMEAI_STORE_URL": url})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "hidden-password" not in result.stderr + result.stdout
    assert f"cannot reach the store at {url.replace('hidden-password', '***')}" \
        in result.stderr


def test_a_child_that_dies_is_reported_with_its_log(tmp_path: Path) -> None:
    result = up(tmp_path, env={"GAMEAI_MAX_BATCH": "0"})  # the server refuses to start
    assert result.returncode == 1
    assert "the server exited with status 2" in result.stderr
    assert "GAMEAI_MAX_BATCH" in result.stderr
    assert not (tmp_path / "data" / "redis" / "redis.sock").exists()


def two_free_ports() -> int:
    """A port that is free and whose next port is free too (two trainers' metrics)."""
    for _ in range(100):
        port = free_port()
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise AssertionError("no two consecutive free ports")


@pytest.mark.slow
def test_up_trains_and_serves_every_game_it_is_given(tmp_path: Path) -> None:
    """``--games tictactoe,four-in-a-row``: a trainer per game (metrics on the port and the
    next), the server serving both, and up as soon as tictactoe has a model; four-in-a-row
    is served (not 404 'not served here') and reported as still training."""
    from tests.deploy.test_live import start_up

    metrics = two_free_ports()
    up = start_up(tmp_path / "data", "--games", "tictactoe,four-in-a-row",
                  metrics_port=metrics)
    try:
        up.wait_for("gameai is up:", timeout=300)
        assert f"http://127.0.0.1:{metrics + 1}/metrics (four-in-a-row)" in up.text
        assert "still training   four-in-a-row" in up.text
        with httpx.Client(base_url=f"http://127.0.0.1:{up.http}", timeout=10) as client:
            games = {g["name"]: g for g in client.get("/v1/games").json()["games"]}
            assert list(games) == ["tictactoe", "four-in-a-row"]
            assert games["tictactoe"]["ready"]
            answer = client.post("/v1/games/four-in-a-row/best-move",
                                 json={"board": "----|----|----|----"})
            if not games["four-in-a-row"]["ready"]:
                assert answer.status_code == 404
                assert "four-in-a-row has no production model" in answer.text
        for port, game in ((metrics, "tictactoe"), (metrics + 1, "four-in-a-row")):
            health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10)
            assert health.status_code == 200, game
        assert (tmp_path / "data" / "logs" / "trainer-four-in-a-row.log").is_file()
    finally:
        code = up.stop()
    assert code == 0, up.text


def test_an_unknown_game_is_refused_before_anything_starts(tmp_path: Path) -> None:
    result = up(tmp_path, "--games", "tictactoe,chess")
    assert result.returncode == 2 and "unknown game 'chess'" in result.stderr
    assert not (tmp_path / "data").exists()


def test_up_exact_serves_the_solvers_model_labelled_as_such(tmp_path: Path) -> None:
    """``--exact``: a game with no production version is served at once by the exact
    solver's model, published as algorithm 'solver' (not learned); its trainer idles."""
    from tests.deploy.test_live import start_up

    up = start_up(tmp_path / "data", "--games", "tictactoe", "--exact")
    try:
        up.wait_for("gameai is up:", timeout=300)
        assert ("tictactoe: serving the exact solver's model, version 1 (algorithm solver, "
                "not learned)") in up.text
        assert "still training" not in up.text
        with httpx.Client(base_url=f"http://127.0.0.1:{up.http}", timeout=10) as client:
            answer = client.post("/v1/games/tictactoe/best-move",
                                 json={"board": "XX-|OO-|---"}).json()
            assert answer["model_version"] == 1 and answer["move"]["index"] == 2
            model = client.get("/v1/games/tictactoe/models/1").json()
            assert "'algorithm': 'solver'" in str(model), model
    finally:
        code = up.stop()
    assert code == 0, up.text


@pytest.mark.slow
def test_up_serves_connect_fours_bundled_model_at_once(tmp_path: Path) -> None:
    """An empty store: ``up --games connect-four`` serves the bundled network as version 1
    (its bytes, the manifest's sha256), the levels' calibration and judged figures are its
    own, and the trainer goes on from it (warm start from production, with its recipe)."""
    import hashlib

    from gameai.models import load_model
    from gameai.models.bundled import bundled
    from tests.deploy.test_live import start_up

    entry = bundled("connect-four")
    assert entry is not None
    up = start_up(tmp_path / "data", "--games", "connect-four")
    try:
        up.wait_for("gameai is up:", timeout=300)
        assert "connect-four: serving the bundled model as version 1" in up.text, up.text
        http = f"http://127.0.0.1:{up.http}"
        with httpx.Client(base_url=http, timeout=30) as client:
            served = client.get("/v1/games/connect-four/models").json()
            assert served["aliases"]["production"] == 1, served
            (one,) = [v for v in served["versions"] if v["version"] == 1]
            assert one["sha256"] == hashlib.sha256(entry.read()).hexdigest()
            levels = client.get("/v1/games/connect-four/levels").json()
            assert levels["served_version"] == 1 and levels["calibration_applies"], levels
            # its own judged figures, from the manifest: never none, never another model's
            x = next(m for m in entry.measures["measures"] if m["name"] == "vs_perfect_as_x")
            assert levels["served_strength"].startswith(
                f"judged at depth 3: vs_perfect_as_x {x['wins']}/{x['draws']}/{x['losses']} "
                f"(score "), levels
            assert one["evaluation"]["judged"] == entry.measures, one
            answer = client.post("/v1/games/connect-four/best-move", json={"moves": ""})
            assert answer.status_code == 200, answer.text
            assert answer.json()["move"]["col"] == 3  # the centre column, the winning move
            # the bundled book is in the proved table from the start: at ply 5, where the
            # network alone gives a drawn game away as O (cell 32), the proof's move (31)
            slip = "-------|-------|-------|-------|-X-----|-O-XOX-"
            answer = client.post("/v1/games/connect-four/best-move", json={"board": slip})
            assert answer.status_code == 200, answer.text
            assert answer.json()["exact"] is True and answer.json()["move"]["index"] == 31, \
                answer.json()
        deadline = time.monotonic() + 120
        log = tmp_path / "data" / "logs" / "trainer.log"
        games = load_model(entry.read()).info.games_played
        resumed = f"warm start from connect-four version 1 ({games} games)"
        while time.monotonic() < deadline and resumed not in (
                log.read_text() if log.exists() else ""):
            time.sleep(0.5)
        assert resumed in log.read_text()  # the trainer goes on from it
        assert "training on with version 1's recipe" in log.read_text()  # and its recipe
    finally:
        code = up.stop()
    assert code == 0, up.text


@pytest.mark.slow
def test_up_trains_connect_four_with_an_ntuple_network_and_serves_it(tmp_path: Path) -> None:
    """``--games connect-four`` with a short training budget: its trainer learns an n-tuple
    network, judges it against the solver, publishes and promotes it; the server (over the
    embedded, real Redis) then answers best-move and evaluate with it."""
    from tests.deploy.test_live import start_up

    up = start_up(tmp_path / "data", "--games", "connect-four", "--publish-every", "2000",
                  "--judge-games", "4", "--judge-time", "0.05", "--no-bundled")
    try:
        up.wait_for("gameai is up:", timeout=300)
        assert "connect-four: no model yet: its trainer learns one first (ntuple)" in up.text
        with httpx.Client(base_url=f"http://127.0.0.1:{up.http}", timeout=10) as client:
            (game,) = client.get("/v1/games").json()["games"]
            assert game["name"] == "connect-four" and game["ready"]
            empty = "|".join(["-------"] * 6)
            answer = client.post("/v1/games/connect-four/best-move", json={"board": empty})
            assert answer.status_code == 200, answer.text
            body = answer.json()
            # only an n-tuple network searches (Connect Four's default depth); the piece
            # drops
            assert body["depth"] == DEFAULT_DEPTH["connect-four"], body
            assert body["model_version"] >= 1, body
            assert body["move"]["row"] == 5, body
            values = client.post("/v1/games/connect-four/evaluate", json={"board": empty})
            assert values.status_code == 200 and len(values.json()["moves"]) == 7
        log = (tmp_path / "data" / "logs" / "trainer.log").read_text()
        assert f"candidate judged (depth {DEFAULT_DEPTH['connect-four']})" in log
        assert "promoted to production" in log
    finally:
        code = up.stop()
    assert code == 0, up.text
