"""The ASGI layer under the REST routes: every ``/v1/`` request counted and timed, and
bodies over the limit refused before a route reads them (chunked ones included)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi.responses import JSONResponse

from gameai.service.errors import RequestTooLarge, classify
from gameai.service.runtime import Runtime

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class RequestMetrics:
    """Pure ASGI middleware: counts and times ``/v1/`` requests, refuses oversized bodies.

    A plain ASGI wrapper rather than ``BaseHTTPMiddleware``, which costs a task per request.
    """

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], *,
                 runtime: Runtime) -> None:
        self.app = app
        self.metrics = runtime.metrics
        self.limit = runtime.settings.max_body_bytes
        self.games = set(runtime.registry.games)
        self.inflight = runtime.metrics.inflight.labels("rest")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [500]
        inflight = self.inflight
        inflight.inc()

        async def send_status(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            length = _content_length(scope)
            body: Receive | None = receive
            if length is None:  # chunked: read it here, within the limit, and replay it
                body = await self._buffered(receive)
            if body is None or (length is not None and length > self.limit):
                await _refuse_too_large(scope, send_status, self.limit)
            else:
                await self.app(scope, body, send_status)
        finally:
            inflight.dec()
            method, game, version = scope.get("gameai", ("", "", None))
            game = game if game in self.games else ""
            self.metrics.observe("rest", method or "unknown", game, version, str(status[0]),
                                 time.perf_counter() - started)

    async def _buffered(self, receive: Receive) -> Receive | None:
        """The whole body read now and replayed, or ``None`` if it exceeds the limit."""
        chunks, seen, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            seen += len(chunks[-1])
            if seen > self.limit:
                return None
            more = message.get("more_body", False)
        body = b"".join(chunks)
        sent = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return replay


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else 1 << 62
    return None


async def _refuse_too_large(scope: Scope, send: Send, limit: int) -> None:
    status = classify(RequestTooLarge(f"the request body is over {limit} bytes", field="body"))
    assert status is not None
    response = JSONResponse(status.to_json(), status_code=status.http,
                            headers={"Connection": "close"})
    async def nothing() -> MutableMapping[str, Any]:
        return {"type": "http.disconnect"}
    await response(scope, nothing, send)
