"""The Redis model store: immutable versions, aliases, canary weight, history and events.

CONTRACT (shared by the trainer and the server; keep these signatures stable):

    store = ModelStore.from_url("redis://:pw@host:6379/0", prefix="gameai")
    record = store.publish(payload, by="trainer@host")      # -> VersionRecord, version 1, 2, ...
    store.set_alias(game="tictactoe", alias="production", version=3, by="ops", pin=True)
    store.rollback(game="tictactoe", alias="production", by="ops", pin=True)
    store.release(game="tictactoe", by="ops")                # auto-promotion may move it again
    store.set_canary(game="tictactoe", version=4, weight=10, by="ops")
    store.rollout(game="tictactoe")                          # -> Rollout(aliases, weight, counter)
    store.load(game="tictactoe", version=3)                  # -> gameai.models.Model, verified
    store.subscribe(callback)                                # -> Subscription (events, reconnects)

All methods are keyword-only after the first positional argument, return ``None`` (or an
empty list) for "missing" where a read asks, and raise the named errors of
:mod:`gameai.store.errors` (plus :class:`gameai.models.CorruptModel`) otherwise.

Every write is one Lua script (:mod:`gameai.store.scripts`), so it is atomic and a refused
write changes nothing; the data layout is in :mod:`gameai.store.keys` and docs/store.md.
Connection errors are retried with backoff (:mod:`gameai.store.urls`) and then raised as
``StoreUnavailable`` naming the URL with its password hidden; the next call reconnects.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from gameai.models import CorruptModel, Model, load_model
from gameai.models.info import now_iso
from gameai.store import policy, scripts
from gameai.store.errors import (
    AliasRefused,
    InvalidArgument,
    Pinned,
    StoreError,
    UnknownVersion,
)
from gameai.store.keys import Keys
from gameai.store.proved import DEFAULT_MAX_ENTRIES, ProvedTable
from gameai.store.records import (
    SHADOW_TALLIES,
    AliasChange,
    Pin,
    Rollout,
    ShadowReport,
    VersionRecord,
)
from gameai.store.subscription import Event, Subscription
from gameai.store.urls import StoreUrl, as_bytes, as_text, connect, parse_store_url, redis_errors

__all__ = ["Event", "ModelStore", "Subscription"]

TOKEN_TTL = 86400
_CAS_ATTEMPTS = 20


class ModelStore:
    """Versions, aliases and rollouts of every game, in one Redis under one key prefix."""

    def __init__(self, url: StoreUrl, *, prefix: str = "gameai", timeout: float = 2.0,
                 retries: int = 3) -> None:
        self._url = url
        self._timeout = timeout
        self._retries = retries
        self.keys = Keys(prefix)
        self._redis = connect(url, timeout=timeout, retries=retries)
        self._publish = self._redis.register_script(scripts.PUBLISH)
        self._change_alias = self._redis.register_script(scripts.CHANGE_ALIAS)
        self._delete = self._redis.register_script(scripts.DELETE_VERSIONS)
        self._set_pin = self._redis.register_script(scripts.SET_PIN)

    @classmethod
    def from_url(cls, url: str, *, prefix: str = "gameai", timeout: float = 2.0,
                 retries: int = 3) -> ModelStore:
        """Connect from a ``redis://``, ``rediss://`` or ``unix://`` URL (password and db in
        the URL), with socket timeouts and retries with backoff on connection errors.

        Connecting is lazy: a bad host shows up as ``StoreUnavailable`` on the first call
        (use :meth:`ping` to check at start-up).

        Raises:
            StoreUnavailable: the URL is malformed (message names it, password hidden).
        """
        return cls(parse_store_url(url), prefix=prefix, timeout=timeout, retries=retries)

    @property
    def url(self) -> str:
        """The URL with any password replaced by ``***``: safe for logs and errors."""
        return self._url.redacted

    @property
    def prefix(self) -> str:
        return self.keys.prefix

    def ping(self) -> None:
        """Raises ``StoreUnavailable`` if Redis cannot be reached."""
        with self._errors():
            self._redis.ping()

    def close(self) -> None:
        self._redis.close()

    def __enter__(self) -> ModelStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ModelStore({self.url!r}, prefix={self.prefix!r})"

    def _errors(self) -> AbstractContextManager[None]:
        return redis_errors(self._url)

    def proved(self, *, max_entries: int = DEFAULT_MAX_ENTRIES) -> ProvedTable:
        """The table of positions the solver proved, shared by every server and the book
        builder (:mod:`gameai.store.proved`), on this store's connection."""
        return ProvedTable(self._redis, self.keys, self._url, max_entries=max_entries)

    # -- versions ------------------------------------------------------------------------

    def publish(self, payload: bytes, *, by: str, token: str | None = None,
                judged: dict[str, Any] | None = None) -> VersionRecord:
        """Store a new immutable version of the payload's game (read from its metadata).

        The payload is decoded and verified first (``CorruptModel`` if it does not load).
        Payload, index entry and version number are written atomically: a reader never sees
        part of a version, and racing publishers get distinct numbers. Numbers are never
        reused, even after ``gc``. Emits a ``publish`` event. The exact bytes are stored, so
        the record's sha256 is the sha256 of ``payload``.

        A publish retried after a lost reply does not create a second version. To make your
        own retries safe too (after ``StoreUnavailable``), pass the same ``token`` (any
        string up to 128 characters, say a uuid) each time: within a day, publishing with a
        token already used returns the version it created instead of a new one (and
        refuses, with ``InvalidArgument``, if that version holds other bytes).

        ``judged``: the model's judged measures made outside its file (a bundled model's,
        from its manifest), recorded as the version's ``evaluation.judged`` so that
        ``models show`` and the level picker show the served version's own figures; a model
        whose file carries judged measures keeps its own (``InvalidArgument`` if both).
        """
        data = bytes(payload)
        model = load_model(data)
        by = policy.check_by(by)
        game = model.game.name
        info = model.info.to_json()
        if judged is not None:
            info["evaluation"] = {**(info.get("evaluation") or {}),
                                  "judged": policy.check_judged(judged, info)}
        record = VersionRecord(game=game, version=0, sha256=hashlib.sha256(data).hexdigest(),
                               size=len(data), kind=model.kind, published_at=now_iso(),
                               published_by=by, info=info)
        event = {"game": game, "type": "publish", "sha256": record.sha256,
                 "at": record.published_at, "by": by}
        k = self.keys
        token = policy.check_token(token) if token is not None else uuid.uuid4().hex
        with self._errors():
            version, _counter, fresh = self._publish(
                keys=[k.next(game), k.index(game), k.games, k.counter, k.token(game, token),
                      k.deleted(game)],
                args=[k.payload_prefix(game), data, record.index_json(), game,
                      json.dumps(event), k.events, TOKEN_TTL])
        if not fresh:  # this token published before: answer with what it published
            earlier = self.version(game=game, version=int(version))
            if earlier is None:
                raise UnknownVersion(self._missing_message(game, int(version)))
            if earlier.sha256 != record.sha256:
                raise InvalidArgument(f"publish token {token!r} already published {game} "
                                      f"version {earlier.version} with other bytes")
            return earlier
        return VersionRecord(**{**record.__dict__, "version": int(version)})

    def games(self) -> list[str]:
        """Games with at least one version, sorted."""
        with self._errors():
            names = self._redis.smembers(self.keys.games)
        return sorted(as_text(n) for n in names)

    def versions(self, *, game: str) -> list[VersionRecord]:
        """Every stored version of ``game``, oldest first (empty if none)."""
        policy.check_game(game)
        with self._errors():
            raw = self._redis.hgetall(self.keys.index(game))
        return sorted((VersionRecord.from_index(int(v), data) for v, data in raw.items()),
                      key=lambda r: r.version)

    def version(self, *, game: str, version: int) -> VersionRecord | None:
        policy.check_game(game)
        with self._errors():
            raw = self._redis.hget(self.keys.index(game), str(int(version)))
        return None if raw is None else VersionRecord.from_index(int(version), raw)

    def payload(self, *, game: str, version: int) -> bytes | None:
        """The exact stored bytes, unverified (``None`` if missing)."""
        policy.check_game(game)
        with self._errors():
            data = self._redis.get(self.keys.payload(game, int(version)))
        return None if data is None else as_bytes(data)

    def verified_payload(self, *, game: str, version: int) -> tuple[VersionRecord, bytes]:
        """The index entry and the exact bytes, read together and checked against the
        index's sha256 (what ``export`` writes).

        Raises:
            UnknownVersion: no such version (the message says if gc deleted it).
            CorruptModel: the bytes are missing or do not match their sha256.
        """
        policy.check_game(game)
        version = int(version)
        k = self.keys
        with self._errors(), self._redis.pipeline(transaction=True) as pipe:
            pipe.hget(k.index(game), str(version))
            pipe.get(k.payload(game, version))
            raw, data = pipe.execute()
        if raw is None:
            raise UnknownVersion(self._missing_message(game, version))
        record = VersionRecord.from_index(version, raw)
        assert isinstance(data, bytes | None)
        if data is None:
            raise CorruptModel(f"{game} version {version} has an index entry but no payload")
        if hashlib.sha256(data).hexdigest() != record.sha256:
            raise CorruptModel(f"{game} version {version}: the stored bytes do not match their "
                               f"sha256 {record.sha256[:12]}...")
        return record, bytes(data)

    def load(self, *, game: str, version: int) -> Model:
        """The verified model: sha256 against the index, then decoded.

        Raises:
            UnknownVersion: no such version.
            CorruptModel: the bytes do not match their checksum or do not decode.
        """
        _record, data = self.verified_payload(game=game, version=version)
        model = load_model(data)
        if model.game.name != game:
            raise CorruptModel(f"{game} version {version} holds a {model.game.name} model")
        return model

    def deleted(self, *, game: str, version: int) -> dict[str, Any] | None:
        """``{"at", "by"}`` if gc deleted ``version`` of ``game``, else ``None``."""
        policy.check_game(game)
        with self._errors():
            raw = self._redis.hget(self.keys.deleted(game), str(int(version)))
        return None if raw is None else dict(json.loads(raw))

    def _missing_message(self, game: str, version: int | str) -> str:
        tombstone = self.deleted(game=game, version=int(version)) \
            if policy.is_number(str(version)) else None
        if tombstone:
            return (f"{game} version {version} was deleted by gc at {tombstone.get('at')} "
                    f"(by {tombstone.get('by')})")
        numbers = [r.version for r in self.versions(game=game)]
        return f"{game} has no version {version} ({policy.describe_versions(numbers)})"

    def require(self, *, game: str, ref: str | int) -> VersionRecord:
        """The version ``ref`` names (a number, an alias or ``latest``).

        Raises:
            UnknownVersion: nothing by that name; the message says what exists.
        """
        version = self.resolve(game=game, ref=str(ref))
        record = None if version is None else self.version(game=game, version=version)
        if record is None:
            raise UnknownVersion(self._missing_message(game, ref))
        return record

    def gc_plan(self, *, game: str, keep: int, window_seconds: float = 7 * 86400) -> list[int]:
        """The versions :meth:`gc` would delete now (a dry run)."""
        return policy.gc_victims(**self._gc_inputs(game, keep, window_seconds))

    def gc_keeps(self, *, game: str, keep: int, window_seconds: float = 7 * 86400
                 ) -> dict[int, list[str]]:
        """The versions :meth:`gc` would keep now, each with why."""
        return policy.gc_keeps(**self._gc_inputs(game, keep, window_seconds))

    def _gc_inputs(self, game: str, keep: int, window_seconds: float) -> dict[str, Any]:
        with self._errors(), self._redis.pipeline(transaction=True) as pipe:
            pipe.hkeys(self.keys.index(policy.check_game(game)))
            pipe.hgetall(self.keys.aliases(game))
            pipe.lrange(self.keys.history(game), 0, -1)
            numbers, aliases, history = pipe.execute()
        return {"versions": [int(v) for v in numbers], "keep": keep,
                "aliases": {as_text(a): int(v) for a, v in aliases.items()},
                "history": [AliasChange.from_json(game, h) for h in history],
                "window_seconds": window_seconds, "now": dt.datetime.now(dt.UTC)}

    def gc(self, *, game: str, keep: int, window_seconds: float = 7 * 86400,
           by: str) -> list[int]:
        """Delete old versions; keep the newest ``keep``, every aliased version and every
        version the history names within ``window_seconds``. Returns the deleted numbers.

        Also keeps every alias's rollback target. Deleted numbers are never reused, and
        asking for one later says gc deleted it. Emits a ``gc`` event if anything went.
        """
        by = policy.check_by(by)
        victims = self.gc_plan(game=game, keep=keep, window_seconds=window_seconds)
        if not victims:
            return []
        at = now_iso()
        k = self.keys
        with self._errors():
            gone = self._delete(
                keys=[k.index(game), k.aliases(game), k.deleted(game), k.counter],
                args=[k.payload_prefix(game), json.dumps({"at": at, "by": by}),
                      json.dumps({"game": game, "type": "gc", "at": at, "by": by}), k.events,
                      *victims])
        return sorted(int(v) for v in gone)

    # -- aliases and rollouts -----------------------------------------------------------

    def resolve(self, *, game: str, ref: str) -> int | None:
        """An alias name or a version number (as text) -> the version, or ``None``.

        ``latest`` names the newest stored version.
        """
        policy.check_game(game)
        ref = str(ref).strip()
        if policy.is_number(ref):
            version = int(ref)
            return version if self.version(game=game, version=version) else None
        if ref == policy.LATEST:
            with self._errors():
                numbers = self._redis.hkeys(self.keys.index(game))
            return max((int(v) for v in numbers), default=None)
        with self._errors():
            raw = self._redis.hget(self.keys.aliases(game), ref)
        return None if raw is None else int(raw)

    def rollout(self, *, game: str) -> Rollout:
        """Aliases, canary weight and change counter of ``game`` in one consistent read."""
        policy.check_game(game)
        with self._errors(), self._redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(self.keys.aliases(game))
            pipe.get(self.keys.weight(game))
            pipe.get(self.keys.counter)
            pipe.get(self.keys.pin(game))
            pipe.get(self.keys.shadow(game))
            aliases, weight, counter, pin, shadow = pipe.execute()
        return Rollout(game=game, aliases={as_text(a): int(v) for a, v in aliases.items()},
                       canary_weight=int(weight or 0), counter=int(counter or 0),
                       pin=None if pin is None else Pin.from_json(game, pin),
                       shadow_share=int(shadow or 0))

    def set_alias(self, *, game: str, alias: str, version: int, by: str, pin: bool = False,
                  unless_pinned: bool = False) -> AliasChange:
        """Point ``alias`` at ``version`` (which must exist and verify); appends to history
        and emits an ``alias`` event. Raises ``UnknownVersion`` or ``AliasRefused`` (also
        when the stored bytes no longer match their sha256).

        Setting an alias to the version it already has changes nothing (no history entry,
        no event) and returns a change with ``from == to`` (but ``pin`` still pins).

        Args:
            pin: an operator's promotion of ``production``: pin it, in the same atomic
                write, so automatic promotion holds off until :meth:`release`.
            unless_pinned: an automatic promotion: refused with :class:`Pinned`, changing
                nothing, while production is pinned (checked inside the write).
        """
        change = self._change(game=game, alias=policy.check_alias(alias), version=version,
                              by=by, action="set", pin=pin, unless_pinned=unless_pinned)
        assert change is not None  # only an ``expect`` change can come back empty
        return change

    def rollback(self, *, game: str, alias: str = "production", by: str,
                 pin: bool = False) -> AliasChange:
        """Point ``alias`` back at its previous target in the history.

        Repeated rollbacks walk further back (1 -> 2 -> 3: rollbacks go to 2, then 1); see
        :func:`gameai.store.policy.rollback_target`. ``pin`` pins production there, as
        :meth:`set_alias` does.

        Raises:
            AliasRefused: there is no earlier target, or it no longer verifies.
            UnknownVersion: the earlier target was deleted by gc.
        """
        policy.check_alias(alias)
        for _ in range(_CAS_ATTEMPTS):
            history = self.history(game=game)
            current = self.rollout(game=game).aliases.get(alias)
            target = policy.rollback_target(history, alias)
            if current is None:
                raise AliasRefused(f"{game} has no alias {alias!r} to roll back")
            if target is None:
                raise AliasRefused(f"{game} alias {alias!r} has no earlier version to roll back "
                                   f"to (it is at {current})")
            change = self._change(game=game, alias=alias, version=target, by=by,
                                  action="rollback", expect=True, expected=current, pin=pin)
            if change is not None:
                return change
        raise StoreError(f"{game} alias {alias!r} kept changing during rollback; try again")

    def set_canary(self, *, game: str, version: int | None, weight: int, by: str) -> None:
        """Point ``canary`` at ``version`` (``None`` keeps the current one) and set the share
        of traffic (0-100) it receives. Emits a ``canary`` event.

        Raises:
            AliasRefused: a bad weight, or a weight above 0 with no canary version.
            UnknownVersion: ``version`` does not exist.
        """
        policy.check_weight(weight)
        self._change(game=game, alias="canary", version=version, by=by, action="canary",
                     weight=weight)

    def set_shadow(self, *, game: str, version: int | None, share: int, by: str) -> None:
        """Point ``shadow`` at ``version`` (``None`` keeps the current one) and set the
        share (0-100) of production's best-move queries that servers mirror to it, off the
        request path (:mod:`gameai.service.shadow`); it never answers a client. Emits a
        ``shadow`` event and records the change in the history (action ``shadow``).

        Raises:
            AliasRefused: a bad share, or a share above 0 with no shadow version.
            UnknownVersion: ``version`` does not exist.
        """
        policy.check_weight(share, "shadow share")
        self._change(game=game, alias="shadow", version=version, by=by, action="shadow",
                     weight=share, weight_key=self.keys.shadow(game))

    def record_shadow(self, *, game: str, version: int, production: int,
                      counts: dict[str, int]) -> None:
        """Add ``counts`` (tallies of :data:`gameai.store.records.SHADOW_TALLIES`) to what
        shadowing ``version`` found against ``production`` (one round trip; every server
        adds its own)."""
        policy.check_game(game)
        key = self.keys.shadow_tally(game, int(version))
        with self._errors(), self._redis.pipeline(transaction=True) as pipe:
            for name, count in counts.items():
                if name not in SHADOW_TALLIES:
                    raise InvalidArgument(f"no shadow tally {name!r}")
                pipe.hincrby(key, f"{int(production)}:{name}", int(count))
            pipe.hset(key, "updated_at", now_iso())
            pipe.execute()

    def shadow_reports(self, *, game: str, version: int) -> list[ShadowReport]:
        """What shadowing ``version`` found, one report per production version it was
        compared with, the most compared first (empty if never shadowed)."""
        policy.check_game(game)
        with self._errors():
            raw = self._redis.hgetall(self.keys.shadow_tally(game, int(version)))
        fields = {as_text(k): as_text(v) for k, v in raw.items()}
        updated = fields.pop("updated_at", None)
        by_production: dict[int, dict[str, int]] = {}
        for name, value in fields.items():
            production, _, tally = name.partition(":")
            if production.isdigit() and tally in SHADOW_TALLIES:
                by_production.setdefault(int(production), {})[tally] = int(value)
        reports = [ShadowReport(game=game, version=int(version), production=p,
                                updated_at=updated, **counts)
                   for p, counts in by_production.items()]
        return sorted(reports, key=lambda r: (-r.compared, -r.production))

    def pin(self, *, game: str, by: str) -> Pin:
        """Pin ``production`` where it points now: automatic promotion holds off until
        :meth:`release`. Recorded in the history (action ``pin``); emits a ``pin`` event.

        Raises:
            AliasRefused: the game has no production version to pin.
        """
        pinned = self._pin_change(game=game, by=by, pin=True)
        assert pinned is not None
        return pinned

    def release(self, *, game: str, by: str) -> Pin | None:
        """Release the pin on ``production`` so automatic promotion may move it again.
        Returns the pin released, or ``None`` (changing nothing) if there was none.
        Recorded in the history (action ``release``); emits a ``pin`` event."""
        return self._pin_change(game=game, by=by, pin=False)

    def pinned(self, *, game: str) -> Pin | None:
        """The pin on ``production``, or ``None`` when auto-promotion may move it."""
        policy.check_game(game)
        with self._errors():
            raw = self._redis.get(self.keys.pin(game))
        return None if raw is None else Pin.from_json(game, raw)

    def _pin_change(self, *, game: str, by: str, pin: bool) -> Pin | None:
        policy.check_game(game)
        by = policy.check_by(by)
        at = now_iso()
        action = "pin" if pin else "release"
        record = Pin(game=game, version=None, at=at, by=by, action="pin")
        k = self.keys
        with self._errors():
            status, had = self._set_pin(
                keys=[k.pin(game), k.aliases(game), k.history(game), k.counter],
                args=[json.dumps(record.to_json()) if pin else "",
                      json.dumps({"alias": "production", "at": at, "by": by,
                                  "action": action}),
                      json.dumps({"game": game, "type": "pin", "alias": "production",
                                  "pinned": pin, "at": at, "by": by, "action": action}),
                      k.events])
        if status == b"unset":
            raise AliasRefused(f"{game} has no production version to pin")
        if pin:
            return self.pinned(game=game)
        return None if status == b"none" else Pin.from_json(game, had)

    def history(self, *, game: str) -> list[AliasChange]:
        """Every alias change of ``game``, oldest first."""
        policy.check_game(game)
        with self._errors():
            raw = self._redis.lrange(self.keys.history(game), 0, -1)
        return [AliasChange.from_json(game, h) for h in raw]

    def _change(self, *, game: str, alias: str, version: int | None, by: str, action: str,
                weight: int | None = None, expect: bool = False,
                expected: int | None = None, pin: bool = False,
                unless_pinned: bool = False, weight_key: str | None = None
                ) -> AliasChange | None:
        """Move ``alias`` (and maybe the canary weight) with compare-and-set: read the
        current value, verify the target, then let the script write only if the alias still
        holds what was read. With ``expect``, returns ``None`` as soon as the alias is not
        at ``expected`` (rollback then re-plans). ``pin`` and ``unless_pinned``: see
        :meth:`set_alias`."""
        policy.check_game(game)
        by = policy.check_by(by)
        if (pin or unless_pinned) and alias != "production":
            raise AliasRefused(f"only production is pinned, not {alias!r}")
        if version is not None:
            version = int(version)
            try:
                self.verified_payload(game=game, version=version)
            except CorruptModel as e:
                raise AliasRefused(f"{alias!r} cannot point at {game} version {version}: "
                                   f"{e}") from e
        k = self.keys
        weight_key = weight_key or k.weight(game)
        for _ in range(_CAS_ATTEMPTS):
            state = self.rollout(game=game)
            current = state.aliases.get(alias)
            if expect and current != expected:
                return None
            to = current if version is None else version
            if weight is not None and weight > 0 and to is None:
                raise AliasRefused(f"{game} has no {alias} version to send {weight}% of "
                                   f"traffic to: point the {alias} at a version first")
            share = state.shadow_share if alias == "shadow" else state.canary_weight
            at = now_iso()
            change = AliasChange(game=game, alias=alias, from_version=current, to_version=to,
                                 at=at, by=by, action=action)
            moved = to != current
            if not moved and (weight is None or weight == share):
                if pin and state.pin is None:  # an operator confirms production: pin it
                    self._pin_change(game=game, by=by, pin=True)
                return change
            kind = alias if weight is not None else "alias"  # canary or shadow
            event: dict[str, Any] = {"game": game, "type": kind, "alias": alias, "version": to,
                                     "at": at, "by": by, "action": action}
            if weight is not None:
                event["weight"] = weight
            if moved:
                event["from"] = current
            if pin:
                event["pinned"] = True
            entry = json.dumps(change.to_json()) if moved else ""
            pin_arg = "respect" if unless_pinned else ""
            if pin:
                pin_arg = json.dumps(Pin(game=game, version=to, at=at, by=by,
                                         action=action).to_json())
            with self._errors():
                status, detail = self._change_alias(
                    keys=[k.index(game), k.aliases(game), k.history(game), k.counter,
                          weight_key, k.pin(game)],
                    args=[alias, "" if not moved else str(to),
                          "" if current is None else str(current), entry,
                          "" if weight is None else str(weight), json.dumps(event), k.events,
                          pin_arg])
                # a conflict whose newest history entry is ours: redis-py retried this very
                # script after its reply was lost, so the change is done (never do it twice)
                if status == b"ok" or (moved and status == b"conflict" and as_text(
                        self._redis.lindex(k.history(game), -1) or b"") == entry):
                    return change
            if status == b"missing":
                raise UnknownVersion(self._missing_message(game, int(detail)))
            if status == b"pinned":
                held = Pin.from_json(game, detail)
                raise Pinned(f"{game} production is {held.describe()}; automatic promotion "
                             f"holds off until it is released (gameai models release --game "
                             f"{game})")
        raise StoreError(f"{game} alias {alias!r} kept changing; try again")

    # -- change notification -------------------------------------------------------------

    def counter(self) -> int:
        """A number that grows with every change of any game: poll it as a fallback."""
        with self._errors():
            return int(self._redis.get(self.keys.counter) or 0)

    def subscribe(self, callback: Callable[[Event], None], *,
                  on_status: Callable[[bool], None] | None = None) -> Subscription:
        """Call ``callback(event)`` from a background thread for every change event.

        The listener reconnects by itself with backoff. ``on_status(True)`` is called on
        every (re)connection and ``on_status(False)`` when the connection is lost: after a
        reconnection, re-read ``rollout()``, since events sent meanwhile are gone.
        Callbacks run on the listener thread; an exception in one is logged, not raised.
        """
        client = connect(self._url, timeout=self._timeout, retries=self._retries,
                         health_check_interval=5)
        return Subscription(client, self.keys.events, callback, on_status=on_status)
