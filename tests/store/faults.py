"""A TCP proxy in front of a real Redis that loses one reply: the network fault that makes
a client retry a command the server has already executed."""

from __future__ import annotations

import socket
import threading


class ReplyDropper:
    """Forwards ``127.0.0.1:port`` to ``upstream``; when a request containing ``trigger``
    goes through (once), the server executes it but the client's connection is closed
    before the reply reaches it."""

    def __init__(self, upstream_port: int, trigger: bytes) -> None:
        self.upstream_port = upstream_port
        self.trigger = trigger
        self.fired = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def close(self) -> None:
        self._closed = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            drop = threading.Event()
            threading.Thread(target=self._requests, args=(client, upstream, drop),
                             daemon=True).start()
            threading.Thread(target=self._replies, args=(upstream, client, drop),
                             daemon=True).start()

    def _requests(self, client: socket.socket, upstream: socket.socket,
                  drop: threading.Event) -> None:
        seen = b""
        try:
            while chunk := client.recv(65536):
                seen = (seen + chunk)[-200_000:]
                if not self.fired.is_set() and self.trigger in seen:
                    self.fired.set()
                    drop.set()
                upstream.sendall(chunk)
        except OSError:
            pass
        finally:
            upstream.close()

    def _replies(self, upstream: socket.socket, client: socket.socket,
                 drop: threading.Event) -> None:
        try:
            while chunk := upstream.recv(65536):
                if drop.is_set():  # the server has executed it; the reply is lost
                    client.shutdown(socket.SHUT_RDWR)
                    break
                client.sendall(chunk)
        except OSError:
            pass
        finally:
            client.close()
            upstream.close()
