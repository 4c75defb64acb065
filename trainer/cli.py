"""``gameai train``, ``gameai evaluate``, ``gameai trainer`` and their benchmarks.

Only argparse is imported here; each handler imports its work when it runs, so
``gameai --help`` stays fast and numba loads only for the commands that need it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

ALGORITHMS = ("tally", "td", "qlearning", "mlp")
DEFAULT_GAMES = 100_000
DEFAULT_UNBEATABLE_CAP = 1_000_000_000


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``train``, ``evaluate`` and ``trainer`` to ``gameai``."""
    p = sub.add_parser(
        "train", help="learn a game by self-play (or distil a table into an mlp)",
        description="Train a learner by self-play with a progress bar (games/s and the latest "
        "evaluation), evaluate the result, and write it to a file and/or publish it.")
    p.add_argument("--game", required=True, help="tictactoe, mnk-3x4-3, four-in-a-row, ...")
    p.add_argument("--algorithm", required=True, choices=ALGORITHMS)
    p.add_argument("--games", type=_positive, help=f"games of self-play (default "
                   f"{DEFAULT_GAMES:,}; with --until-unbeatable, the most to play)")
    p.add_argument("--until-unbeatable", action="store_true",
                   help="stop as soon as the model loses no line as X nor as O")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same model)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a learner parameter (repeatable; see docs/trainer.md)")
    p.add_argument("--eval-every", type=_positive, metavar="N",
                   help="games between evaluations (default: per algorithm)")
    p.add_argument("--teacher", metavar="FILE", help="mlp only: the trained table to distil")
    p.add_argument("--out", metavar="FILE", help="write the model here")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--store", metavar="URL", help="publish the model to this store")
    p.add_argument("--store-prefix", help="key prefix (default: $GAMEAI_STORE_PREFIX or "
                   "gameai)")
    p.add_argument("--promote", choices=("auto", "manual"), help="with --store: auto moves "
                   "production to the new version if the gates pass (default manual)")
    p.add_argument("--plot", metavar="FILE.png", help="draw the learning curves")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_run("trainer.commands", "run_train"))

    p = sub.add_parser(
        "evaluate", help="how well a model plays (exhaustive opponent, solver, random play)",
        description="Evaluate a model file or a stored version: losing lines against an "
        "exhaustive opponent as X and O, optimal-move rate by the exact solver, results "
        "against random play, seed 000's five checks and the model's size.")
    p.add_argument("file", nargs="?", metavar="FILE", help="a model file")
    _store_options(p)
    p.add_argument("--game", help="with --version: the stored model's game")
    p.add_argument("--version", help="a stored version: number, alias or 'latest'")
    p.add_argument("--random-games", type=_positive, default=1000, metavar="N",
                   help="games against random play per side (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random player")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run("trainer.commands", "run_evaluate"))

    p = sub.add_parser(
        "trainer", help="the training worker: learn, publish, promote through the gates",
        description="Train in rounds, publish a candidate every --publish-every games with "
        "its evaluation, promote it when the gates pass, and serve Prometheus metrics and "
        "/healthz on --metrics-port. SIGTERM finishes the round and exits 0.")
    p.add_argument("--game", required=True)
    p.add_argument("--algorithm", required=True, choices=ALGORITHMS[:3])
    _store_options(p)
    p.add_argument("--store-file", metavar="FILE", help="read the store URL from this file")
    p.add_argument("--publish-every", type=_positive, metavar="N",
                   help="self-play games between publish attempts (default: per algorithm)")
    p.add_argument("--publish-min-seconds", type=float, metavar="S",
                   help="at most one candidate per S seconds (default 60)")
    p.add_argument("--metrics-port", type=int, metavar="P",
                   help="default: $GAMEAI_METRICS_PORT or 9100 (0: any free port)")
    p.add_argument("--host", help="bind address of the metrics port (default 127.0.0.1)")
    p.add_argument("--from-version", metavar="V", help="warm-start from this stored version "
                   "(number, alias or 'latest')")
    p.add_argument("--resume", action="store_true",
                   help="warm-start from the production version if the store has one, else "
                   "start fresh (for restarts under Compose or Kubernetes)")
    p.add_argument("--promote", choices=("auto", "manual"), default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--max-games", type=_positive, metavar="N", help="stop after N games")
    p.add_argument("--log-level", help="debug, info, warning or error (default: "
                   "$GAMEAI_LOG_LEVEL or info)")
    p.set_defaults(func=_run("trainer.worker", "main"))


def register_bench(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("selfplay", help="self-play games per second against plain Python")
    p.add_argument("--game", default="tictactoe")
    p.add_argument("--seconds", type=float, default=3.0, help="time spent measuring")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run("trainer.commands", "run_bench_selfplay"))
    p = sub.add_parser("learners", help="seconds until unbeatable per learner (seeds 1-3), "
                       "and the mlp students")
    p.add_argument("--seeds", default="1,2,3", help="comma-separated seeds")
    p.add_argument("--game", default="tictactoe", help="tictactoe, three-mens-morris, ...")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run("trainer.commands", "run_bench_learners"))


def _store_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", metavar="URL", help="the store (default: $GAMEAI_STORE_URL, "
                   "else the embedded Redis)")
    p.add_argument("--store-prefix", help="key prefix (default: $GAMEAI_STORE_PREFIX or "
                   "gameai)")
    p.add_argument("--data-dir", metavar="DIR", help="embedded Redis data directory (default: "
                   "$GAMEAI_DATA_DIR or ~/.local/share/gameai)")


def _run(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    def handler(args: argparse.Namespace) -> int:
        import importlib

        return int(getattr(importlib.import_module(module), name)(args))
    return handler


def _positive(text: str) -> int:
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
