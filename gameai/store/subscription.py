"""A background listener for the store's change events that reconnects by itself.

Pub/sub delivers events only to listeners connected at the time, so a listener that was
disconnected may have missed some. It therefore reports each (re)connection through
``on_status(True)``: the caller should then re-read what it cares about (``rollout()``),
exactly as it does when it polls ``counter()``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

import redis

log = logging.getLogger(__name__)

Event = dict[str, Any]
"""A change event: ``{"game", "type": "publish"|"alias"|"canary"|"gc", "alias", "version",
"weight", "counter", "at", "by"}`` (fields that do not apply are absent)."""


class Subscription:
    """A background listener for change events; reconnects by itself. ``close()`` stops it.

    Attributes:
        connected: whether the listener is subscribed right now.
        reconnects: how many times it has re-subscribed after losing the connection.
    """

    def __init__(self, client: redis.Redis, channel: str, callback: Callable[[Event], None], *,
                 on_status: Callable[[bool], None] | None = None, poll: float = 0.2,
                 max_backoff: float = 2.0) -> None:
        self.connected = False
        self.reconnects = 0
        self._client = client
        self._channel = channel
        self._callback = callback
        self._on_status = on_status
        self._poll = poll
        self._max_backoff = max_backoff
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"gameai-events:{channel}",
                                        daemon=True)
        self._thread.start()

    def wait_connected(self, timeout: float = 5.0) -> bool:
        """Block until the first subscription is in place (events published before that
        are not seen); ``False`` if it was not within ``timeout`` seconds."""
        return self._ready.wait(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Stop listening and wait for the thread to end. Safe to call twice."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
        self._client.close()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> None:
        backoff = 0.05
        ever_connected = False
        while not self._stop.is_set():
            pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(self._channel)
                if ever_connected:
                    self.reconnects += 1
                ever_connected = True
                self._set_status(True)
                backoff = 0.05
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=self._poll)
                    if message is not None and message.get("type") == "message":
                        self._deliver(message["data"])
            except (redis.ConnectionError, redis.TimeoutError, OSError) as e:
                log.warning("store events: connection lost (%s); retrying in %.2f s", e,
                            backoff)
            except Exception:  # a bug must not kill the listener silently forever
                log.exception("store events: unexpected error; reconnecting")
            finally:
                self._set_status(False)
                try:
                    pubsub.close()
                except Exception:  # closing a broken connection may fail again; ignore
                    log.debug("store events: error closing the old connection", exc_info=True)
            self._stop.wait(backoff)
            backoff = min(backoff * 2, self._max_backoff)

    def _set_status(self, up: bool) -> None:
        if up == self.connected:
            return
        self.connected = up
        if up:
            self._ready.set()
        if self._on_status is not None and not (not up and self._stop.is_set()):
            try:
                self._on_status(up)
            except Exception:
                log.exception("store events: on_status callback failed")

    def _deliver(self, data: bytes | str) -> None:
        try:
            event = json.loads(data)
        except ValueError:
            log.warning("store events: ignoring a message that is not JSON: %.80r", data)
            return
        if not isinstance(event, dict):
            log.warning("store events: ignoring a message that is not an object: %.80r", data)
            return
        try:
            self._callback(event)
        except Exception:  # the caller's bug; keep delivering later events
            log.exception("store events: callback failed on %r", event)
