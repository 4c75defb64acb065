"""Readiness of a server of several games, as real ``gameai serve`` processes (issue 28):
``/readyz`` names what is missing, and whether one unready game keeps the server unready
is the operator's choice (``GAMEAI_READY_WHEN``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

from gameai.models import TableModel
from gameai.store import ModelStore
from gameai.store.embedded import free_port

GAMES = "tictactoe,mnk-3x4-3"  # only tic-tac-toe gets a production version here


def _serve(url: str, port: int, ready_when: str | None) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GAMEAI_")}
    env["GAMEAI_CACHE_DIR"] = os.environ.get("GAMEAI_CACHE_DIR", "")
    if ready_when is not None:
        env["GAMEAI_READY_WHEN"] = ready_when
    return subprocess.Popen(
        [sys.executable, "-m", "gameai", "serve", "--store", url, "--games", GAMES,
         "--http-port", str(port), "--grpc-port", str(free_port()), "--workers", "1",
         "--poll-seconds", "0.2", "--drain-seconds", "0", "--grace-seconds", "2"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _readyz(port: int) -> tuple[int, dict] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())
    except OSError:
        return None


def _settled(port: int, process: subprocess.Popen[str]) -> tuple[int, dict]:
    """/readyz once tic-tac-toe's production is loaded (what the store has to give)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[0][-3000:]
        answer = _readyz(port)
        if answer is not None and answer[1]["games"]["tictactoe"]["ready"]:
            return answer
        time.sleep(0.2)
    raise AssertionError("tic-tac-toe's production never loaded")


def test_readyz_names_the_game_without_production_and_ready_when_decides(
        redis_url: str, perfect: TableModel) -> None:
    with ModelStore.from_url(redis_url) as store:
        version = store.publish(perfect.to_bytes(), by="tests").version
        store.set_alias(game="tictactoe", alias="production", version=version, by="tests")
    ports = {"all": free_port(), "any": free_port()}
    servers = {"all": _serve(redis_url, ports["all"], None),  # the default
               "any": _serve(redis_url, ports["any"], "any")}
    try:
        status, body = _settled(ports["all"], servers["all"])
        assert status == 503 and body["ready"] is False and body["ready_when"] == "all"
        assert body["problems"] == ["mnk-3x4-3: no production model (nothing trains it, or "
                                    "it has not published yet)"]
        status, body = _settled(ports["any"], servers["any"])
        assert status == 200 and body["ready"] is True and body["ready_when"] == "any"
        assert body["problems"] == ["mnk-3x4-3: no production model (nothing trains it, or "
                                    "it has not published yet)"]
    finally:
        for process in servers.values():
            process.send_signal(signal.SIGTERM)
        for process in servers.values():
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
