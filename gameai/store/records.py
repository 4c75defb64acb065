"""What the store returns: plain, immutable records with their JSON forms."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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


@dataclass(frozen=True)
class AliasChange:
    """One entry of the alias history: ``alias`` moved ``from_version`` -> ``to_version``."""

    game: str
    alias: str
    from_version: int | None
    to_version: int | None
    at: str
    by: str

    def to_json(self) -> dict[str, Any]:
        return {"alias": self.alias, "from": self.from_version, "to": self.to_version,
                "at": self.at, "by": self.by}


@dataclass(frozen=True)
class Rollout:
    """A game's routing state, read in one round trip: aliases, canary weight, counter."""

    game: str
    aliases: dict[str, int]
    canary_weight: int
    counter: int

    @property
    def production(self) -> int | None:
        return self.aliases.get("production")

    @property
    def canary(self) -> int | None:
        return self.aliases.get("canary")
