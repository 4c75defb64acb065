"""The ``gameai`` command: one entry point, a subcommand per job.

The command line is the top room: it imports the rooms (games, models, store, trainer,
service, stress), and no room imports it. Each module below registers its subcommands; they
import only the standard library at load time, so ``gameai --help`` stays fast, and the
work a subcommand does is imported when it runs. An optional room that is not installed
(``stress`` is not in the image) registers nothing and is absent from ``--help``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from gameai import host
from gameai.cli import book, games, levels, models, ntuple, serve, stress, train, up, worker
from gameai.cli.common import REFUSED, USAGE, CommandError, apply_memory_limit
from gameai.games.budget import BadLimit
from gameai.games.errors import GameError
from gameai.settings import SettingsError

# Flags whose value may start with "-": a board whose first cell is empty ("-X-|-O-|---"),
# which argparse would otherwise take for an option.
DASHED_VALUES = ("--board",)

# In help order. A module may also have ``register_bench(subparsers)`` to add a
# ``gameai bench NAME`` benchmark.
COMMANDS = (games, models, train, worker, book, serve, up, stress)
BENCHMARKS = (games, models, train, levels, ntuple, serve)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gameai", description="Learn board games by self-play and serve moves."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        module.register(sub)
    bench = sub.add_parser("bench", help="benchmarks that print their figures",
                           description="Benchmarks: each prints its figures (--json for JSON).")
    bench_sub = bench.add_subparsers(dest="bench", required=True, metavar="BENCHMARK")
    for bench_module in BENCHMARKS:
        bench_module.register_bench(bench_sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(attach_dashed_values(sys.argv[1:] if argv is None else argv))
    host.install()
    try:
        apply_memory_limit(args)
        return int(args.func(args) or 0)
    except (GameError, SettingsError, BadLimit) as e:
        print(f"gameai {args.command}: error: {e}", file=sys.stderr)
        return USAGE
    except CommandError as e:
        print(f"gameai {args.command}: error: {e}", file=sys.stderr)
        return e.status
    except MemoryError:
        print(f"gameai {args.command}: error: out of memory: the machine could not give this "
              "command the memory it asked for; a lower --memory-limit (or "
              "GAMEAI_MEMORY_LIMIT) makes work that would not fit refuse before it starts",
              file=sys.stderr)
        return REFUSED
    except ModuleNotFoundError as e:
        if not e.name or e.name.split(".")[0] == "gameai":
            raise  # a part of gameai itself missing is a broken install: show where
        print(f"gameai {args.command}: error: this command needs the Python package "
              f"{e.name.split('.')[0]!r}, which is not installed here: "
              f"{install_hint(e.name)}", file=sys.stderr)
        return REFUSED
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (``gameai analyze ... | head``)
        sys.stderr.close()
        return 0


# optional packages and the extra that brings each (pyproject.toml)
EXTRAS = {"matplotlib": "pip install 'gameai[plot]'", "ray": "pip install 'gameai[ray]'"}


def install_hint(module: str) -> str:
    """What to install for the missing ``module``: its extra, else the package itself."""
    top = module.split(".")[0]
    return EXTRAS.get(top, f"pip install {top}")


def attach_dashed_values(argv: Sequence[str]) -> list[str]:
    """``--board -X-|...`` as ``--board=-X-|...``, so argparse reads the board as the
    flag's value rather than as an unknown option."""
    out: list[str] = []
    args = iter(argv)
    for arg in args:
        value = next(args, None) if arg in DASHED_VALUES else None
        if value is None:
            out.append(arg)
        elif value.startswith("-"):
            out.append(f"{arg}={value}")
        else:
            out += [arg, value]
    return out


if __name__ == "__main__":
    sys.exit(main())
