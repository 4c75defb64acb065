"""One way to declare a setting, used by every process (server, trainer, the ops commands).

A :class:`Setting` names its environment variable, its command-line flag, its check (text
to value, or ``ValueError`` saying why not) and its default; a secret may also come from a
file (``GAMEAI_X_FILE`` / ``--x-file``, for Docker and Kubernetes secrets). :func:`read`
resolves a process's declarations in one order, the same everywhere:

    the flag, else the file flag, else the variable, else the file variable, else the default

and stops at the first unusable value with a :class:`SettingsError` that names the
variable and the flag (``GAMEAI_METRICS_PORT (--metrics-port): must be between 0 and
65535, got 99999``). Setting both a variable and its file form is refused: which one was
meant cannot be known. A secret's value never appears in a message.

Why not pydantic-settings: these messages (variable and flag together), the file forms
with their own names, and flags parsed by argparse would each need a custom source or an
error translation there; the whole mechanism here is this module.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOG_LEVELS = ("debug", "info", "warning", "error")


class SettingsError(ValueError):
    """A setting that cannot be used; the message names its variable and flag."""


@dataclass(frozen=True)
class Setting:
    """One setting: where it comes from, how it is checked, what it is by default.

    Args:
        name: the attribute of the settings object, and the key of its flag's value.
        variable: the environment variable (``GAMEAI_...``).
        flag: the command-line flag, or ``None`` if it has none.
        check: text to value; raises ``ValueError`` with the reason (never the value of a
            secret).
        default: the value when nothing sets it, or a function of the environment.
        file_variable, file_flag: where a file holding the value may be named instead.
    """

    name: str
    variable: str
    flag: str | None
    check: Callable[[str], Any]
    default: Any = None
    file_variable: str | None = None
    file_flag: str | None = None

    @property
    def label(self) -> str:
        return f"{self.variable} ({self.flag})" if self.flag else self.variable

    @property
    def file_label(self) -> str:
        return f"{self.file_variable} ({self.file_flag})" if self.file_flag \
            else str(self.file_variable)


def read(declared: Iterable[Setting], flags: Mapping[str, Any] | None = None,
         env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The value of every setting ``declared``, by name.

    Args:
        flags: values given on the command line, by setting name (a file flag by its
            flag's name: ``--store-file`` is ``store_file``); ``None`` means not given.
        env: the environment (default ``os.environ``).

    Raises:
        SettingsError: a value is unusable, a file cannot be read, or a variable and its
            file form are both set.
    """
    flags = flags or {}
    env = os.environ if env is None else env
    values = {}
    for setting in declared:
        raw, label = _raw(setting, flags, env)
        if raw is None:
            default = setting.default
            values[setting.name] = default(env) if callable(default) else default
            continue
        try:
            values[setting.name] = setting.check(raw)
        except ValueError as e:
            raise SettingsError(f"{label}: {e}") from None
    return values


def _raw(setting: Setting, flags: Mapping[str, Any], env: Mapping[str, str]
         ) -> tuple[str | None, str]:
    """The setting's text and the label of where it came from, or ``None``."""
    if flags.get(setting.name) is not None:
        return str(flags[setting.name]), setting.label
    file_key = setting.file_flag.lstrip("-").replace("-", "_") if setting.file_flag else ""
    path = flags.get(file_key) if file_key else None
    if path is None:
        value = env.get(setting.variable) or None
        file_value = env.get(setting.file_variable) or None if setting.file_variable else None
        if value is not None and file_value is not None:
            raise SettingsError(f"set {setting.variable} or {setting.file_variable}, not both")
        if value is not None:
            return value, setting.label
        path = file_value
    if not path:
        return None, setting.label
    return read_file(str(path), setting.file_label), setting.file_label


def read_file(path: str, label: str) -> str:
    """A value kept in a file (a secret), whitespace stripped; never empty."""
    try:
        text = Path(path).expanduser().read_text().strip()
    except OSError as e:
        raise SettingsError(f"{label}: cannot read {path}: {e.strerror}") from None
    if not text:
        raise SettingsError(f"{label}: the file {path} is empty")
    return text


# -- checks shared by the processes' declarations -------------------------------------------

def whole_number(low: int, high: int) -> Callable[[str], int]:
    def check(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise ValueError(f"must be a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise ValueError(f"must be between {low} and {high}, got {value}")
        return value
    return check


def seconds(low: float, high: float) -> Callable[[str], float]:
    def check(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            raise ValueError(f"must be a number of seconds, got {text!r}") from None
        if not low <= value <= high:
            raise ValueError(f"must be between {low:g} and {high:g} seconds, got {value:g}")
        return value
    return check


def log_level(text: str) -> str:
    level = text.strip().lower()
    if level not in LOG_LEVELS:
        raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}, got {text!r}")
    return level


def host(text: str) -> str:
    return text.strip() or "127.0.0.1"


# Settings every long-running process has.
HOST = Setting("host", "GAMEAI_HOST", "--host", host, "127.0.0.1")
LOG_LEVEL = Setting("log_level", "GAMEAI_LOG_LEVEL", "--log-level", log_level, "info")
