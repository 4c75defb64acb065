"""The models this server holds: loaded, verified and warmed off the request path.

For each served game it reads the rollout, loads any aliased version it does not hold
(verify, then warm), and swaps in a new immutable :class:`Served` snapshot with one
assignment, so a request sees either the old state or the new one, never a mix. The
production version before a switch stays loaded for rollback. Each version is a
:class:`~gameai.service.session.ModelSession` with a bounded cache of its answers;
:meth:`Registry.pick` chooses the version that answers a request (production with its
canary share, an alias or a number). The background thread that calls
:meth:`Registry.refresh` when the store changes is
:class:`gameai.service.follower.StoreFollower`.

When the store is unreachable, or comes back having forgotten an alias or a version, the
registry keeps serving what it holds and says so in :meth:`Registry.readiness` and the
metrics.
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gameai.games import Game, GameError, get_game
from gameai.models import CorruptModel, load_model
from gameai.models.levels import LEVELS
from gameai.service.errors import Loading, Unavailable, UnknownModel
from gameai.service.exact import ExactPlay
from gameai.service.follower import StoreFollower
from gameai.service.metrics import EVALUATION_METRICS, Metrics
from gameai.service.session import ModelSession
from gameai.store import (
    ModelStore,
    Pin,
    UnknownVersion,
    choose_version,
    is_number,
)

log = logging.getLogger("gameai.service")

PINNED_VERSIONS = 4  # versions asked for by number (not aliased) kept per game
LOAD_RESULTS = ("ok", "corrupt", "missing", "error")


@dataclass(frozen=True)
class Served:
    """One game's serving state, replaced whole on every change."""

    game: Game
    aliases: Mapping[str, int] = field(default_factory=dict)
    canary_weight: int = 0
    models: Mapping[int, ModelSession] = field(default_factory=dict)
    previous: int | None = None  # the production version before the last switch
    problems: tuple[str, ...] = ()  # what the store says that this server could not follow
    pin: Pin | None = None  # an operator's pin on production (auto-promotion holds off)
    loading: Mapping[str, int] = field(default_factory=dict)  # aliases whose version loads
    shadow_share: int = 0  # percent of production's best-move queries mirrored to shadow

    @property
    def ready(self) -> bool:
        production = self.aliases.get("production")
        return production is not None and production in self.models


