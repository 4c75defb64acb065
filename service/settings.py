"""The server's one settings object: read from flags and environment, validated at start.

Each setting has an environment variable (``docs/contracts.md``) and a flag; a flag wins
over the environment. A bad value stops start-up with :class:`SettingsError` naming the
setting, its flag and what is wrong. The admin token is never part of ``repr`` or any
message.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gameai.games import GameError, get_game
from gameai.store.connect import default_data_dir

MIN_TOKEN_LENGTH = 16
LOG_LEVELS = ("debug", "info", "warning", "error")


class SettingsError(ValueError):
    """A setting that cannot be used; the message names it."""


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
    max_body_bytes: int = 1 << 20
    grace_seconds: float = 10.0
    drain_seconds: float = 1.0


def default_workers() -> int:
    """Two processes where two cores are available, else one: ``gameai bench server``
    measured two SO_REUSEPORT processes ahead of one asyncio process on two cores
    (docs/service.md). Not more by default: a container's CPU quota is not visible here."""
    return min(2, len(os.sched_getaffinity(0)))


# name -> (environment variable, flag, parser); the order is the order of checks.
_SOURCES: dict[str, tuple[str, str, Callable[[str], Any]]] = {}


def _setting(name: str, env: str, flag: str) -> Callable[[Callable[[str], Any]], Any]:
    def register(parse: Callable[[str], Any]) -> Callable[[str], Any]:
        _SOURCES[name] = (env, flag, parse)
        return parse
    return register


def _int_in(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError(f"must be a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise ValueError(f"must be between {low} and {high}, got {value}")
        return value
    return parse


def _seconds(low: float, high: float) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            raise ValueError(f"must be a number of seconds, got {text!r}") from None
        if not low <= value <= high:
            raise ValueError(f"must be between {low:g} and {high:g} seconds, got {value:g}")
        return value
    return parse


def _store_url(text: str) -> str:
    text = text.strip()
    if not text.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError("must start with redis://, rediss:// or unix://")
    return text


def _games(text: str) -> tuple[str, ...]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise ValueError("must name at least one game")
    try:
        return tuple(dict.fromkeys(get_game(name).name for name in names))
    except GameError as e:
        raise ValueError(str(e)) from None


def _token(text: str) -> str:
    token = text.strip()
    if len(token) < MIN_TOKEN_LENGTH:
        raise ValueError(f"must be at least {MIN_TOKEN_LENGTH} characters (the value is hidden)")
    return token


def _log_level(text: str) -> str:
    level = text.strip().lower()
    if level not in LOG_LEVELS:
        raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}, got {text!r}")
    return level


def _prefix(text: str) -> str:
    prefix = text.strip()
    if not prefix or any(c.isspace() for c in prefix):
        raise ValueError("must be a non-empty word without spaces")
    return prefix


_setting("store_url", "GAMEAI_STORE_URL", "--store")(_store_url)
_setting("store_prefix", "GAMEAI_STORE_PREFIX", "--store-prefix")(_prefix)
_setting("data_dir", "GAMEAI_DATA_DIR", "--data-dir")(lambda t: Path(t).expanduser())
_setting("http_port", "GAMEAI_HTTP_PORT", "--http-port")(_int_in(0, 65535))
_setting("grpc_port", "GAMEAI_GRPC_PORT", "--grpc-port")(_int_in(0, 65535))
_setting("host", "GAMEAI_HOST", "--host")(lambda t: t.strip() or "127.0.0.1")
_setting("games", "GAMEAI_GAMES", "--games")(_games)
_setting("admin_token", "GAMEAI_ADMIN_TOKEN", "--admin-token-file")(_token)
_setting("log_level", "GAMEAI_LOG_LEVEL", "--log-level")(_log_level)
_setting("workers", "GAMEAI_WORKERS", "--workers")(_int_in(1, 64))
_setting("poll_seconds", "GAMEAI_POLL_SECONDS", "--poll-seconds")(_seconds(0.05, 3600))
_setting("max_batch", "GAMEAI_MAX_BATCH", "--max-batch")(_int_in(1, 1_000_000))
_setting("max_body_bytes", "GAMEAI_MAX_BODY_BYTES", "--max-body-bytes")(
    _int_in(1024, 1 << 30))
_setting("grace_seconds", "GAMEAI_GRACE_SECONDS", "--grace-seconds")(_seconds(0, 600))
_setting("drain_seconds", "GAMEAI_DRAIN_SECONDS", "--drain-seconds")(_seconds(0, 600))

_FILE_SOURCES = {"store_url": ("GAMEAI_STORE_URL_FILE", "--store-file"),
                 "admin_token": ("GAMEAI_ADMIN_TOKEN_FILE", "--admin-token-file")}


def load_settings(flags: Mapping[str, Any] | None = None,
                  env: Mapping[str, str] | None = None) -> Settings:
    """The settings from ``flags`` (attribute names of :class:`Settings`, plus
    ``store_file`` and ``admin_token_file``; ``None`` means not given) over ``env``.

    Raises:
        SettingsError: a value is unusable; the message names the variable and the flag.
    """
    flags = dict(flags or {})
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    for name, (variable, flag, parse) in _SOURCES.items():
        raw, source = _raw(name, variable, flag, flags, env)
        if raw is None:
            continue
        try:
            values[name] = parse(str(raw))
        except ValueError as e:
            raise SettingsError(f"{source}: {e}") from None
    values.setdefault("data_dir", default_data_dir(env))
    settings = Settings(**values)
    if settings.drain_seconds > settings.grace_seconds:
        raise SettingsError(f"GAMEAI_DRAIN_SECONDS (--drain-seconds): must not exceed the grace "
                            f"period GAMEAI_GRACE_SECONDS ({settings.grace_seconds:g} s), got "
                            f"{settings.drain_seconds:g}")
    return settings


def _raw(name: str, variable: str, flag: str, flags: Mapping[str, Any],
         env: Mapping[str, str]) -> tuple[str | None, str]:
    """The setting's text and where it came from: flag, variable, then the ``_FILE`` forms."""
    label = f"{variable} ({flag})"
    if flags.get(name) is not None:
        return str(flags[name]), label
    file_variable, file_flag = _FILE_SOURCES.get(name, ("", ""))
    file_flag_name = file_flag.lstrip("-").replace("-", "_")
    path = flags.get(file_flag_name) if file_flag else None
    if path is None and env.get(variable):
        return env[variable], label
    path = path or (env.get(file_variable) if file_variable else None)
    if not path:
        return None, label
    file_label = f"{file_variable} ({file_flag})"
    try:
        return Path(path).expanduser().read_text().strip(), file_label
    except OSError as e:
        raise SettingsError(f"{file_label}: cannot read {path}: {e.strerror}") from None
