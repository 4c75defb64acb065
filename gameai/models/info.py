"""Metadata that travels inside every model: where it came from and how good it is."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class ModelInfo:
    """What a model is. The payload's sha256 and version number live in the store's index,
    since they are facts about the stored bytes rather than part of them.

    Attributes:
        game: the game's name (``tictactoe``, ``mnk-4x5-4``...).
        algorithm: the learner (``tally``, ``td``, ``qlearning``, ``mlp``, ``solver``...).
        params: the learner's parameters, JSON values only.
        seed: the random seed of training, if any.
        games_played: self-play games behind the model.
        training_seconds: wall time of training.
        parent_version: the store version it was warm-started from, if any.
        created_at: ISO 8601 UTC time of creation.
        evaluation: the evaluator's report (see ``gameai evaluate``).
    """

    game: str
    algorithm: str
    params: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    games_played: int = 0
    training_seconds: float = 0.0
    parent_version: int | None = None
    created_at: str = field(default_factory=lambda: now_iso())
    evaluation: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelInfo:
        """Build from stored JSON, checking every field's type.

        Raises:
            ValueError: a field is missing, unknown or of the wrong type.
        """
        if not isinstance(data, dict):
            raise ValueError("model metadata must be an object")
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown metadata fields: {', '.join(sorted(unknown))}")
        checks: dict[str, tuple[type, ...]] = {
            "game": (str,), "algorithm": (str,), "params": (dict,), "seed": (int, type(None)),
            "games_played": (int,), "training_seconds": (int, float),
            "parent_version": (int, type(None)), "created_at": (str,), "evaluation": (dict,),
        }
        for name, types in checks.items():
            if name in ("game", "algorithm") and name not in data:
                raise ValueError(f"metadata field {name!r} is missing")
            value = data.get(name)
            wrong_type = not isinstance(value, types) or (isinstance(value, bool)
                                                          and bool not in types)
            if name in data and wrong_type:
                raise ValueError(f"metadata field {name!r} has the wrong type")
        return cls(**data)

    def with_updates(self, **changes: Any) -> ModelInfo:
        return ModelInfo(**{**self.to_json(), **changes})


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def describe_judged(judged: dict[str, Any]) -> str:
    """One line of the judged measures (the worker's log, ``gameai models list|show``): each
    match won/drawn/lost with its score and 95% interval."""
    parts = []
    for m in judged["measures"]:
        if m["kind"] == "score":
            parts.append(f"{m['name']} {m['wins']}/{m['draws']}/{m['losses']} (score "
                         f"{m['score']['value']:.3f} in [{m['score']['low']:.3f}, "
                         f"{m['score']['high']:.3f}])")
        elif m["kind"] == "rate":
            parts.append(f"{m['name']} {m['value']:.6f}")
        else:
            parts.append(f"{m['name']} {m['value']:,}")
    unproved = judged.get("unproved_moves")
    tail = f", {unproved} unproved opponent moves" if unproved else ""
    return f"{'; '.join(parts)} ({judged['seconds']} s{tail})"


def same_model(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two models' metadata (``ModelInfo.to_json``) describe the same model: the
    exact solver's tables are one policy whenever they were made; a learned model is its
    algorithm, seed, games and time of creation."""
    if a.get("game") != b.get("game") or a.get("algorithm") != b.get("algorithm"):
        return False
    if a.get("algorithm") == "solver":
        return True
    keys = ("seed", "games_played", "created_at")
    return all(a.get(k) == b.get(k) for k in keys)
