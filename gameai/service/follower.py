"""The store follower: the background thread that keeps the server's registry
(:class:`~gameai.service.registry.Registry`, which owns one) in step with the model store.

Pub/sub events wake it at once; a cheap poll of the store's change counter every
``poll_seconds`` is the fallback (events sent while the listener was away are lost). When
the counter moved it asks the registry to refresh. When the store stops answering it
marks it down (the registry keeps serving what it holds), backs off up to five poll
periods, and reconnects by itself, counting the reconnection.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any, Protocol

from gameai.service.metrics import Metrics
from gameai.store import ModelStore, StoreError

log = logging.getLogger("gameai.service")


class Followed(Protocol):
    """What the follower keeps in step: the registry, as far as the follower sees it."""

    store: ModelStore
    metrics: Metrics
    store_up: bool

    def refresh(self) -> None: ...

    def set_store_up(self, up: bool) -> None: ...


class StoreFollower:
    """Follows the store for ``registry``: call :meth:`start` once, :meth:`stop` at the end."""

    def __init__(self, registry: Followed, *, poll_seconds: float = 1.0) -> None:
        self.registry = registry
        self.poll_seconds = poll_seconds
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._subscription: Any = None
        self._counter: int | None = None
        self._first_done = threading.Event()
        self._ever_up = False

    def start(self, *, wait_seconds: float = 5.0) -> None:
        """Load what the store names now (up to ``wait_seconds``), then follow it."""
        self._thread = threading.Thread(target=self._run, name="gameai-registry", daemon=True)
        self._thread.start()
        self._wake.set()
        self._first_done.wait(wait_seconds)

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._close_subscription()

    def wake(self) -> None:
        """Check the store now rather than at the next poll."""
        self._wake.set()

    @property
    def listening(self) -> bool:
        """Whether the pub/sub listener is connected (the poll covers the gaps)."""
        return self._subscription is not None and bool(self._subscription.connected)

    def _run(self) -> None:
        backoff = self.poll_seconds
        while not self._stop.is_set():
            self._wake.wait(timeout=backoff)
            self._wake.clear()
            if self._stop.is_set():
                break
            try:
                self._follow()
                backoff = self.poll_seconds
            except (StoreError, OSError, ConnectionError) as e:
                self._mark_down(e)
                backoff = min(max(backoff * 2, 0.1), 5.0, max(self.poll_seconds, 0.1) * 5)
            except Exception:  # a bug must not stop the follower; log and keep going
                log.exception("registry refresh failed")
            finally:
                self._first_done.set()

    def _follow(self) -> None:
        registry, store = self.registry, self.registry.store
        if not registry.store_up:
            store.ping()
            if self._ever_up:
                registry.metrics.store_reconnects.inc()
            self._ever_up = True
            registry.set_store_up(True)
            self._counter = None
        if self._subscription is None:
            self._subscription = store.subscribe(self._on_event, on_status=self._on_listener)
        counter = store.counter()
        if counter != self._counter:
            registry.refresh()
            self._counter = counter

    def _on_event(self, event: Mapping[str, Any]) -> None:
        self._wake.set()

    def _on_listener(self, connected: bool) -> None:
        # Connected: events sent while the listener was away are lost, so re-read now.
        # Lost: the store may be gone; look now rather than at the next poll, so that
        # /readyz and gameai_store_up say so at once.
        self._wake.set()

    def _mark_down(self, error: BaseException) -> None:
        if self.registry.store_up:
            log.warning("store unreachable, serving the versions held: %s", error)
        self.registry.set_store_up(False)

    def _close_subscription(self) -> None:
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            subscription.close()
