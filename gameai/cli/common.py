"""What every subcommand of ``gameai`` shares: the one error the command line reports, the
exit statuses, atomic file writes, and whether an optional room is installed.

The rooms below the command line (games, models, store, trainer, service, stress) raise
their own named errors and return values; only the subcommand modules of this package turn
them into a :class:`CommandError`, which :func:`gameai.cli.main` prints as one line.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import tempfile
from pathlib import Path

REFUSED = 1  # the request was refused (a rule, a missing version, a file that exists)
USAGE = 2  # a bad flag, setting or game name
STORE_DOWN = 3  # the store cannot be reached


class CommandError(Exception):
    """A failure to report as one line and a non-zero exit (status 1 unless given)."""

    def __init__(self, message: str, status: int = REFUSED) -> None:
        super().__init__(message)
        self.status = status


def write_atomically(path: Path, data: bytes) -> None:
    """Write all of ``data`` to ``path`` or nothing: a temporary file in the same folder,
    flushed to disk and renamed, so a reader sees the old file or the new, never half.

    Raises:
        CommandError: the file cannot be written; the message names it.
    """
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as e:
        raise CommandError(f"cannot write {path}: {e.strerror}") from e


def installed(*modules: str) -> bool:
    """Whether every top-level module named is installed here, without importing it: an
    optional room (``stress``) that the image leaves out makes its subcommand absent from
    ``--help`` rather than a crash."""
    return all(importlib.util.find_spec(name) is not None for name in modules)


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1 (``100_000`` and ``100,000`` too)."""
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def memory_option(p: argparse.ArgumentParser) -> None:
    """``--memory-limit``: the budget every solve, export and evaluation is checked against
    before it starts (:mod:`gameai.games.budget`)."""
    p.add_argument("--memory-limit", metavar="SIZE",
                   help="the most memory a solve, export or evaluation may need (4G, 512M, "
                   "...); work that would need more is refused before it starts (default: "
                   "$GAMEAI_MEMORY_LIMIT, else half of the machine's memory)")


def apply_memory_limit(args: argparse.Namespace) -> None:
    """Make ``--memory-limit`` the limit of this process and of the processes it starts.

    Raises:
        CommandError: it is not a size (status 2).
    """
    from gameai.games.budget import ENV, BadLimit, parse_size

    text = getattr(args, "memory_limit", None)
    if text is None:
        return
    try:
        parse_size(text)
    except BadLimit as e:
        raise CommandError(f"--memory-limit: {e}", USAGE) from e
    os.environ[ENV] = text