class Registry:
    """Every served game's models, kept in step with the store.

    Args:
        store: the model store (``None`` until connected: the server then answers 503).
        games: names of the games to serve.
        metrics: where loads, aliases and store health are reported.
        poll_seconds: the change counter's poll period, the fallback to pub/sub.
        rng: draws canary buckets for requests without a client id.
        ready_when: ``"all"``: ready once every served game has its production model
            loaded; ``"any"``: once one has (``GAMEAI_READY_WHEN``).
    """

    def __init__(self, store: ModelStore, games: tuple[str, ...], metrics: Metrics, *,
                 poll_seconds: float = 1.0, rng: random.Random | None = None,
                 ready_when: str = "all") -> None:
        self.store = store
        self.ready_when = ready_when
        self.metrics = metrics
        self.poll_seconds = poll_seconds
        self._rng = rng or random.Random()
        self._served: dict[str, Served] = {g.name: Served(g) for g in map(get_game, games)}
        for name in self._served:  # every result from 0: a first failure is an increase
            for result in LOAD_RESULTS:
                metrics.model_loads.labels(name, result)
            for level in LEVELS:
                metrics.level_moves.labels(name, level)
        self._pinned: dict[str, OrderedDict[int, ModelSession]] = {
            g: OrderedDict() for g in self._served}
        # (game, version) -> (fingerprint of the stored bytes that failed to load, the load
        # result): not tried (nor counted, nor logged) again until they change
        self._refused: dict[tuple[str, int], tuple[str, str]] = {}
        self._lock = threading.Lock()  # one refresh or pinned load at a time
        self.store_up = False
        self.set_store_up(False)
        self.follower = StoreFollower(self, poll_seconds=poll_seconds)
        # offers each best-move query production answered to the shadow test, if any:
        # (game, session, board, to_move, depth) -> None, never blocking
        # (gameai.service.shadow.Shadow.offer, set by the composition root)
        self.mirror: Callable[[str, ModelSession, str, str, int | None], None] | None = None
        # proofs for the best level and hints (gameai.service.exact.ExactPlay, set by the
        # composition root; None: the network's moves only, hints solve by themselves)
        self.exact: ExactPlay | None = None

    # -- the request path ---------------------------------------------------------------

    @property
    def games(self) -> list[str]:
        return list(self._served)

    def served(self, name: str) -> Served:
        """The state of a served game, by any of its names.

        Raises:
            UnknownGame, UnknownModel (a game this server does not serve).
        """
        state = self._served.get(name)
        if state is None:
            game = get_game(name)  # raises UnknownGame for names that are no game
            state = self._served.get(game.name)
            if state is None:
                raise UnknownModel(f"game {game.name!r} is not served here; served games: "
                                   f"{', '.join(self._served)}", field="game")
        return state

    def pick(self, state: Served, ref: str, client_id: str) -> ModelSession:
        """The version that answers: ``""`` or ``"production"`` for the production track,
        of which the canary takes its share (sticky per ``client_id``); another alias or
        a version number for exactly that version.

        Raises:
            UnknownModel: no such alias or version.
            Unavailable: the store is down and the version is not held here.
        """
        if not ref or ref == "production":
            if not client_id and state.canary_weight:
                client_id = f"anonymous-{self._rng.random()}"
            version = choose_version(
                game=state.game.name, client_id=client_id,
                production=state.aliases.get("production"), canary=state.aliases.get("canary"),
                weight=state.canary_weight, loaded=state.models)
            if version is None:
                raise self._missing(state, "no production model")
            return state.models[version]
        if is_number(ref):
            version = int(ref)
            held = state.models.get(version) or self._pinned[state.game.name].get(version)
            return held if held is not None else self._load_pinned(state.game, version)
        version_of_alias = state.aliases.get(ref)
        if version_of_alias is None:
            known = ", ".join(sorted(state.aliases)) or "none"
            raise self._missing(state, f"no alias {ref!r} (aliases: {known})", ref)
        return state.models[version_of_alias]

    def _missing(self, state: Served, what: str, alias: str = "production") -> Exception:
        loading = state.loading.get(alias)
        if loading is not None:
            return Loading(f"{alias} of {state.game.name} is version {loading}, which this "
                           "server is loading now: retry in a moment", field="model")
        if not self.store_up:
            return Unavailable(f"{what} of {state.game.name} is held here and the store is "
                               f"unreachable", field="model")
        return UnknownModel(f"{state.game.name} has {what}", field="model")

    def _load_pinned(self, game: Game, version: int) -> ModelSession:
        if not self.store_up:
            raise Unavailable(f"version {version} of {game.name} is not held here and the "
                              "store is unreachable", field="model")
        with self._lock:
            pinned = self._pinned[game.name]
            if version in pinned:
                return pinned[version]
            loaded = self._load(game, version)  # a refused version is re-checked by refresh
            if loaded is None:
                raise UnknownModel(self._refusal(game.name, version), field="model")
            pinned[version] = loaded
            while len(pinned) > PINNED_VERSIONS:
                pinned.popitem(last=False)
            self._count_loaded(game.name)
            return loaded

    # -- readiness ----------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Every served game has its production model (``ready_when="all"``), or one has."""
        states = [state.ready for state in self._served.values()]
        return any(states) if self.ready_when == "any" else all(states)

    def readiness(self) -> dict[str, Any]:
        """What ``/readyz`` shows: per game the served aliases and any problem, and at the
        top what keeps the server from being ready or whole, in words, game by game."""
        games = {
            name: {"ready": state.ready, "aliases": dict(state.aliases),
                   "loading": dict(state.loading), "canary_weight": state.canary_weight,
                   "loaded_versions": sorted(state.models), "problems": list(state.problems)}
            for name, state in self._served.items()
        }
        problems = [] if self.store_up else ["store: unreachable"]
        for name, state in self._served.items():
            if not state.ready:
                problems.append(f"{name}: {self._unready(state)}")
            problems += [f"{name}: {problem}" for problem in state.problems]
        return {"ready": self.ready, "ready_when": self.ready_when,
                "store": "up" if self.store_up else "down",
                "degraded": not self.store_up or any(g["problems"] for g in games.values()),
                "problems": problems, "games": games}

    @staticmethod
    def _unready(state: Served) -> str:
        """Why a game has no production model to answer with."""
        loading = state.loading.get("production")
        if loading is not None:
            return f"production version {loading} is loading"
        production = state.aliases.get("production")
        if production is None:
            return "no production model (nothing trains it, or it has not published yet)"
        return f"production version {production} is not loaded"

    # -- following the store ------------------------------------------------------------

    def start(self, *, wait_seconds: float = 5.0) -> None:
        """Load what the store names now (up to ``wait_seconds``), then follow it
        (:class:`gameai.service.follower.StoreFollower`)."""
        self.follower.start(wait_seconds=wait_seconds)

    def stop(self) -> None:
        self.follower.stop()

    def wake(self) -> None:
        """Ask the follower to check the store now (after an admin change)."""
        self.follower.wake()

    def refresh(self) -> None:
        """Bring every game in step with the store now (raises ``StoreError`` if down)."""
        with self._lock:
            for game, version in list(self._refused):  # damaged bytes replaced: try again
                if self._refused[game, version][0] != self._fingerprint(game, version):
                    del self._refused[game, version]
            for name in self._served:
                self._refresh_game(name)

    def set_store_up(self, up: bool) -> None:
        """Record whether the store answers (for requests, ``/readyz`` and the metrics)."""
        self.store_up = up
        self.metrics.store_up.set(1 if up else 0)

    def _refresh_game(self, name: str) -> None:
        state = self._served[name]
        rollout = self.store.rollout(game=name)
        models = dict(state.models)
        aliases: dict[str, int] = {}
        problems = []
        pending = {alias: version for alias, version in rollout.aliases.items()
                   if version not in models}
        if pending:  # what requests meanwhile get: "loading", not "no such model"
            self._served[name] = state = replace(state, loading=pending)
        for alias, version in sorted(rollout.aliases.items()):
            held = models.get(version)
            # not held, or the store was reset and this number names new bytes now (the
            # model held keeps serving until they load)
            if held is None or not self._still_current(name, held):
                loaded = self._load(state.game, version)
                if loaded is None:
                    problems.append(f"alias {alias} -> version {version} could not be loaded")
                    continue
                models[version] = loaded
            aliases[alias] = version
        for alias, version in state.aliases.items():
            if alias not in aliases and alias not in rollout.aliases:
                problems.append(f"alias {alias} is missing from the store; still serving "
                                f"version {version}")
                aliases[alias] = version
            elif alias not in aliases:
                aliases[alias] = version  # its new target failed to load: keep the old one
        previous = state.previous
        old_production, new_production = state.aliases.get("production"), aliases.get("production")
        if old_production is not None and old_production != new_production:
            previous = old_production
        keep = set(aliases.values()) | ({previous} if previous is not None else set())
        models = {v: m for v, m in models.items() if v in keep}
        weight = rollout.canary_weight if "canary" in aliases else 0
        shadow = rollout.shadow_share if "shadow" in aliases else 0
        self._served[name] = replace(state, aliases=aliases, canary_weight=weight,
                                     models=models, previous=previous, problems=tuple(problems),
                                     pin=rollout.pin, loading={}, shadow_share=shadow)
        self._report(self._served[name])

    def _still_current(self, name: str, held: ModelSession) -> bool:
        """Whether the store's version of this number is the model we hold.

        A version is its number and its bytes. A store that lost its data (FLUSHALL, a
        Redis without persistence restarted) numbers new versions from 1 again, so the
        same number can come to name a different model: compare the sha256 of the bytes.
        A version the store forgot entirely stays held.
        """
        record = self.store.version(game=name, version=held.version)
        if record is None or record.sha256 == held.record.sha256:
            return True
        if (name, held.version) not in self._refused:  # said once, as the refusal is
            log.warning("%s version %d in the store is now a different model (sha256 %s..., was "
                        "%s...): the store was reset; loading the new one", name,
                        held.version, record.sha256[:12], held.record.sha256[:12])
        return False

    def _fingerprint(self, game: str, version: int) -> str:
        """What the store holds for a version: its index sha256 and its bytes' sha256."""
        record = self.store.version(game=game, version=version)
        payload = self.store.payload(game=game, version=version)
        return (f"{record.sha256 if record is not None else '-'}:"
                f"{hashlib.sha256(payload).hexdigest() if payload is not None else '-'}")

    def _load(self, game: Game, version: int) -> ModelSession | None:
        """Load, verify and warm one version; ``None`` (and a counted failure) if it cannot
        be used. A store outage propagates: it is not the version's fault. A version that
        failed is remembered with its bytes' fingerprint and not tried again (nor counted,
        nor logged: once per damage is enough) until those bytes change."""
        if (game.name, version) in self._refused:
            return None
        try:
            record, data = self.store.verified_payload(game=game.name, version=version)
            model = load_model(data)
            if model.game is not game:
                raise CorruptModel(f"version {version} plays {model.game.name}, not {game.name}")
            loaded = ModelSession(version, model, record)
            loaded.warm()
        except UnknownVersion:
            return self._failed(game, version, "missing", "the store has no such version")
        except CorruptModel as e:
            return self._failed(game, version, "corrupt", str(e))
        except GameError as e:
            return self._failed(game, version, "error", str(e))
        self.metrics.model_loads.labels(game.name, "ok").inc()
        log.info("loaded %s version %d (%s)", game.name, version, model.kind)
        return loaded

    def _refusal(self, game: str, version: int) -> str:
        """Why a refused version is not served: the same words however often it is asked."""
        if self._refused[game, version][1] == "missing":
            return f"{game} has no version {version}"
        return f"{game} version {version} cannot be loaded"

    def _failed(self, game: Game, version: int, result: str, why: str) -> ModelSession | None:
        self._refused[game.name, version] = (self._fingerprint(game.name, version), result)
        self.metrics.model_loads.labels(game.name, result).inc()
        log.warning("cannot load %s version %d: %s", game.name, version, why)
        return None

    def _report(self, state: Served) -> None:
        name = state.game.name
        for alias, version in state.aliases.items():
            self.metrics.alias_version.labels(name, alias).set(version)
            evaluation = state.models[version].record.evaluation
            for metric in EVALUATION_METRICS:
                value = evaluation.get(metric)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    self.metrics.model_evaluation.labels(name, alias, metric).set(value)
        self.metrics.canary_weight.labels(name).set(state.canary_weight)
        self.metrics.shadow_share.labels(name).set(state.shadow_share)
        self.metrics.production_pinned.labels(name).set(1 if state.pin else 0)
        self._count_loaded(name)

    def _count_loaded(self, name: str) -> None:
        state = self._served[name]
        extra = set(self._pinned[name]) - set(state.models)
        self.metrics.models_loaded.labels(name).set(len(state.models) + len(extra))

