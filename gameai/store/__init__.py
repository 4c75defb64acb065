"""The Redis-backed model store. See :mod:`gameai.store.store` for the contract,
:mod:`gameai.store.connect` to open it from settings, and docs/store.md."""

from gameai.store.embedded import RedisServer
from gameai.store.errors import (
    AliasRefused,
    InvalidArgument,
    Pinned,
    StoreError,
    StoreUnavailable,
    UnknownVersion,
)
from gameai.store.policy import is_number
from gameai.store.proved import ProvedIndex, ProvedTable
from gameai.store.records import AliasChange, Pin, Rollout, ShadowReport, VersionRecord
from gameai.store.routing import choose_version
from gameai.store.store import Event, ModelStore, Subscription

__all__ = [
    "AliasChange",
    "AliasRefused",
    "Event",
    "InvalidArgument",
    "ModelStore",
    "Pin",
    "Pinned",
    "ProvedIndex",
    "ProvedTable",
    "RedisServer",
    "Rollout",
    "ShadowReport",
    "StoreError",
    "StoreUnavailable",
    "Subscription",
    "UnknownVersion",
    "VersionRecord",
    "choose_version",
    "is_number",
]
