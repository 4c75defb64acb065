"""The Redis start script of Compose and Kubernetes, run with a real redis-server: it
demands the password from the secret file, refuses placeholders, and persists with AOF."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from gameai.store.embedded import find_redis_server, free_port
from tests.deploy.conftest import DEPLOY

SCRIPT = DEPLOY / "k8s" / "base" / "redis" / "start.sh"
CONF = DEPLOY / "k8s" / "base" / "redis" / "redis.conf"
PASSWORD = "Zx9-good_password.0123456789"


def client(port: int, password: str | None = PASSWORD) -> redis.Redis:
    return redis.Redis(port=port, password=password, retry=Retry(NoBackoff(), 0))


def start(tmp_path: Path, password: str, *args: str) -> subprocess.Popen[str]:
    secret = tmp_path / "redis_password"
    secret.write_text(password + "\n")
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    link = bindir / "redis-server"
    if not link.exists():
        link.symlink_to(find_redis_server())
    env = {**os.environ, "REDIS_CONF": str(CONF), "REDIS_PASSWORD_FILE": str(secret),
           "TMPDIR": str(tmp_path), "PATH": f"{bindir}:{os.environ['PATH']}"}
    return subprocess.Popen(["sh", str(SCRIPT), "--bind", "127.0.0.1", *args], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def running(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    port = free_port()
    process = start(tmp_path, PASSWORD, "--port", str(port))
    probe = client(port)
    deadline = time.monotonic() + 10
    while True:
        try:
            probe.ping()
            break
        except redis.ConnectionError:
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "redis did not start"
            time.sleep(0.05)
    yield port, tmp_path
    process.terminate()
    process.wait(10)


def test_requires_the_password_and_appends_to_the_aof(running: tuple[int, Path]) -> None:
    port, data = running
    with pytest.raises(redis.AuthenticationError):
        client(port, None).ping()
    with pytest.raises(redis.AuthenticationError):
        client(port, "wrong-password-123456").ping()
    authed = client(port)
    assert authed.config_get("appendonly") == {"appendonly": "yes"}
    assert authed.config_get("maxmemory-policy") == {"maxmemory-policy": "noeviction"}
    authed.set("gameai:probe", "kept")
    deadline = time.monotonic() + 5  # appendfsync everysec
    while b"gameai:probe" not in b"".join(
            p.read_bytes() for p in (data / "appendonlydir").glob("*.aof")):
        assert time.monotonic() < deadline, "the write never reached the append-only file"
        time.sleep(0.05)
    password_files = list(data.glob("redis-auth.*"))
    assert len(password_files) == 1 and password_files[0].stat().st_mode & 0o077 == 0


@pytest.mark.parametrize(("password", "reason"), [
    ("CHANGE-ME", "placeholder"),
    ("short-one", "shorter than 16"),
    ("has a space in it 12345", "may only use"),
    ('quote"inside-1234567890', "may only use"),
])
def test_refuses_unusable_passwords(tmp_path: Path, password: str, reason: str) -> None:
    process = start(tmp_path, password, "--port", str(free_port()))
    _, err = process.communicate(timeout=10)
    assert process.returncode == 1
    assert reason in err and "make-secrets.sh" in err
    assert not list(tmp_path.glob("redis-auth.*"))


def test_refuses_a_missing_secret_file(tmp_path: Path) -> None:
    env = {**os.environ, "REDIS_CONF": str(CONF),
           "REDIS_PASSWORD_FILE": str(tmp_path / "nothing")}
    result = subprocess.run(["sh", str(SCRIPT)], env=env, capture_output=True, text=True,
                            timeout=10)
    assert result.returncode == 1 and "cannot read the password file" in result.stderr
