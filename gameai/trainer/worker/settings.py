"""The worker's one settings object, from flags over environment variables over defaults
(docs/contracts.md, docs/configuration.md), checked at start: a bad value stops the worker
with a message naming the setting and its flag. The settings with a variable are declared
once (:data:`WORKER`, with :mod:`gameai.settings`), like the server's; the rest are flags
of ``gameai trainer``, checked by its parser."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gameai.games import Game, GameError, get_game
from gameai.settings import HOST, LOG_LEVEL, Setting, SettingsError, read, whole_number
from gameai.store.connect import STORE, StoreSettings
from gameai.trainer.training import LEARNERS

PUBLISH_EVERY = {"td": 10_000, "qlearning": 50_000, "tally": 500_000,
                 "ntuple": 100_000}  # games
STORE_TIMEOUT = 1.0  # seconds per store call: an outage costs a round a second, not more

__all__ = ["WORKER", "SettingsError", "WorkerSettings", "load_settings"]

METRICS_PORT = Setting("metrics_port", "GAMEAI_METRICS_PORT", "--metrics-port",
                       whole_number(0, 65535), 9100)
WORKER: tuple[Setting, ...] = (*STORE, METRICS_PORT, LOG_LEVEL, HOST)


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
    bundled: bool = True  # with resume on an empty store: start from the bundled model
    promote: str = "auto"
    publish: str = "better"  # or "every": every candidate, better or not
    eval_share: float = 0.1  # of the worker's time spent evaluating, at most
    seed: int = 0
    params: dict[str, str] = field(default_factory=dict)
    max_games: int | None = None
    log_level: str = "info"
    judge_games: int = 100  # games a match of the gates' judge (boards past the tables)
    judge_time: float = 2.0  # seconds of solver search per opponent move there
    shadow_gate: int = 0  # proved live queries a shadow test needs before promotion (0: none)
    shadow_share: int = 100  # percent of production's best-move queries shadowed meanwhile
    cluster: str | None = None  # a Ray cluster for the n-tuple learner's actors ("auto")
    on_node_loss: str = "continue"  # a dead node's unsent games: to the rest, or "wait"


def load_settings(flags: Mapping[str, Any], env: Mapping[str, str] | None = None
                  ) -> WorkerSettings:
    """Settings from ``flags`` (the parsed ``gameai trainer`` arguments by name; ``None``
    means not given) over ``env``.

    Raises:
        SettingsError: a value is unusable; the message names it.
    """
    try:
        game = get_game(flags["game"])
    except GameError as e:
        raise SettingsError(f"--game: {e}") from None
    algorithm = flags["algorithm"]
    if algorithm not in LEARNERS:
        raise SettingsError(f"--algorithm: the worker trains {', '.join(LEARNERS)}, "
                            f"not {algorithm!r}")
    values = read(WORKER, flags, env)
    store = StoreSettings(url=values["store_url"], prefix=values["store_prefix"],
                          data_dir=values["data_dir"], timeout=STORE_TIMEOUT,
                          retries=1)  # never stall training long
    port, level, host = values["metrics_port"], values["log_level"], values["host"]
    return WorkerSettings(
        game=game, algorithm=algorithm, store=store,
        publish_every=flags.get("publish_every") or PUBLISH_EVERY[algorithm],
        publish_min_seconds=_seconds(flags.get("publish_min_seconds")),
        metrics_port=port, host=host, from_version=flags.get("from_version"),
        resume=bool(flags.get("resume")), bundled=flags.get("bundled") is not False,
        promote=flags.get("promote") or "auto", publish=flags.get("publish") or "better",
        eval_share=_share(flags.get("eval_share")), seed=_seed(flags.get("seed")),
        params=dict(flags.get("params") or {}), max_games=flags.get("max_games"),
        log_level=level, judge_games=_judge_games(flags.get("judge_games")),
        judge_time=_judge_time(flags.get("judge_time")), cluster=flags.get("cluster"),
        on_node_loss=flags.get("on_node_loss") or "continue",
        shadow_gate=_whole(flags.get("shadow_gate"), "--shadow-gate", 0, 10_000_000, 0),
        shadow_share=_whole(flags.get("shadow_share"), "--shadow-share", 1, 100, 100))


def _whole(raw: Any, flag: str, low: int, high: int, default: int) -> int:
    if raw is None:
        return default
    value = int(raw)
    if not low <= value <= high:
        raise SettingsError(f"{flag}: must be a whole number from {low} to {high}, got {value}")
    return value


def _judge_games(raw: Any) -> int:
    if raw is None:
        return 100
    value = int(raw)
    if not 1 <= value <= 100_000:
        raise SettingsError(f"--judge-games: must be between 1 and 100000, got {value}")
    return value


def _judge_time(raw: Any) -> float:
    if raw is None:
        return 2.0
    value = float(raw)
    if not 0 < value <= 600:
        raise SettingsError(f"--judge-time: must be above 0 and at most 600 seconds, got "
                            f"{value:g}")
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
