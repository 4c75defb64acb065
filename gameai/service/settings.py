"""The server's one settings object: read from flags and environment, validated at start.

Each setting is declared once (:data:`SERVER`, with :mod:`gameai.settings`: its
environment variable, flag, check and default; the store's own come from
:data:`gameai.store.connect.STORE`); a flag wins over the environment. A bad value stops
start-up with :class:`SettingsError` naming the setting, its flag and what is wrong. The
admin token is never part of ``repr`` or any message.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gameai.games import GameError, get_game
from gameai.settings import HOST, LOG_LEVEL, Setting, SettingsError, read, seconds, whole_number
from gameai.store.connect import STORE, default_data_dir
from gameai.store.proved import DEFAULT_MAX_ENTRIES

MIN_TOKEN_LENGTH = 16
# Connect Four's budget, from ``gameai bench server --exact`` (docs/levels.md, "Exact play")
EXACT_MS: tuple[tuple[str, float], ...] = (("connect-four", 1),)
MAX_EXACT_MS = 1000
# what the background prover spends on a position the request's budget did not prove
EXACT_BACKGROUND_MS: tuple[tuple[str, int], ...] = (("connect-four", 2000),)
MAX_EXACT_BACKGROUND_MS = 600_000

__all__ = ["SERVER", "Settings", "SettingsError", "default_workers", "load_settings"]


@dataclass(frozen=True)
class Settings:
    store_url: str | None = None
    store_prefix: str = "gameai"
    data_dir: Path = field(default_factory=lambda: default_data_dir({}))
    http_port: int = 8000
    grpc_port: int = 50051
    host: str = "127.0.0.1"
    games: tuple[str, ...] = ("tictactoe",)
    admin_token: str | None = field(default=None, repr=False)
    log_level: str = "info"
    workers: int = field(default_factory=lambda: default_workers())
    poll_seconds: float = 1.0
    max_batch: int = 10_000
    max_depth: int = 8
    max_nodes: int = 10_000_000
    max_time_ms: int = 10_000
    max_body_bytes: int = 1 << 20
    grace_seconds: float = 10.0
    drain_seconds: float = 1.0
    max_solve_ms: int = 30_000
    shadow_queue: int = 1000
    shadow_solve_ms: int = 20
    ready_when: str = "all"  # ready once every served game has production, or "any" one
    # the solver's budget per best-move query at level best, by game (docs/levels.md)
    exact_ms: tuple[tuple[str, float], ...] = EXACT_MS
    # the background prover's budget a position, by game (docs/levels.md)
    exact_background_ms: tuple[tuple[str, int], ...] = EXACT_BACKGROUND_MS
    proved_max: int = DEFAULT_MAX_ENTRIES  # positions the shared proved table keeps per game


READY_WHEN = ("all", "any")


def default_workers() -> int:
    """Two processes where two cores are available, else one: ``gameai bench server``
    measured two SO_REUSEPORT processes ahead of one asyncio process on two cores
    (docs/service.md). Not more by default: a container's CPU quota is not visible here."""
    return min(2, len(os.sched_getaffinity(0)))


def _games(text: str) -> tuple[str, ...]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise ValueError("must name at least one game")
    try:
        return tuple(dict.fromkeys(get_game(name).name for name in names))
    except GameError as e:
        raise ValueError(str(e)) from None


def _ready_when(text: str) -> str:
    value = text.strip().lower()
    if value not in READY_WHEN:
        raise ValueError(f"must be all (every served game has a production model) or any "
                         f"(at least one has), got {text!r}")
    return value


def _exact_ms(text: str) -> tuple[tuple[str, float], ...]:
    """``game=ms`` pairs, comma-separated (``connect-four=0.5,tictactoe=1``: fractions of
    a millisecond allowed); a game left out, or given 0, plays the network's move without
    asking the solver."""
    return _game_ms(text, MAX_EXACT_MS, fractions=True)


def _exact_background_ms(text: str) -> tuple[tuple[str, int], ...]:
    """``game=ms`` pairs, as :func:`_exact_ms`; a game left out, or given 0, has no
    background prover."""
    return _game_ms(text, MAX_EXACT_BACKGROUND_MS)


