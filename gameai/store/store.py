"""The Redis model store: immutable versions, aliases, canary weight, history and events.

CONTRACT (shared by the trainer and the server; keep these signatures stable):

    store = ModelStore.from_url("redis://:pw@host:6379/0", prefix="gameai")
    record = store.publish(payload, by="trainer@host")      # -> VersionRecord, version 1, 2, ...
    store.set_alias(game="tictactoe", alias="production", version=3, by="ops")
    store.rollback(game="tictactoe", alias="production", by="ops")
    store.set_canary(game="tictactoe", version=4, weight=10, by="ops")
    store.rollout(game="tictactoe")                          # -> Rollout(aliases, weight, counter)
    store.load(game="tictactoe", version=3)                  # -> gameai.models.Model, verified
    store.subscribe(callback)                                # -> Subscription (events, reconnects)

All methods are keyword-only after the first positional argument, return ``None`` (or an
empty list) for "missing" where a read asks, and raise the named errors of
:mod:`gameai.store.errors` (plus :class:`gameai.models.CorruptModel`) otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gameai.models import Model
from gameai.store.records import AliasChange, Rollout, VersionRecord

Event = dict[str, Any]
"""A change event: ``{"game", "type": "publish"|"alias"|"canary"|"gc", "alias", "version",
"weight", "counter", "at", "by"}`` (fields that do not apply are absent)."""


class Subscription:
    """A background listener for change events; reconnects by itself. ``close()`` stops it."""

    def close(self) -> None:
        raise NotImplementedError


class ModelStore:
    """Versions, aliases and rollouts of every game, in one Redis under one key prefix."""

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "gameai", timeout: float = 2.0,
                 retries: int = 3) -> ModelStore:
        """Connect from a ``redis://``, ``rediss://`` or ``unix://`` URL (password and db in
        the URL), with socket timeouts and retries with backoff on connection errors.

        Raises:
            StoreUnavailable: the URL is malformed (message names it, password hidden).
        """
        raise NotImplementedError

    @property
    def url(self) -> str:
        """The URL with any password replaced by ``***``: safe for logs and errors."""
        raise NotImplementedError

    def ping(self) -> None:
        """Raises ``StoreUnavailable`` if Redis cannot be reached."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # -- versions ------------------------------------------------------------------------

    def publish(self, payload: bytes, *, by: str) -> VersionRecord:
        """Store a new immutable version of the payload's game (read from its metadata).

        The payload is decoded and verified first (``CorruptModel`` if it does not load).
        Payload, index entry and version number are written atomically: a reader never sees
        part of a version, and racing publishers get distinct numbers. Numbers are never
        reused, even after ``gc``. Emits a ``publish`` event.
        """
        raise NotImplementedError

    def games(self) -> list[str]:
        """Games with at least one version, sorted."""
        raise NotImplementedError

    def versions(self, *, game: str) -> list[VersionRecord]:
        """Every stored version of ``game``, oldest first (empty if none)."""
        raise NotImplementedError

    def version(self, *, game: str, version: int) -> VersionRecord | None:
        raise NotImplementedError

    def payload(self, *, game: str, version: int) -> bytes | None:
        """The exact stored bytes, unverified (``None`` if missing)."""
        raise NotImplementedError

    def load(self, *, game: str, version: int) -> Model:
        """The verified model: sha256 against the index, then decoded.

        Raises:
            UnknownVersion: no such version.
            CorruptModel: the bytes do not match their checksum or do not decode.
        """
        raise NotImplementedError

    def gc(self, *, game: str, keep: int, window_seconds: float = 7 * 86400,
           by: str) -> list[int]:
        """Delete old versions; keep the newest ``keep``, every aliased version and every
        version the history names within ``window_seconds``. Returns the deleted numbers."""
        raise NotImplementedError

    # -- aliases and rollouts -----------------------------------------------------------

    def resolve(self, *, game: str, ref: str) -> int | None:
        """An alias name or a version number (as text) -> the version, or ``None``."""
        raise NotImplementedError

    def rollout(self, *, game: str) -> Rollout:
        """Aliases, canary weight and change counter of ``game`` in one consistent read."""
        raise NotImplementedError

    def set_alias(self, *, game: str, alias: str, version: int, by: str) -> AliasChange:
        """Point ``alias`` at ``version`` (which must exist and verify); appends to history
        and emits an ``alias`` event. Raises ``UnknownVersion`` or ``AliasRefused``."""
        raise NotImplementedError

    def rollback(self, *, game: str, alias: str = "production", by: str) -> AliasChange:
        """Point ``alias`` back at its previous target in the history."""
        raise NotImplementedError

    def set_canary(self, *, game: str, version: int | None, weight: int, by: str) -> None:
        """Point ``canary`` at ``version`` (``None`` keeps the current one) and set the share
        of traffic (0-100) it receives. Emits a ``canary`` event."""
        raise NotImplementedError

    def history(self, *, game: str) -> list[AliasChange]:
        """Every alias change of ``game``, oldest first."""
        raise NotImplementedError

    # -- change notification -------------------------------------------------------------

    def counter(self) -> int:
        """A number that grows with every change of any game: poll it as a fallback."""
        raise NotImplementedError

    def subscribe(self, callback: Callable[[Event], None]) -> Subscription:
        """Call ``callback(event)`` from a background thread for every change event."""
        raise NotImplementedError
