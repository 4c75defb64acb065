"""What the store returns: plain, immutable records with their JSON forms."""

from __future__ import annotations

import json
from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

from gameai.store.routing import choose_version


@dataclass(frozen=True)
class VersionRecord:
    """One published version's index entry: everything but the payload bytes.

    ``info`` is the model's own metadata (:class:`gameai.models.ModelInfo` as JSON, with
    its ``evaluation`` report); ``sha256`` and ``size`` describe the stored payload.
    """

    game: str
    version: int
    sha256: str
    size: int
    kind: str
    published_at: str
    published_by: str
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def algorithm(self) -> str:
        return str(self.info.get("algorithm", ""))

    @property
    def evaluation(self) -> dict[str, Any]:
        return dict(self.info.get("evaluation") or {})

    def to_json(self) -> dict[str, Any]:
        """The form ``gameai models list --json`` prints for each version."""
        return {
            "version": self.version,
            "sha256": self.sha256,
            "size": self.size,
            "kind": self.kind,
            "algorithm": self.algorithm,
            "games_played": self.info.get("games_played", 0),
            "created_at": self.info.get("created_at"),
            "published_at": self.published_at,
            "published_by": self.published_by,
            "parent_version": self.info.get("parent_version"),
            "evaluation": self.evaluation,
        }

    def index_json(self) -> str:
        """The stored index entry: everything but the version, which is the hash field
        (the publish script learns the number only when it runs)."""
        return json.dumps({"game": self.game, "sha256": self.sha256, "size": self.size,
                           "kind": self.kind, "published_at": self.published_at,
                           "published_by": self.published_by, "info": self.info},
                          sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_index(cls, version: int, raw: bytes | str) -> VersionRecord:
        data = json.loads(raw)
        return cls(game=data["game"], version=version, sha256=data["sha256"],
                   size=data["size"], kind=data["kind"], published_at=data["published_at"],
                   published_by=data["published_by"], info=data.get("info") or {})


@dataclass(frozen=True)
class AliasChange:
    """One entry of the alias history: ``alias`` moved ``from_version`` -> ``to_version``.

    ``action`` says how: ``set`` (promote / set_alias), ``canary`` (set_canary) or
    ``rollback``; rollback entries are what make repeated rollbacks walk further back.
    """

    game: str
    alias: str
    from_version: int | None
    to_version: int | None
    at: str
    by: str
    action: str = "set"

    def to_json(self) -> dict[str, Any]:
        return {"alias": self.alias, "from": self.from_version, "to": self.to_version,
                "at": self.at, "by": self.by, "action": self.action}

    @classmethod
    def from_json(cls, game: str, raw: bytes | str) -> AliasChange:
        data = json.loads(raw)
        return cls(game=game, alias=data["alias"], from_version=data["from"],
                   to_version=data["to"], at=data["at"], by=data["by"],
                   action=data.get("action", "set"))


@dataclass(frozen=True)
class Pin:
    """An operator's hold on ``production``: set by a manual promote or rollback (or
    ``pin``), it keeps automatic promotion off until someone releases it.

    ``action`` says how it was set: ``set`` (a promote), ``rollback`` or ``pin``;
    ``version`` is where production pointed then.
    """

    game: str
    version: int | None
    at: str
    by: str
    action: str

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "at": self.at, "by": self.by, "action": self.action}

    def describe(self) -> str:
        how = {"set": "promoted to", "rollback": "rolled back to"}.get(self.action, "at")
        return f"pinned by {self.by} at {self.at} ({how} version {self.version})"

    @classmethod
    def from_json(cls, game: str, raw: bytes | str) -> Pin:
        data = json.loads(raw)
        return cls(game=game, version=data.get("version"), at=data.get("at", ""),
                   by=data.get("by", ""), action=data.get("action", "pin"))


SHADOW_TALLIES = ("compared", "agreed", "proved", "production_optimal", "shadow_optimal",
                  "dropped")


@dataclass(frozen=True)
class ShadowReport:
    """What shadowing one version found against one production version: queries compared,
    those where its best move was production's, those the solver proved, and how many of
    those each version answered optimally; queries dropped because the shadow queue was
    full (never compared)."""

    game: str
    version: int
    production: int
    compared: int = 0
    agreed: int = 0
    proved: int = 0
    production_optimal: int = 0
    shadow_optimal: int = 0
    dropped: int = 0
    updated_at: str | None = None

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.compared if self.compared else None

    def optimal_rate(self, who: str) -> float | None:
        """``who`` (production or shadow): the share of proved queries answered optimally."""
        if not self.proved:
            return None
        return (self.shadow_optimal if who == "shadow" else self.production_optimal) / self.proved

    def to_json(self) -> dict[str, Any]:
        def rounded(x: float | None) -> float | None:
            return None if x is None else round(x, 6)
        return {"version": self.version, "production": self.production,
                **{name: getattr(self, name) for name in SHADOW_TALLIES},
                "agreement": rounded(self.agreement),
                "production_optimal_rate": rounded(self.optimal_rate("production")),
                "shadow_optimal_rate": rounded(self.optimal_rate("shadow")),
                "updated_at": self.updated_at}

    def describe(self) -> str:
        """One line for people."""
        if not self.compared:
            return (f"version {self.version} against production {self.production}: nothing "
                    f"compared yet ({self.dropped:,} dropped)")
        text = (f"version {self.version} against production {self.production}: "
                f"{self.compared:,} queries compared, agrees {100 * (self.agreement or 0):.1f}%")
        if self.proved:
            text += (f"; optimal {100 * (self.optimal_rate('shadow') or 0):.1f}% against "
                     f"production's {100 * (self.optimal_rate('production') or 0):.1f}% "
                     f"({self.proved:,} proved)")
        else:
            text += "; none proved by the solver"
        if self.dropped:
            text += f"; {self.dropped:,} dropped (queue full)"
        return text


@dataclass(frozen=True)
class Rollout:
    """A game's routing state, read in one round trip: aliases, canary weight, counter,
    and the operator's pin on production (``None``: auto-promotion may move it)."""

    game: str
    aliases: dict[str, int]
    canary_weight: int
    counter: int
    pin: Pin | None = None
    shadow_share: int = 0  # percent of production's best-move queries mirrored to shadow

    @property
    def production(self) -> int | None:
        return self.aliases.get("production")

    @property
    def canary(self) -> int | None:
        return self.aliases.get("canary")

    @property
    def shadow(self) -> int | None:
        return self.aliases.get("shadow")

    def route(self, client_id: str, *, loaded: Container[int]) -> int | None:
        """The version that answers ``client_id`` (sticky canary split, see
        :func:`gameai.store.routing.choose_version`); never one outside ``loaded``."""
        return choose_version(game=self.game, client_id=client_id, production=self.production,
                              canary=self.canary, weight=self.canary_weight, loaded=loaded)

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "aliases": dict(self.aliases),
                "canary_weight": self.canary_weight, "counter": self.counter,
                "pin": self.pin.to_json() if self.pin else None,
                "shadow_share": self.shadow_share}
