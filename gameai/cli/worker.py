"""``gameai trainer``: the long-running training worker (:mod:`gameai.trainer.worker.main`).

The handler turns the flags into the worker's settings and the worker's named errors into
exit statuses: 2 for a setting, parameter or warm start that cannot be used, 3 when the
store cannot be reached. The worker itself knows nothing of the command line.
"""

from __future__ import annotations

import argparse

from gameai.cli.common import STORE_DOWN, USAGE, CommandError, memory_option, positive
from gameai.cli.train import SELF_PLAY, cluster_options, parse_params, store_options


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gameai trainer``."""
    p = sub.add_parser(
        "trainer", help="the training worker: learn, publish, promote through the gates",
        description="Train in rounds, evaluate a candidate every --publish-every games, "
        "publish it only when it beats the best model known by the gates' measure, promote "
        "it unless an operator pinned production, idle once a model is proven perfect, and "
        "serve Prometheus metrics and /healthz on --metrics-port. SIGTERM finishes the round "
        "and exits 0.")
    p.add_argument("--game", required=True)
    p.add_argument("--algorithm", required=True, choices=SELF_PLAY)
    store_options(p)
    p.add_argument("--publish-every", type=positive, metavar="N",
                   help="self-play games between candidates (default: per algorithm)")
    p.add_argument("--publish-min-seconds", type=float, metavar="S",
                   help="at most one version per S seconds (default 60)")
    p.add_argument("--publish", choices=("better", "every"), default="better",
                   help="publish a candidate only when it passes the gates against the best "
                   "model known (default), or every candidate")
    p.add_argument("--eval-share", type=float, metavar="F", help="at most this share of the "
                   "worker's time goes to evaluation (default 0.1)")
    p.add_argument("--metrics-port", type=int, metavar="P",
                   help="default: $GAMEAI_METRICS_PORT or 9100 (0: any free port)")
    p.add_argument("--host", help="bind address of the metrics port (default 127.0.0.1)")
    p.add_argument("--from-version", metavar="V", help="warm-start from this stored version "
                   "(number, alias or 'latest')")
    p.add_argument("--resume", action="store_true",
                   help="warm-start from the production version if the store has one, else "
                   "start fresh (for restarts under Compose or Kubernetes)")
    p.add_argument("--no-bundled", dest="bundled", action="store_false",
                   help="with --resume on a store without a production version: learn from "
                   "nothing, never from the game's bundled starting model (by default it is "
                   "published as version 1 and served at once, and training goes on from it)")
    p.add_argument("--promote", choices=("auto", "manual"), default="auto")
    p.add_argument("--seed", type=int, help="random seed (default: a fresh one, logged and "
                   "recorded in every version)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    p.add_argument("--judge-games", type=positive, metavar="N",
                   help="n-tuple gates on boards past the solver's tables: games of each "
                   "match against the perfect and the noisy solvers (default 100)")
    p.add_argument("--judge-time", type=float, metavar="S",
                   help="n-tuple gates there: seconds of solver search per opponent move; "
                   "a move not proved in time is the best proved bound (default 2)")
    p.add_argument("--shadow-gate", type=int, metavar="N", help="with --promote auto: shadow "
                   "a candidate that passes the gates and promote it only once the servers "
                   "compared it on N live queries the solver proved and it was optimal as "
                   "often as production there (default 0: no shadow test)")
    p.add_argument("--shadow-share", type=int, metavar="PERCENT", help="with --shadow-gate: "
                   "the share of production's best-move queries shadowed (default 100)")
    p.add_argument("--max-games", type=positive, metavar="N", help="stop after N games")
    cluster_options(p)
    memory_option(p)
    p.add_argument("--log-level", help="debug, info, warning or error (default: "
                   "$GAMEAI_LOG_LEVEL or info)")
    p.set_defaults(func=run_trainer)


def run_trainer(args: argparse.Namespace) -> int:
    from gameai.store import StoreUnavailable
    from gameai.trainer.learners.base import BadParameter
    from gameai.trainer.selfplay.rounds import ClusterLost
    from gameai.trainer.training import CannotTrain
    from gameai.trainer.worker.main import main
    from gameai.trainer.worker.settings import SettingsError, load_settings

    flags = {**vars(args), "params": parse_params(args.param)}
    try:
        return main(load_settings(flags))
    except (SettingsError, BadParameter, CannotTrain) as e:
        raise CommandError(str(e), USAGE) from e
    except StoreUnavailable as e:
        raise CommandError(str(e), STORE_DOWN) from e
    except ClusterLost as e:
        raise CommandError(f"{e}: stopped; the versions published stay in the store, the "
                           "candidate in progress is dropped") from e
