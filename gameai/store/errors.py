"""Named errors of the model store. Messages never contain a password."""

from __future__ import annotations


class StoreError(Exception):
    """Base class of every store failure."""


class StoreUnavailable(StoreError):
    """Redis cannot be reached (after retries). The message names the URL, password hidden."""


class UnknownVersion(StoreError, LookupError):
    """No such game, version or alias in the store."""


class AliasRefused(StoreError):
    """An alias change that would break the rules: a missing version, a payload that does
    not verify, an invalid name or weight. Nothing was changed."""


class Pinned(AliasRefused):
    """Production is pinned by an operator, so an automatic promotion was refused (the
    message says by whom and since when). Nothing was changed."""


class InvalidArgument(StoreError, ValueError):
    """A request the store cannot act on (a gc ``keep`` below 1, an empty ``by``...).
    Nothing was changed."""