def _game_ms(text: str, most: int, *, fractions: bool = False
             ) -> tuple[tuple[str, Any], ...]:
    budgets: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"must be game=milliseconds pairs, got {part!r}")
        try:
            game = get_game(name.strip()).name
        except GameError as e:
            raise ValueError(str(e)) from None
        try:
            ms: float = float(value.strip()) if fractions else int(value.strip())
        except ValueError:
            kind = "a number" if fractions else "a whole number"
            raise ValueError(f"{game}: must be {kind} of milliseconds, got "
                             f"{value.strip()!r}") from None
        if not 0 <= ms <= most:  # NaN fails too
            raise ValueError(f"{game}: must be between 0 and {most} ms, got {ms}")
        budgets[game] = ms
    return tuple(budgets.items())


def _token(text: str) -> str:
    token = text.strip()
    if len(token) < MIN_TOKEN_LENGTH:
        raise ValueError(f"must be at least {MIN_TOKEN_LENGTH} characters (the value is hidden)")
    return token


# The order is the order of checks.
SERVER: tuple[Setting, ...] = (
    *STORE,
    Setting("http_port", "GAMEAI_HTTP_PORT", "--http-port", whole_number(0, 65535), 8000),
    Setting("grpc_port", "GAMEAI_GRPC_PORT", "--grpc-port", whole_number(0, 65535), 50051),
    HOST,
    Setting("games", "GAMEAI_GAMES", "--games", _games, ("tictactoe",)),
    Setting("admin_token", "GAMEAI_ADMIN_TOKEN", None, _token, None,
            file_variable="GAMEAI_ADMIN_TOKEN_FILE", file_flag="--admin-token-file"),
    LOG_LEVEL,
    Setting("workers", "GAMEAI_WORKERS", "--workers", whole_number(1, 64),
            lambda env: default_workers()),
    Setting("poll_seconds", "GAMEAI_POLL_SECONDS", "--poll-seconds", seconds(0.05, 3600), 1.0),
    Setting("max_batch", "GAMEAI_MAX_BATCH", "--max-batch", whole_number(1, 1_000_000), 10_000),
    Setting("max_depth", "GAMEAI_MAX_DEPTH", "--max-depth", whole_number(0, 20), 8),
    Setting("max_nodes", "GAMEAI_MAX_NODES", "--max-nodes", whole_number(1, 1 << 40),
            10_000_000),
    Setting("max_time_ms", "GAMEAI_MAX_TIME_MS", "--max-time-ms",
            whole_number(1, 3_600_000), 10_000),
    Setting("max_body_bytes", "GAMEAI_MAX_BODY_BYTES", "--max-body-bytes",
            whole_number(1024, 1 << 30), 1 << 20),
    Setting("grace_seconds", "GAMEAI_GRACE_SECONDS", "--grace-seconds", seconds(0, 600), 10.0),
    Setting("drain_seconds", "GAMEAI_DRAIN_SECONDS", "--drain-seconds", seconds(0, 600), 1.0),
    Setting("max_solve_ms", "GAMEAI_MAX_SOLVE_MS", "--max-solve-ms",
            whole_number(0, 3_600_000), 30_000),
    Setting("shadow_queue", "GAMEAI_SHADOW_QUEUE", "--shadow-queue",
            whole_number(1, 1_000_000), 1000),
    Setting("shadow_solve_ms", "GAMEAI_SHADOW_SOLVE_MS", "--shadow-solve-ms",
            whole_number(0, 10_000), 20),
    Setting("ready_when", "GAMEAI_READY_WHEN", "--ready-when", _ready_when, "all"),
    Setting("exact_ms", "GAMEAI_EXACT_MS", "--exact-ms", _exact_ms, EXACT_MS),
    Setting("exact_background_ms", "GAMEAI_EXACT_BACKGROUND_MS", "--exact-background-ms",
            _exact_background_ms, EXACT_BACKGROUND_MS),
    Setting("proved_max", "GAMEAI_PROVED_MAX", "--proved-max", whole_number(0, 1 << 32),
            DEFAULT_MAX_ENTRIES),
)


def load_settings(flags: Mapping[str, Any] | None = None,
                  env: Mapping[str, str] | None = None) -> Settings:
    """The settings from ``flags`` (attribute names of :class:`Settings`, plus
    ``store_file`` and ``admin_token_file``; ``None`` means not given) over ``env``.

    Raises:
        SettingsError: a value is unusable; the message names the variable and the flag.
    """
    settings = Settings(**read(SERVER, flags, env))
    if settings.drain_seconds > settings.grace_seconds:
        raise SettingsError(f"GAMEAI_DRAIN_SECONDS (--drain-seconds): must not exceed the grace "
                            f"period GAMEAI_GRACE_SECONDS ({settings.grace_seconds:g} s), got "
                            f"{settings.drain_seconds:g}")
    return settings
