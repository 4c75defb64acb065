"""``gameai stress NAME``: the proving suites of the ``stress`` room. Imports only the
standard library at load time. The room is not part of the image: where ``stress`` is not
installed, ``gameai stress`` is absent from ``--help``.

Each suite starts real processes (a private ``redis-server``, ``gameai serve``, ``gameai
trainer``) on loopback, drives them, and prints a table of figures with the goal each
must meet; the exit status is 1 when a goal is missed. ``--json`` prints the same as JSON.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from types import ModuleType

from gameai.cli.common import USAGE, CommandError, installed

# name -> (help, default seconds)
SUITES = {
    "load": ("sustained mixed gRPC/REST load at 70% of the measured maximum: "
             "errors, p50/p99, memory and descriptors flat", 30.0),
    "rollouts": ("two servers, one Redis: promote, roll back 20 times, move "
                 "the canary and publish under traffic; every answer from a live version",
                 20.0),
    "faults": ("Redis stopped (and back empty), corrupt payloads, the trainer "
               "killed mid-publish, SIGTERM under load", 4.0),
    "hostile": ("schemathesis against the OpenAPI, fuzzed core calls, "
                "oversized, nested, mistyped and unicode input on both transports", 20.0),
    "security": ("admin token (off, 401, timing), secrets kept out of "
                 "logs/metrics/errors, pickles refused, limits under a greedy client, "
                 "container settings, dependency audit", 5.0),
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gameai stress`` where the ``stress`` room is installed."""
    if not installed("gameai.stress"):
        return
    stress = sub.add_parser(
        "stress", help="proving suites: load, rollouts, faults, hostile input, security",
        description="Run a suite against real processes on loopback and print its figures. "
        "Exit status 1 when a goal is missed.")
    suites = stress.add_subparsers(dest="suite", required=True, metavar="SUITE")
    for name, (text, seconds) in SUITES.items():
        p = suites.add_parser(name, help=text.replace("%", "%%"), description=text)
        p.add_argument("--seconds", type=_positive, default=seconds,
                       help=f"how long the suite drives traffic (default {seconds:g})")
        p.add_argument("--json", action="store_true", help="print JSON")
        p.set_defaults(func=run_suite)
    audit = suites.add_parser(
        "audit", help="pip-audit of the pinned dependencies (constraints.txt)",
        description="Audit constraints.txt with pip-audit; exit 1 naming every known "
        "vulnerability. When the audit service cannot be reached or does not know a pin, "
        "say so loudly and exit 0.")
    audit.add_argument("--requirements", default=None,
                       help="pinned requirements file (default: the repository's "
                       "constraints.txt)")
    audit.add_argument("--json", action="store_true", help="print JSON")
    audit.set_defaults(func=run_audit)


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def run_suite(args: argparse.Namespace) -> int:
    try:
        module = _suite(args.suite)
    except ImportError as e:  # httpx, hypothesis, schemathesis: the dev extra
        raise CommandError(f"the stress suites need the dev tools (pip install -e '.[dev]'): "
                           f"{e}", USAGE) from e
    command = "gameai stress " + " ".join(shlex.quote(a) for a in sys.argv[2:]) \
        if sys.argv[1:2] == ["stress"] else f"gameai stress {args.suite} --seconds {args.seconds:g}"
    report = module.run(args.seconds, command=command)
    report.print(args.json)
    return 0 if report.ok else 1


def _suite(name: str) -> ModuleType:
    """The module of suite ``name`` (each has ``run(seconds, command=...)``), imported only
    when that suite runs: their tools (the dev extra) are heavy."""
    if name == "load":
        from gameai.stress import load
        return load
    if name == "rollouts":
        from gameai.stress import rollouts
        return rollouts
    if name == "faults":
        from gameai.stress import faults
        return faults
    if name == "hostile":
        from gameai.stress import hostile
        return hostile
    from gameai.stress import security
    return security


def run_audit(args: argparse.Namespace) -> int:
    from gameai.stress.audit import main

    return main(args.requirements, as_json=args.json)
