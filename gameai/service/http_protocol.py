"""The HTTP/1.1 protocol the REST server runs: uvicorn's httptools protocol (its C parser,
5-15% less server CPU a request than the pure-Python h11: docs/levels.md) with the bound
on a request's head that h11 had and httptools lacks.

httptools buffers a header whole before it hands it over, however long, so a client could
make the server hold megabytes per connection. Here the bytes received while a request's
head is incomplete are counted; past :data:`MAX_HEAD_BYTES` (h11's 16 KiB, uvicorn's default
for it) the request is answered ``400`` naming the limit and the connection closed. A
chunk of data that completes the head is accepted whole (it is at most one read, 256 KiB),
so the bound is on memory, not an exact count of the head's bytes.
"""

from __future__ import annotations

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

MAX_HEAD_BYTES = 16 * 1024


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a bound on a request's head (module docstring)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._in_head = True  # a connection starts with a request's head
        self._head_bytes = 0

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_bytes = 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head = True  # what comes next on the connection is the next head

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._in_head and self._head_bytes > MAX_HEAD_BYTES \
                and not self.transport.is_closing():
            self.send_400_response(f"Request head over {MAX_HEAD_BYTES} bytes: refused.")
