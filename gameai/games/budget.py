"""Memory is a budget: what a solve, an export or an evaluation may use, and the refusal.

Every piece of work that can outgrow the machine (a layered solve, a whole-game table, the
evaluator's exhaustive opponent, a model export) estimates its memory and time before it
starts and calls :func:`require`, which raises :class:`OverBudget` at once, naming the
estimate, the limit and how to raise it, when the estimate is over the limit. Nothing is
allocated before that.

The limit comes from a source the process installs at start (:func:`set_limit_source`;
:func:`gameai.host.install` reads ``GAMEAI_MEMORY_LIMIT``, which the command line's
``--memory-limit`` sets, else :data:`DEFAULT_SHARE` of the machine's memory), asked when the
work is asked for, never at import: the game core reads no environment of its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gameai.games.errors import TooLarge

ENV = "GAMEAI_MEMORY_LIMIT"
DEFAULT_SHARE = 0.5  # of the machine's memory: a host that also serves is never taken down
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?", re.IGNORECASE)


class OverBudget(TooLarge):
    """The work would need more memory than the limit allows; nothing was allocated."""


class BadLimit(ValueError):
    """A memory limit that is not a size; the message names it."""


@dataclass(frozen=True)
class Limit:
    bytes: int
    source: str  # where it came from, for the refusal: "GAMEAI_MEMORY_LIMIT=4G", ...


@dataclass(frozen=True)
class Estimate:
    """What a piece of work will take, estimated before it starts."""

    what: str  # "solving mnk-4x5-4", "exporting a td table of 3,000,000 positions"...
    bytes: int  # peak memory of the work itself (the process's baseline excluded)
    seconds: float | None = None  # on one core of this kind of machine, unloaded
    positions: int | None = None

    def describe(self) -> str:
        count = f"{self.positions:,} positions, " if self.positions is not None else ""
        took = f" and {seconds_text(self.seconds)}" if self.seconds is not None else ""
        return f"{count}about {size_text(self.bytes)}{took}"


def parse_size(text: str) -> int:
    """Bytes of ``4G``, ``512M``, ``1.5GB``, ``2GiB`` or a plain number of bytes.

    Raises:
        BadLimit: not a size, or below one megabyte.
    """
    match = _SIZE.fullmatch(str(text).strip())
    if not match:
        raise BadLimit(f"memory limit {str(text)[:40]!r} is not a size (like 4G, 512M, "
                       "1.5GB or a number of bytes)")
    value = int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    if value < 1 << 20:
        raise BadLimit(f"memory limit {text!r} is below one megabyte")
    return value


UNLIMITED = Limit(1 << 62, "no memory limit set")
_source: Callable[[], Limit] | None = None


def set_limit_source(source: Callable[[], Limit] | None) -> None:
    """Where :func:`memory_limit` reads the limit from, asked at each check (the process
    installs :func:`gameai.host.memory_limit` at start); None: no limit."""
    global _source
    _source = source


def memory_limit() -> Limit:
    """The limit in force: what the installed source says, else :data:`UNLIMITED`.

    Raises:
        BadLimit: the source's setting is not a size.
    """
    return _source() if _source is not None else UNLIMITED


def require(estimate: Estimate, limit: Limit | None = None) -> Estimate:
    """``estimate`` if it fits ``limit`` (default: :func:`memory_limit`).

    Raises:
        OverBudget: it does not; the message gives the estimate, the limit and the setting
            that raises it.
    """
    limit = limit or memory_limit()
    if estimate.bytes > limit.bytes:
        raise OverBudget(f"{estimate.what} would need {estimate.describe()}, over the memory "
                         f"limit of {size_text(limit.bytes)} ({limit.source}); raise it with "
                         f"--memory-limit or {ENV} if the machine has the memory")
    return estimate


def estimate_text(estimate: Estimate) -> str:
    """``291.3 MB of memory and 4.1 s of one core``: what a command prints before it starts."""
    took = f" and {seconds_text(estimate.seconds)} of one core" \
        if estimate.seconds is not None else ""
    return f"{size_text(estimate.bytes)} of memory{took}"


def size_text(n: float) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} bytes"


def seconds_text(s: float) -> str:
    if s >= 3600:
        return f"{s / 3600:.1f} h"
    if s >= 60:
        return f"{s / 60:.0f} min"
    return f"{s:.1f} s" if s >= 0.1 else "under 0.1 s"
