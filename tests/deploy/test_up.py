"""``gameai up`` refuses what cannot work with a message that says what to change, and
reports a child that dies instead of hanging. (The running system: test_live.py.)"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

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
    assert f"cannot read the store URL file {tmp_path / 'missing'}" in result.stderr


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
