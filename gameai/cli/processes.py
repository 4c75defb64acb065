"""The child processes of ``gameai up`` and how it watches them: start, stop, the end of a
log, whether a port is free, what an HTTP endpoint answers."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

STOP_SECONDS = 20.0


@dataclass
class Child:
    """A child process of ``gameai up`` with its log file."""

    name: str
    argv: list[str]
    log: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self, env: dict[str, str]) -> None:
        with open(self.log, "ab") as out:
            # A session of its own: the terminal's Ctrl-C reaches only `gameai up`, which
            # then stops the children in order instead of all at once.
            self.process = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=env,
                                            start_new_session=True)

    def failed(self) -> str | None:
        """Why the child is gone (with its last log lines), or ``None`` while it runs."""
        assert self.process is not None
        status = self.process.poll()
        if status is None:
            return None
        return f"the {self.name} exited with status {status}; its log ({self.log}) ends:\n" \
            + tail(self.log)

    def stop(self, timeout: float = STOP_SECONDS) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def http_status(url: str, timeout: float = 2.0) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        return int(e.code)
    except (urllib.error.URLError, OSError):
        return None


def scrape_sum(url: str, metric: str) -> int | None:
    """The sum of a metric's samples on a /metrics page, or ``None`` if unreachable."""
    try:
        with urllib.request.urlopen(url, timeout=2.0) as response:
            text = response.read().decode()
    except (urllib.error.URLError, OSError):
        return None
    total = 0.0
    for line in text.splitlines():
        if line.startswith(metric) and line[len(metric):len(metric) + 1] in ("{", " "):
            total += float(line.rsplit(" ", 1)[1])
    return int(total)


def port_is_free(port: int) -> bool:
    """Nothing listens on ``port``. Connections of a previous run that linger in TIME_WAIT
    do not count: the servers bind with SO_REUSEADDR too."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class StopSignal:
    """SIGINT and SIGTERM set a flag the main loop polls, so shutdown runs in order."""

    def __init__(self) -> None:
        self.requested = False

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        previous = {s: signal.signal(s, self._handle) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)

    def _handle(self, signum: int, frame: object) -> None:
        self.requested = True

    def wait(self, seconds: float) -> None:
        time.sleep(seconds)
