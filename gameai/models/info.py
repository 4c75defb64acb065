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


def _score_interval(m: dict[str, Any]) -> tuple[float, float]:
    """A score measure's 95% interval as shown to people. When every game had the same
    result, the score's variance is 0 and its interval a point, which says nothing of the
    next games: shown instead is what the Wilson interval of that result's rate allows
    (200 wins of 200: at least 0.981)."""
    low, high = m["score"]["low"], m["score"]["high"]
    if low != high or not m.get("games"):
        return low, high
    for result, rate in (("wins", "win_rate"), ("draws", "draw_rate"),
                         ("losses", "loss_rate")):
        if m.get(result) == m["games"] and isinstance(m.get(rate), dict):
            other = 1.0 - float(m[rate]["low"])  # the largest share of other results
            return {"wins": (1.0 - other, 1.0), "draws": (0.5 - other / 2, 0.5 + other / 2),
                    "losses": (0.0, other)}[result]
    return low, high


def describe_judged(judged: dict[str, Any]) -> str:
    """One line of the judged measures (the worker's log, ``gameai models list|show``, the
    level picker): each match won/drawn/lost with its score and 95% interval."""
    parts = []
    for m in judged["measures"]:
        if m["kind"] == "score":
            low, high = _score_interval(m)
            parts.append(f"{m['name']} {m['wins']}/{m['draws']}/{m['losses']} (score "
                         f"{m['score']['value']:.3f} in [{low:.3f}, {high:.3f}])")
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
