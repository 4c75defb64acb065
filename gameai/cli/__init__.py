"""The ``gameai`` command: one entry point, a subcommand per job.

Each subcommand lives in the module of its room and registers itself here. Those modules
import only argparse at load time, so ``gameai --help`` stays fast; the work they do is
imported when the subcommand runs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from gameai.games.errors import GameError

# Modules with a ``register(subparsers)`` function, in help order. A module may also have
# ``register_bench(subparsers)`` to add a ``gameai bench NAME`` benchmark.
COMMAND_MODULES = (
    "gameai.cli.games",
    "gameai.cli.models",
    "trainer.cli",
    "service.cli",
    "gameai.cli.up",
    "stress.cli",
)


class CommandError(Exception):
    """A failure to report as one line and a non-zero exit (status 1 unless given)."""

    def __init__(self, message: str, status: int = 1) -> None:
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gameai", description="Learn board games by self-play and serve moves."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = [importlib.import_module(name) for name in COMMAND_MODULES]
    for module in modules:
        module.register(sub)
    bench = sub.add_parser("bench", help="benchmarks that print their figures",
                           description="Benchmarks: each prints its figures (--json for JSON).")
    bench_sub = bench.add_subparsers(dest="bench", required=True, metavar="BENCHMARK")
    for module in modules:
        if hasattr(module, "register_bench"):
            module.register_bench(bench_sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except GameError as e:
        print(f"gameai {args.command}: error: {e}", file=sys.stderr)
        return 2
    except CommandError as e:
        print(f"gameai {args.command}: error: {e}", file=sys.stderr)
        return e.status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (``gameai analyze ... | head``)
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
