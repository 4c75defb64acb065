"""The store's rules as pure functions: names, rollback targets and what gc may delete.

Kept apart from Redis so each rule reads in one place and is tested without a server; the
store reads the state, asks these functions, and writes the answer atomically.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from typing import Any

from gameai.store.errors import AliasRefused, InvalidArgument, UnknownVersion
from gameai.store.records import AliasChange

LATEST = "latest"
"""A reference meaning the newest stored version; no alias may take this name."""

_ALIAS = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,63}$")
_GAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def is_number(ref: str) -> bool:
    """Whether ``ref`` names a version by number (ASCII digits only: ``"²"`` is no number)."""
    return ref.isascii() and ref.isdigit()


def check_alias(alias: str) -> str:
    """``alias`` if it is a valid name: a letter, then up to 63 letters, digits, ``. _ -``
    (so it can never be mistaken for a version number), and not ``latest``.

    Raises:
        AliasRefused: the name is invalid.
    """
    if not isinstance(alias, str) or not _ALIAS.match(alias) or alias == LATEST:
        raise AliasRefused(f"invalid alias name {alias!r}: use a letter followed by up to 63 "
                           f"letters, digits, '.', '_' or '-' (and not {LATEST!r})")
    return alias


def check_game(game: str) -> str:
    """``game`` if it can name a game (the store never builds keys from anything else).

    Raises:
        UnknownVersion: it cannot.
    """
    if not isinstance(game, str) or not _GAME.match(game):
        raise UnknownVersion(f"unknown game {game!r}")
    return game


def check_by(by: str) -> str:
    """``by`` if it is a usable audit name (who or what made a change)."""
    if not isinstance(by, str) or not by.strip() or len(by) > 200:
        raise InvalidArgument(f"'by' must name who or what made the change (1-200 characters), "
                           f"not {by!r}")
    return by.strip()


def check_judged(judged: Any, info: dict[str, Any]) -> dict[str, Any]:
    """``judged`` if it can stand as the judged measures of the model whose metadata is
    ``info`` (the form :class:`gameai.trainer.evaluation.judge.GateJudge` makes: a policy,
    the seconds it took, and measures each named, of kind score, rate or lines), and that
    model's own evaluation carries none (what a file says of itself is never replaced)."""
    if (info.get("evaluation") or {}).get("judged") is not None:
        raise InvalidArgument("the model's file carries its own judged measures; others "
                              "cannot be recorded over them")
    if not isinstance(judged, dict) or not isinstance(judged.get("policy"), str) \
            or not isinstance(judged.get("seconds"), int | float) \
            or not isinstance(judged.get("measures"), list) or not judged["measures"]:
        raise InvalidArgument("judged measures need a 'policy' (text), 'seconds' and a "
                              "non-empty list of 'measures'")
    for m in judged["measures"]:
        if not isinstance(m, dict) or not isinstance(m.get("name"), str) \
                or m.get("kind") not in ("score", "rate", "lines"):
            raise InvalidArgument(f"a judged measure needs a 'name' and a 'kind' of score, "
                                  f"rate or lines, not {m!r}"[:300])
        need = ("wins", "draws", "losses", "games", "score") if m["kind"] == "score" \
            else ("value",)
        missing = [k for k in need if k not in m]
        if missing:
            raise InvalidArgument(f"judged measure {m['name']!r} lacks {', '.join(missing)}")
    return judged


def check_token(token: str) -> str:
    """``token`` if it can serve as a publish idempotency key (1-128 visible characters)."""
    if not isinstance(token, str) or not 0 < len(token) <= 128 or not token.isprintable() \
            or " " in token:
        raise InvalidArgument(f"publish token must be 1-128 visible characters, not {token!r}")
    return token


def check_weight(weight: int, what: str = "canary weight") -> int:
    """``weight`` if it is a whole percentage 0-100."""
    if isinstance(weight, bool) or not isinstance(weight, int) or not 0 <= weight <= 100:
        raise AliasRefused(f"{what} must be a whole number from 0 to 100, not {weight!r}")
    return weight


