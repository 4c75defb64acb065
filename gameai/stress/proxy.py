"""A TCP proxy in front of a real Redis that injects one network fault on demand.

Armed with a trigger (bytes that appear in one command, such as a publish event's
``"type": "publish"``) and a fault, it forwards traffic untouched until a client sends a
command containing the trigger, then, once:

* ``cut`` at ``fraction``: forwards only that part of the command (0: none of it),
  calls ``on_fire`` (say, SIGKILL the client), and closes both sides: Redis never sees the
  whole command, as when a process dies while writing it;
* ``lose-reply``: lets Redis execute the command, then calls ``on_fire`` and closes the
  client's connection before the reply reaches it, as when a process dies, or the network
  fails, between the write and its acknowledgement;
* ``after-reply``: delivers the reply, then calls ``on_fire``.

``ReplyDropper`` is the ``lose-reply`` fault armed at start with no callback: the store's
tests use it to make redis-py retry a command Redis has already executed.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass

FAULTS = ("cut", "lose-reply", "after-reply")


@dataclass
class _Armed:
    trigger: bytes
    fault: str
    fraction: float
    on_fire: Callable[[], None]


class FaultProxy:
    """Forwards ``127.0.0.1:port`` to ``127.0.0.1:upstream_port``; see the module doc."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.fired = threading.Event()
        self._armed: _Armed | None = None
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closed = False
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True, name="fault-proxy").start()

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def arm(self, trigger: bytes, fault: str, *, fraction: float = 0.5,
            on_fire: Callable[[], None] = lambda: None) -> threading.Event:
        """Inject ``fault`` at the next command containing ``trigger``; returns
        :attr:`fired`, set once the fault has been injected and ``on_fire`` has run."""
        if fault not in FAULTS:
            raise ValueError(f"fault must be one of {', '.join(FAULTS)}, got {fault!r}")
        with self._lock:
            self.fired.clear()
            self._armed = _Armed(trigger, fault, fraction, on_fire)
        return self.fired

    def disarm(self) -> None:
        with self._lock:
            self._armed = None

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        for sock in list(self._sockets):
            _close(sock)

    def _take(self, command: bytes) -> _Armed | None:
        with self._lock:
            armed = self._armed
            if armed is None or armed.trigger not in command:
                return None
            self._armed = None
            return armed

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            except OSError:
                if self._closed:
                    return
                continue
            self._sockets += [client, upstream]
            pending: list[_Armed] = []  # a reply fault waiting for the command's answer
            threading.Thread(target=self._requests, args=(client, upstream, pending),
                             daemon=True).start()
            threading.Thread(target=self._replies, args=(upstream, client, pending),
                             daemon=True).start()

    def _requests(self, client: socket.socket, upstream: socket.socket,
                  pending: list[_Armed]) -> None:
        buffer = b""
        try:
            while chunk := client.recv(65536):
                commands, buffer = split_commands(buffer + chunk)
                for command in commands:
                    armed = self._take(command) if not pending else None
                    if armed is not None and armed.fault == "cut":
                        upstream.sendall(command[:int(armed.fraction * len(command))])
                        self._fire(armed)
                        return
                    if armed is not None:
                        pending.append(armed)
                    upstream.sendall(command)
        except OSError:
            pass
        finally:
            _close(upstream)
            _close(client)

    def _replies(self, upstream: socket.socket, client: socket.socket,
                 pending: list[_Armed]) -> None:
        try:
            while chunk := upstream.recv(65536):
                armed = pending[0] if pending else None
                if armed is not None and armed.fault == "lose-reply":
                    self._fire(armed)  # Redis has executed it; the reply is lost
                    client.shutdown(socket.SHUT_RDWR)
                    break
                client.sendall(chunk)
                if armed is not None:  # after-reply
                    pending.clear()
                    self._fire(armed)
        except OSError:
            pass
        finally:
            _close(client)
            _close(upstream)

    def _fire(self, armed: _Armed) -> None:
        try:
            armed.on_fire()
        finally:
            self.fired.set()


class ReplyDropper(FaultProxy):
    """Loses the reply to the first command containing ``trigger`` (once)."""

    def __init__(self, upstream_port: int, trigger: bytes) -> None:
        super().__init__(upstream_port)
        self.trigger = trigger
        self.arm(trigger, "lose-reply")


def split_commands(buffer: bytes) -> tuple[list[bytes], bytes]:
    """The complete commands at the start of ``buffer`` (RESP arrays of bulk strings, as
    clients send them; an inline command ends at CRLF) and the incomplete rest."""
    commands, i = [], 0
    while i < len(buffer):
        end = buffer.find(b"\r\n", i)
        if end < 0:
            break
        if buffer[i:i + 1] != b"*":
            commands.append(buffer[i:end + 2])
            i = end + 2
            continue
        j, complete = end + 2, True
        for _ in range(int(buffer[i + 1:end])):
            header = buffer.find(b"\r\n", j)
            if header < 0:
                complete = False
                break
            j = header + 2 + int(buffer[j + 1:header]) + 2
            if j > len(buffer):
                complete = False
                break
        if not complete:
            break
        commands.append(buffer[i:j])
        i = j
    return commands, buffer[i:]


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.close()
