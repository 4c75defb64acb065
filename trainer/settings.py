"""The worker's one settings object, from flags over environment variables over defaults
(docs/contracts.md, docs/configuration.md), checked at start: a bad value stops the worker
with a message naming the setting and its flag."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gameai.games import Game, GameError, get_game
from gameai.store.connect import StoreSettings
from gameai.store.errors import InvalidArgument
from trainer.training import LEARNERS

PUBLISH_EVERY = {"td": 10_000, "qlearning": 50_000, "tally": 500_000}  # games
LOG_LEVELS = ("debug", "info", "warning", "error")
STORE_TIMEOUT = 1.0  # seconds per store call: an outage costs a round a second, not more


class SettingsError(ValueError):
    """A setting that cannot be used; the message names it."""


@dataclass(frozen=True)
class WorkerSettings:
    game: Game
    algorithm: str
    store: StoreSettings
    publish_every: int
    publish_min_seconds: float = 60.0
    metrics_port: int = 9100
    host: str = "127.0.0.1"
    from_version: str | None = None
    resume: bool = False  # warm-start from production when the store has one
    promote: str = "auto"
    publish: str = "better"  # or "every": every candidate, better or not
    eval_share: float = 0.1  # of the worker's time spent evaluating, at most
    seed: int = 0
    params: dict[str, str] = field(default_factory=dict)
    max_games: int | None = None
    log_level: str = "info"


def load_settings(flags: Mapping[str, Any], env: Mapping[str, str] | None = None
                  ) -> WorkerSettings:
    """Settings from ``flags`` (the parsed ``gameai trainer`` arguments by name; ``None``
    means not given) over ``env``.

    Raises:
        SettingsError: a value is unusable; the message names it.
    """
    env = os.environ if env is None else env
    try:
        game = get_game(flags["game"])
    except GameError as e:
        raise SettingsError(f"--game: {e}") from None
    algorithm = flags["algorithm"]
    if algorithm not in LEARNERS:
        raise SettingsError(f"--algorithm: the worker trains {', '.join(LEARNERS)}, "
                            f"not {algorithm!r}")
    try:
        store = StoreSettings.from_env(env, url=flags.get("store"),
                                       url_file=flags.get("store_file"),
                                       prefix=flags.get("store_prefix"),
                                       data_dir=flags.get("data_dir"))
    except InvalidArgument as e:
        raise SettingsError(f"GAMEAI_STORE_URL (--store): {e}") from None
    store = replace(store, timeout=STORE_TIMEOUT, retries=1)  # never stall training long
    if store.url and not store.url.startswith(("redis://", "rediss://", "unix://")):
        raise SettingsError("GAMEAI_STORE_URL (--store): must start with redis://, rediss:// "
                            "or unix://")
    port = _int(flags.get("metrics_port"), env.get("GAMEAI_METRICS_PORT"), 9100,
                "GAMEAI_METRICS_PORT (--metrics-port)", 0, 65535)
    level = (flags.get("log_level") or env.get("GAMEAI_LOG_LEVEL") or "info").strip().lower()
    if level not in LOG_LEVELS:
        raise SettingsError(f"GAMEAI_LOG_LEVEL (--log-level): must be one of "
                            f"{', '.join(LOG_LEVELS)}, got {level!r}")
    host = (flags.get("host") or env.get("GAMEAI_HOST") or "127.0.0.1").strip()
    return WorkerSettings(
        game=game, algorithm=algorithm, store=store,
        publish_every=flags.get("publish_every") or PUBLISH_EVERY[algorithm],
        publish_min_seconds=_seconds(flags.get("publish_min_seconds")),
        metrics_port=port, host=host, from_version=flags.get("from_version"),
        resume=bool(flags.get("resume")),
        promote=flags.get("promote") or "auto", publish=flags.get("publish") or "better",
        eval_share=_share(flags.get("eval_share")), seed=_seed(flags.get("seed")),
        params=dict(flags.get("params") or {}), max_games=flags.get("max_games"),
        log_level=level)


def _int(flag: Any, variable: str | None, default: int, name: str, low: int, high: int) -> int:
    raw = flag if flag is not None else variable
    if raw is None or raw == "":
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        raise SettingsError(f"{name}: must be a whole number, got {raw!r}") from None
    if not low <= value <= high:
        raise SettingsError(f"{name}: must be between {low} and {high}, got {value}")
    return value


def _seed(raw: Any) -> int:
    """``--seed``, or a fresh random one: a trainer started without one (``gameai up``,
    Compose) must not replay the same games after every restart, and the seed it drew is
    recorded in every version it publishes."""
    return int(raw) if raw is not None else secrets.randbelow(2**31)


def _share(raw: Any) -> float:
    if raw is None:
        return 0.1
    value = float(raw)
    if not 0 < value <= 1:
        raise SettingsError(f"--eval-share: must be above 0 and at most 1, got {value:g}")
    return value


def _seconds(raw: Any) -> float:
    if raw is None:
        return 60.0
    value = float(raw)
    if not 0 <= value <= 86400:
        raise SettingsError(f"--publish-min-seconds: must be between 0 and 86400, got {value:g}")
    return value