def rollback_target(history: Iterable[AliasChange], alias: str) -> int | None:
    """Where ``rollback`` of ``alias`` goes: the target before the latest change that has
    not itself been rolled back (``None`` if there is nothing earlier).

    History works as an undo stack: every change pushes the version it moved away from,
    every rollback pops one. So after ``1 -> 2 -> 3``, rollbacks go to 2, then 1, then
    refuse; a new promotion after a rollback can be rolled back to where it came from.
    Repeated rollbacks never bounce between the last two versions. Pin and release
    entries move nothing and are skipped.
    """
    stack: list[int | None] = []
    for change in history:
        if change.alias != alias or change.action in ("pin", "release"):
            continue  # a pin or its release moves nothing
        if change.action == "rollback":
            if stack:
                stack.pop()
        else:
            stack.append(change.from_version)
    return stack[-1] if stack else None


def gc_victims(versions: Iterable[int], *, keep: int, aliases: Mapping[str, int],
               history: list[AliasChange], window_seconds: float,
               now: dt.datetime) -> list[int]:
    """Versions ``gc`` deletes, ascending: those :func:`gc_keeps` gives no reason to keep.

    Raises:
        InvalidArgument: ``keep`` is below 1 (the newest version may be a candidate that a
            trainer is about to promote) or the window is negative.
    """
    kept = gc_keeps(versions, keep=keep, aliases=aliases, history=history,
                    window_seconds=window_seconds, now=now)
    return [v for v in sorted(set(versions)) if v not in kept]


def gc_keeps(versions: Iterable[int], *, keep: int, aliases: Mapping[str, int],
             history: list[AliasChange], window_seconds: float,
             now: dt.datetime) -> dict[int, list[str]]:
    """The versions ``gc`` keeps, each with why (for people). It keeps:

    * the newest ``keep`` versions (by number);
    * every version an alias points at;
    * every version the history names (as ``from`` or ``to``) within ``window_seconds``
      before ``now``;
    * every alias's rollback target, however old, so ``rollback`` keeps working.

    Raises:
        InvalidArgument: as :func:`gc_victims`.
    """
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise InvalidArgument(f"gc must keep at least 1 version, not {keep!r}")
    if not (isinstance(window_seconds, int | float) and window_seconds >= 0):  # NaN too
        raise InvalidArgument(f"gc window must be 0 seconds or more, not {window_seconds}")
    ordered = sorted(set(versions))
    reasons: dict[int, list[str]] = {}

    def kept(version: int, why: str) -> None:
        if version in ordered and why not in reasons.setdefault(version, []):
            reasons[version].append(why)

    for v in ordered[-keep:]:
        kept(v, f"among the newest {keep}")
    for alias, v in sorted(aliases.items()):
        kept(v, f"{alias} points at it")
    try:
        since = now - dt.timedelta(seconds=window_seconds)
    except OverflowError:  # a window longer than the calendar: all of history
        since = dt.datetime.min.replace(tzinfo=dt.UTC)
    days = window_seconds / 86400
    for change in history:
        if parse_time(change.at) >= since:
            for moved in (change.from_version, change.to_version):
                if moved:
                    kept(moved, f"an alias moved to or from it within the {days:g}-day window")
    for alias in sorted(aliases):
        target = rollback_target(history, alias)
        if target is not None:
            kept(target, f"{alias}'s rollback target")
    return reasons


def parse_time(text: str) -> dt.datetime:
    """An ISO 8601 time as written by the store (``2025-01-31T12:00:00Z``), timezone-aware.
    Unreadable times count as now, so gc errs on the side of keeping."""
    try:
        t = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return dt.datetime.now(dt.UTC)
    return t if t.tzinfo else t.replace(tzinfo=dt.UTC)


def describe_versions(numbers: Iterable[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``"versions: 1-3, 5"``, for messages about a missing version."""
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    if not runs:
        return "no versions stored"
    return "versions: " + ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 1 else f"{r[0]}" for r in runs)
