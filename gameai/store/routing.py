"""Sticky canary routing: which version answers a client.

A client key hashes to a bucket in [0, 100); buckets below the canary weight go to the
canary. The hash is keyed by game, so a client is not on the canary for every game at once,
and it is stable across processes and restarts (sha256, not Python's salted ``hash``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Container


def bucket(game: str, client_id: str) -> int:
    """The client's bucket in [0, 100) for ``game``."""
    digest = hashlib.sha256(f"{game}\0{client_id}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % 100


def choose_version(*, game: str, client_id: str, production: int | None, canary: int | None,
                   weight: int, loaded: Container[int]) -> int | None:
    """The version to answer with: the canary for the client's share of traffic, else
    production. A version that is not loaded is never chosen; ``None`` if neither is."""
    if canary is not None and canary in loaded and weight > 0 and bucket(game, client_id) < weight:
        return canary
    if production is not None and production in loaded:
        return production
    return None
