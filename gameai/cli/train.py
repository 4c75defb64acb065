"""``gameai train``, ``gameai evaluate`` and the trainer's benchmarks.

Each handler turns its arguments into calls of the training, evaluation and publishing
modules, and their named errors into one-line messages (:class:`CommandError`): 1 for a
refused request, 3 when the store cannot be reached. Only the standard library is imported
at load time, so ``gameai --help`` stays fast and numba loads only for the commands that
need it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime as dt
import hashlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gameai.cli.common import (
    STORE_DOWN,
    USAGE,
    CommandError,
    memory_option,
    positive,
    write_atomically,
)
from gameai.cli.train_text import evaluation_text, figure_lines, learners_text, train_text

if TYPE_CHECKING:
    from gameai.games import Game
    from gameai.models import Model

SELF_PLAY = ("tally", "td", "qlearning", "ntuple")  # the self-play learners
ALGORITHMS = (*SELF_PLAY, "mlp")
DEFAULT_GAMES = 100_000
DEFAULT_UNBEATABLE_CAP = 1_000_000_000


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``train`` and ``evaluate`` to ``gameai``."""
    p = sub.add_parser(
        "train", help="learn a game by self-play (or distil a table into an mlp)",
        description="Train a learner by self-play with a progress bar (games/s and the latest "
        "evaluation), evaluate the result, and write it to a file and/or publish it.")
    p.add_argument("--game", required=True, help="tictactoe, mnk-3x4-3, four-in-a-row, ...")
    p.add_argument("--algorithm", required=True, choices=ALGORITHMS)
    p.add_argument("--games", type=positive, help=f"games of self-play (default "
                   f"{DEFAULT_GAMES:,}; with --until-unbeatable, the most to play)")
    p.add_argument("--until-unbeatable", action="store_true",
                   help="stop as soon as the model keeps the game's value against every "
                   "reply: no line lost as X nor as O in a drawn game, every line won by the "
                   "winner of a won one (the loser is asked nothing); an n-tuple network is "
                   "judged as served, with its default search depth; the final report's "
                   "'unbeatable' is the same verdict")
    p.add_argument("--until-perfect", action="store_true",
                   help="stop as soon as the model is unbeatable and plays the optimal move in "
                   "every reachable position (needs the exact solver)")
    p.add_argument("--seed", type=int, default=0, help="random seed (same seed, same model)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a learner parameter (repeatable; see docs/trainer.md)")
    p.add_argument("--eval-every", type=positive, metavar="N",
                   help="games between evaluations, every one of them evaluated, so the "
                   "checkpoints are the same on every machine (default: per algorithm, "
                   "and only while evaluation stays within --eval-share)")
    p.add_argument("--eval-share", type=_share, metavar="F",
                   help="without --eval-every: checkpoints take at most this share of the "
                   "time after their first 5 seconds (default 0.1; 0.25 with --until-"
                   "unbeatable or --until-perfect, whose checkpoints are the stop rule)")
    p.add_argument("--teacher", metavar="FILE", help="mlp only: the trained table to distil")
    p.add_argument("--out", metavar="FILE", help="write the model here")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--store", dest="store_url", metavar="URL",
                   help="publish the model to this store")
    p.add_argument("--store-prefix", help="key prefix (default: $GAMEAI_STORE_PREFIX or "
                   "gameai)")
    p.add_argument("--promote", choices=("auto", "manual"), help="with --store: auto moves "
                   "production to the new version if the gates pass (default manual)")
    p.add_argument("--keep-checkpoints", metavar="DIR", help="also write each evaluated "
                   "checkpoint's model to DIR as GAME-GAMES.model (to judge or serve one of "
                   "them later)")
    p.add_argument("--plot", metavar="FILE.png", help="draw the learning curves (PNG, or "
                   "SVG with the suffix .svg)")
    p.add_argument("--judge-games", type=positive, metavar="N",
                   help="also judge every checkpoint as served against the solver (the "
                   "gates' measures: lines lost and optimal moves where the solver's table "
                   "fits, else N games a match against the perfect and the noisy solvers): "
                   "the strength curve of --plot")
    p.add_argument("--judge-every", type=positive, metavar="GAMES",
                   help="with --judge-games: judge a checkpoint only once GAMES games have "
                   "passed since the last judged one (default: every checkpoint)")
    p.add_argument("--judge-time", type=float, default=2.0, metavar="S",
                   help="with --judge-games: seconds of solver search per opponent move "
                   "(default 2)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    cluster_options(p)
    memory_option(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run_train)

    p = sub.add_parser(
        "evaluate", help="how well a model plays (exhaustive opponent, solver, random play)",
        description="Evaluate a model file or a stored version: losing lines against an "
        "exhaustive opponent as X and O, optimal-move rate by the exact solver, results "
        "against random play, seed 000's five checks and the model's size.")
    p.add_argument("file", nargs="?", metavar="FILE", help="a model file")
    store_options(p)
    p.add_argument("--game", help="with --version: the stored model's game")
    p.add_argument("--version", help="a stored version: number, alias or 'latest'")
    p.add_argument("--random-games", type=positive, default=1000, metavar="N",
                   help="games against random play per side (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random player (and, "
                   "with --judge-games, of the judge's games)")
    p.add_argument("--judge-games", type=positive, metavar="N",
                   help="also judge the model as the trainer's gates do (n-tuple models of "
                   "boards past the tables: N games a match against the perfect and the "
                   "noisy solvers; smaller boards: lines lost and optimal moves), the "
                   "measures a version record's 'judged' holds")
    p.add_argument("--judge-time", type=float, default=2.0, metavar="S",
                   help="with --judge-games: seconds of solver search per opponent move "
                   "(default 2, the gates')")
    p.add_argument("--json", action="store_true")
    memory_option(p)
    p.set_defaults(func=run_evaluate)


def register_bench(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gameai bench selfplay`` and ``gameai bench learners``."""
    p = sub.add_parser("selfplay", help="self-play games per second against plain Python; "
                       "with --algorithm ntuple, by number of parallel actors (and on a Ray "
                       "cluster), with --judge the strength at equal games")
    p.add_argument("--game", default="tictactoe")
    p.add_argument("--seconds", type=float, default=3.0, help="time spent measuring (per "
                   "actor count with --algorithm ntuple)")
    p.add_argument("--algorithm", choices=("ntuple",), help="time the n-tuple learner's "
                   "parallel actors instead of the table learners against plain Python")
    p.add_argument("--games", type=positive, metavar="N", help="with --algorithm ntuple: "
                   "time N games per actor count instead of --seconds (the same stretch of "
                   "training for every count)")
    p.add_argument("--actors", default="1,2", metavar="K,K,...",
                   help="with --algorithm ntuple: the actor counts (default 1,2)")
    p.add_argument("--cluster", metavar="ADDRESS", help="also on this Ray cluster (host:port "
                   "or auto; pip install 'gameai[ray]')")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a learner parameter for every setting (sync_games=..., merge=...)")
    p.add_argument("--ceiling", action="store_true", help="with --algorithm ntuple: also "
                   "time each count K above 1 as K independent one-actor learners at once "
                   "(a process each, nothing shared): what this machine gives K actors "
                   "with no cost of their own")
    p.add_argument("--judge", action="store_true", help="also the strength at an equal "
                   "number of games for each actor count: the judge's matches against the "
                   "perfect player at the default depth, and the evaluator's figures")
    p.add_argument("--judge-after", type=positive, default=300_000, metavar="GAMES",
                   help="with --judge: games each actor count trains (default 300,000)")
    p.add_argument("--judge-games", type=positive, default=200, metavar="N",
                   help="with --judge: games a match (default 200)")
    p.add_argument("--judge-time", type=float, default=2.0, metavar="S",
                   help="with --judge: the perfect opponent's seconds a move past the "
                   "solver's tables (default 2)")
    p.add_argument("--positions", type=int, default=0, metavar="N",
                   help="with --judge: also error rates on N solver-labelled positions a "
                   "class (slow on Connect Four: the solver labels them)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_bench_selfplay)
    p = sub.add_parser("learners", help="games and seconds until perfect per learner "
                       "(seeds 1-3), and the mlp students")
    p.add_argument("--seeds", default="1,2,3", help="comma-separated seeds")
    p.add_argument("--game", default="tictactoe", help="tictactoe, three-mens-morris, ...")
    p.add_argument("--algorithms", default="td,qlearning,tally", help="comma-separated")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter for every learner (exploring_starts=0, ...)")
    p.add_argument("--max-games", type=positive, default=10_000_000, metavar="N",
                   help="give up on a learner after N games (default 10,000,000)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_bench_learners)
    register_memory_bench(sub)
    p = sub.add_parser("schedules", help="self-play time against losing lines and optimal "
                       "moves, per parameter setting (the figures behind per-game defaults)")
    p.add_argument("--game", default="four-in-a-row")
    p.add_argument("--algorithm", default="td", choices=ALGORITHMS[:3])
    p.add_argument("--seconds", type=float, default=120.0, help="self-play per setting")
    p.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE,...",
                   help="one setting (repeatable; '' is the game's defaults)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_bench_schedules)


def register_memory_bench(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("memory", help="each memory estimate against the peak it estimates, "
                       "measured in a fresh process (solver, evaluator, exports)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_bench_memory)


def run_bench_memory(args: argparse.Namespace) -> int:
    from gameai.bench.memory import run

    try:
        figures = run()
    except RuntimeError as e:
        raise CommandError(str(e)) from e
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"load average {figures['load_average']}; {figures['target']}")
    for row in figures["cases"]:
        print(f"  {row['case']:<40} estimate {row['estimate_mb']:>8.1f} MB, measured "
              f"{row['measured_mb']:>8.1f} MB ({row['ratio']:.2f}), {row['seconds']} s "
              f"({row['cpu_seconds']} s of CPU; estimated {row['estimate_seconds']} s)")
    print(f"worst: {100 * figures['worst_ratio']:.0f}% from its estimate")
    return 0


def run_bench_schedules(args: argparse.Namespace) -> int:
    from gameai.bench.learners import schedules
    from gameai.trainer.learners.base import BadParameter
    from gameai.trainer.training import CannotTrain

    settings = [parse_params([p for p in text.split(",") if p]) for text in args.setting or [""]]
    try:
        figures = schedules(args.game, args.algorithm, seconds=args.seconds,
                            settings=settings)
    except BadParameter as e:
        raise CommandError(f"--setting: {e}", USAGE) from e
    except CannotTrain as e:
        raise CommandError(str(e)) from e
    if args.json:
        print(json.dumps(figures))
        return 0
    for row in figures["rows"]:
        shown = ",".join(f"{k}={v}" for k, v in row["params"].items()) or "defaults"

        def figure(name: str, row: dict[str, Any] = row) -> str:
            return "-" if row[name] is None else f"{row[name]:,}"
        print(f"{shown:<32} {row['games']:>11,} games {row['selfplay_seconds']:>7} s  lost "
              f"{figure('losses_as_x')} / {figure('losses_as_o')}  optimal "
              f"{figure('optimal_move_rate')}  load {row['load_average'][0]}")
        for name in ("losses_as_x", "losses_as_o", "optimal_move_rate"):
            if row[name] is None:
                print(f"  {name}: not measured: "
                      f"{row['omitted'].get(name, 'left out by the evaluation')}")
    return 0


def store_options(p: argparse.ArgumentParser) -> None:
    """``--store``, ``--store-file``, ``--store-prefix`` and ``--data-dir``: the store
    settings (:data:`gameai.store.connect.STORE`) as flags."""
    p.add_argument("--store", dest="store_url", metavar="URL", help="the store (default: "
                   "$GAMEAI_STORE_URL, else the embedded Redis)")
    p.add_argument("--store-file", metavar="FILE", help="read the store URL from this file")
    p.add_argument("--store-prefix", help="key prefix (default: $GAMEAI_STORE_PREFIX or "
                   "gameai)")
    p.add_argument("--data-dir", metavar="DIR", help="embedded Redis data directory (default: "
                   "$GAMEAI_DATA_DIR or ~/.local/share/gameai)")


def cluster_options(p: argparse.ArgumentParser) -> None:
    """``--cluster`` and ``--on-node-loss``: the n-tuple learner's parallel actors on a Ray
    cluster (the extra ``gameai[ray]``)."""
    p.add_argument("--cluster", metavar="ADDRESS", help="run the n-tuple learner's parallel "
                   "actors (--param actors=N) on the Ray cluster whose head is at "
                   "ADDRESS (host:port), or 'auto' (the cluster this machine belongs to); "
                   "needs pip install 'gameai[ray]'; the model is the local one's, byte "
                   "for byte")
    p.add_argument("--on-node-loss", choices=("continue", "wait"), default="continue",
                   help="with --cluster: a dead node's unsent games are played again by "
                   "the actors left (continue, the default) or by new actors once the "
                   "cluster has room for them (wait)")


def use_cluster(learner: Any, address: str | None, on_loss: str) -> dict[str, float] | None:
    """Put ``learner``'s actors on the Ray cluster at ``address`` (nothing without one).
    Returns the cluster's nodes and CPUs."""
    if not address:
        return None
    from gameai.trainer.selfplay.ray import RayCluster, RayUnavailable, connect

    if learner.algorithm != "ntuple":
        raise CommandError(f"--cluster runs the n-tuple learner's parallel actors; "
                           f"{learner.algorithm} learns on one core (docs/trainer.md)", USAGE)
    if learner.params.actors < 2 or learner.params.sync_games == 0:
        raise CommandError("--cluster needs parallel actors in rounds: --param actors=N "
                           "(N >= 2) and sync_games above 0", USAGE)
    try:
        machines = connect(address)
    except RayUnavailable as e:
        raise CommandError(str(e), USAGE) from e
    learner.use_backend(RayCluster(on_loss))
    return machines


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1, got {value:g}")
    return value


def run_train(args: argparse.Namespace) -> int:
    from gameai.games import get_game
    from gameai.trainer.learners.base import BadParameter
    from gameai.trainer.training import CannotTrain

    game = get_game(args.game)
    params = parse_params(args.param)
    if args.promote and not args.store_url:
        raise CommandError("--promote needs --store (where to publish)")
    out = _writable(args.out, args.force)
    if args.plot:
        _can_plot(args.plot)
    try:
        if args.algorithm == "mlp":
            model, extra = _distil(args, game, params)
        else:
            model, extra = _self_play(args, game, params)
    except (BadParameter, CannotTrain) as e:
        raise CommandError(str(e)) from e
    history = extra.pop("history", None)  # learning curves: drawn once the model is safe
    model = _reproducible(model)
    if out is not None:
        write_atomically(out, model.to_bytes())
        extra["out"] = str(out)
    if extra.get("stopped") == "cluster_lost":
        kept = f"written to {out}" if out else "not saved (no --out)"
        raise CommandError(f"{extra['error']}: training stopped after "
                           f"{model.info.games_played:,} games; the model of those games "
                           f"(the last checkpoint) is {kept}; nothing was published")
    if args.store_url:
        extra["published"] = _publish(args, model)
    failed = _plot(args, game, history, extra) if args.plot else None
    report = {"game": game.name, "algorithm": args.algorithm, "seed": args.seed,
              "games_played": model.info.games_played, **extra,
              "evaluation": model.info.evaluation}
    print(json.dumps(report) if args.json else train_text(report))
    if failed:
        kept = f"the model is kept ({out})" if out else "the model is not saved (no --out)"
        raise CommandError(f"cannot draw {args.plot}: {failed}; {kept}")
    return 0


def _reproducible(model: Model) -> Model:
    """With ``SOURCE_DATE_EPOCH`` set (the reproducible-builds convention), the model's
    metadata carries that time as its creation and no wall-clock training time, so the
    same command, seed and games write the same bytes on any machine (how a bundled model
    is checked: docs/ntuple.md)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not epoch:
        return model
    try:
        when = dt.datetime.fromtimestamp(int(epoch), dt.UTC)
    except (ValueError, OverflowError, OSError) as e:
        raise CommandError(f"SOURCE_DATE_EPOCH: {epoch!r} is not a time in seconds since "
                           "1970", USAGE) from e
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    from gameai.trainer.training import with_evaluation

    return with_evaluation(lambda report: model.with_info(dataclasses.replace(
        model.info, created_at=stamp, training_seconds=0.0, evaluation=report)),
        model.info.evaluation)


def _can_plot(path: str) -> None:
    """Before any training: matplotlib is there and ``--plot`` names a file we can write."""
    from gameai.trainer.plot import PlotUnavailable, require_matplotlib

    target = Path(path)
    if target.is_dir() or not target.parent.is_dir():
        raise CommandError(f"--plot {path}: not a file in an existing directory", USAGE)
    try:
        require_matplotlib()
    except PlotUnavailable as e:
        raise CommandError(f"--plot: {e}", USAGE) from e


def _plot(args: argparse.Namespace, game: Game, history: Any,
          extra: dict[str, Any]) -> str | None:
    """Draw the learning curves, after the model is written: why not, or ``None``."""
    from gameai.trainer.plot import plot_history

    if history is None:  # mlp distillation has no learning curves
        return None
    try:
        plot_history(history, args.plot, cols=game.cols,
                     title=f"{args.algorithm} on {game.name}, seed {args.seed}")
    except (RuntimeError, OSError, ValueError) as e:
        return str(e)
    extra["plot"] = args.plot
    return None


def _self_play(args: argparse.Namespace, game: Game, params: dict[str, str]
               ) -> tuple[Model, dict[str, Any]]:
    from gameai.trainer.progress import Progress, summary
    from gameai.trainer.training import EVAL_SHARE, UNTIL_EVAL_SHARE, make_learner, train

    if args.teacher:
        raise CommandError("--teacher is only for --algorithm mlp")
    from gameai.trainer.selfplay.rounds import ClusterLost

    learner = make_learner(game, args.algorithm, seed=args.seed, params=params)
    machines = use_cluster(learner, args.cluster, args.on_node_loss)
    judge = None
    if args.judge_games:
        from gameai.trainer.evaluation.book import default_book
        from gameai.trainer.evaluation.judge import GateJudge

        _check_judge_time(args.judge_time)
        from gameai.trainer.evaluation.spread import runner

        # on a cluster the judge's matches are Ray tasks across its nodes, like self-play
        judge = GateJudge(game, games=args.judge_games, time_limit=args.judge_time,
                          seed=args.seed, book=default_book(game),
                          runner=runner(machines is not None))
    until = args.until_unbeatable or args.until_perfect
    cap = args.games or (DEFAULT_UNBEATABLE_CAP if until else DEFAULT_GAMES)
    stamp = os.environ.get("SOURCE_DATE_EPOCH")  # reproducible builds: fixed metadata
    created_at = _epoch_iso(stamp) if stamp else None
    keep = Path(args.keep_checkpoints) if args.keep_checkpoints else None
    if keep is not None:
        try:
            keep.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CommandError(f"--keep-checkpoints: cannot use {keep}: {e.strerror}") from e
    with Progress(total=None if until else cap, enabled=not args.quiet,
                  desc=f"{args.algorithm} {game.name}") as bar, _interruptible() as stop:
        def on_round(stats: Any, point: Any) -> None:
            bar.advance(stats.games, note=summary(point.evaluation) if point else "")
            if keep is not None and point is not None:
                path = keep / f"{game.name}-{point.games}.model"
                write_atomically(path, learner.export().to_bytes())  # never half-made

        try:
            result = train(learner, games=cap, until_unbeatable=args.until_unbeatable,
                           until_perfect=args.until_perfect, eval_every=args.eval_every,
                           eval_share=None if args.eval_every else args.eval_share
                           or (UNTIL_EVAL_SHARE if until else EVAL_SHARE),
                           should_stop=stop, on_round=on_round,
                           record_time=stamp is None, created_at=created_at, judge=judge,
                           judge_every=args.judge_every or 0)
        except ClusterLost as e:
            return _cluster_lost(learner, e)
        finally:
            getattr(learner, "close", lambda: None)()  # the parallel actors, if any
    extra: dict[str, Any] = {"stopped": result.stopped,
                             **({"why": result.why} if result.why else {}), **result.timing(),
                             "games_per_second": round(learner.games_played
                                                       / max(result.seconds, 1e-9), 1),
                             "history": result.history}
    if machines is not None:
        extra["cluster"] = {**machines, **getattr(learner, "selfplay_status", {})}
    return result.model, extra


def _cluster_lost(learner: Any, error: Exception) -> tuple[Model, dict[str, Any]]:
    """The Ray cluster went away: the model of the weights last pulled from it (a whole
    round, the last checkpoint's or a later one's), evaluated, written where asked, and the
    run ends with the reason."""
    from gameai.trainer.evaluation.evaluate import evaluate
    from gameai.trainer.training import with_evaluation

    exported = learner.export()
    model = with_evaluation(
        lambda r: exported.with_info(learner.info(evaluation=r)),
        evaluate(exported, seed=learner.seed))
    return model, {"stopped": "cluster_lost", "error": str(error)}


def _distil(args: argparse.Namespace, game: Game, params: dict[str, str]
            ) -> tuple[Model, dict[str, Any]]:
    from gameai.trainer.evaluation.evaluate import evaluate
    from gameai.trainer.learners.base import build_params
    from gameai.trainer.learners.mlp import MlpParams, distill, restamp
    from gameai.trainer.progress import Progress
    from gameai.trainer.training import with_evaluation

    if not args.teacher:
        raise CommandError("--algorithm mlp distils a trained table: give it --teacher FILE")
    teacher = read_model(args.teacher)
    if teacher.game is not game:
        raise CommandError(f"the teacher {args.teacher} plays {teacher.game.name}, "
                           f"not {game.name}")
    checked = build_params(MlpParams, params)
    assert isinstance(checked, MlpParams)
    with Progress(total=checked.epochs, unit="epoch", enabled=not args.quiet,
                  desc=f"mlp {game.name}") as bar:
        done = [0]

        def advance(epoch: int, accuracy: float) -> None:
            bar.advance(epoch - done[0], note=f"network right {100 * accuracy:.1f}%")
            done[0] = epoch

        result = distill(teacher, params=checked, seed=args.seed, progress=advance)
    student = result.model
    model = with_evaluation(lambda r: restamp(student, student.info.with_updates(evaluation=r)),
                            evaluate(student, seed=args.seed))
    return model, {"distillation": result.to_json()}


def _publish(args: argparse.Namespace, model: Model) -> dict[str, Any]:
    from gameai.store import StoreError, StoreUnavailable
    from gameai.store.connect import StoreSettings, open_store
    from gameai.trainer.worker.gates import publish, who

    settings = StoreSettings.load({"store_url": args.store_url,
                                   "store_prefix": args.store_prefix})
    try:
        with open_store(settings) as store:
            done = publish(store, model, by=who(), promote=args.promote or "manual")
    except StoreUnavailable as e:
        raise CommandError(f"cannot publish: {e}", STORE_DOWN) from e
    except StoreError as e:
        raise CommandError(f"cannot publish: {e}") from e
    return done.to_json()


def run_evaluate(args: argparse.Namespace) -> int:
    from gameai.games.budget import estimate_text
    from gameai.trainer.evaluation.evaluate import evaluate, evaluation_estimate

    if args.file and (args.version or args.game):
        raise CommandError("give a model FILE, or --game and --version of a stored one")
    if args.file:
        model = read_model(args.file)
    elif args.game and args.version:
        model = stored_model(args)
    else:
        raise CommandError("give a model FILE, or --game G --version V (with --store URL)")
    estimate = evaluation_estimate(model, random_games=args.random_games)
    print(f"gameai evaluate: {estimate.what}: about {estimate_text(estimate)} (estimated)",
          file=sys.stderr, flush=True)
    report = evaluate(model, random_games=args.random_games, seed=args.seed)
    if args.judge_games:
        report["judged"] = _judged(model, report, args)
        if args.file:  # which file was judged: `models import --judged` checks it
            report["sha256"] = hashlib.sha256(Path(args.file).read_bytes()).hexdigest()
    print(json.dumps(report) if args.json else evaluation_text(model, report))
    return 0


def _check_judge_time(seconds: float) -> None:
    if not 0 < seconds <= 600:
        raise CommandError(f"--judge-time: must be above 0 and at most 600 seconds, got "
                           f"{seconds:g}", USAGE)


def _judged(model: Model, report: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """The gates' judged measures of ``model`` (:class:`GateJudge`), with a progress line."""
    from gameai.trainer.evaluation.book import default_book
    from gameai.trainer.evaluation.judge import GateJudge
    from gameai.trainer.progress import Progress

    _check_judge_time(args.judge_time)
    judge = GateJudge(model.game, games=args.judge_games, time_limit=args.judge_time,
                      seed=args.seed, book=default_book(model.game))

    # the judge says what it plays ("game N of M") as it goes: the bar's note, on a terminal
    with Progress(total=None, unit=" step", desc=f"judging {model.game.name}",
                  enabled=sys.stderr.isatty()) as bar:
        judged = judge.measures(model, report, progress=lambda what: bar.advance(1, note=what))
    print(f"gameai evaluate: judged in {judged['seconds']} s", file=sys.stderr)
    return judged


def stored_model(args: argparse.Namespace) -> Model:
    from gameai.games import get_game
    from gameai.models import CorruptModel
    from gameai.store import StoreError, StoreUnavailable
    from gameai.store.connect import StoreSettings, open_store

    game = get_game(args.game)
    settings = StoreSettings.load(vars(args))
    try:
        with open_store(settings) as store:
            record = store.require(game=game.name, ref=args.version)
            return store.load(game=game.name, version=record.version)
    except StoreUnavailable as e:
        raise CommandError(str(e), STORE_DOWN) from e
    except (StoreError, CorruptModel) as e:
        raise CommandError(str(e)) from e


def run_bench_selfplay(args: argparse.Namespace) -> int:
    from gameai.bench.learners import selfplay
    from gameai.games import get_game
    from gameai.trainer.training import CannotTrain

    game = get_game(args.game)
    if args.algorithm == "ntuple":
        return _bench_actors(args, game)
    if args.ceiling:
        raise CommandError("--ceiling times parallel actors: add --algorithm ntuple", USAGE)
    if not game.cell_kernels:
        raise CommandError(f"bench selfplay times the m,n,k self-play kernels against their "
                           f"plain-Python twin; {game.name} is played along its state graph: "
                           f"time its learners with 'gameai bench learners --game "
                           f"{game.name}'")
    try:
        figures = selfplay(game.name, seconds=args.seconds)
    except CannotTrain as e:
        raise CommandError(str(e)) from e
    print(json.dumps(figures) if args.json else figure_lines(figures))
    return 0


def _bench_actors(args: argparse.Namespace, game: Game) -> int:
    from gameai.bench.learners import CeilingFailed, actor_scaling, actor_strength
    from gameai.trainer.learners.base import BadParameter
    from gameai.trainer.selfplay.ray import RayUnavailable
    from gameai.trainer.training import CannotTrain

    try:
        actors = tuple(int(k) for k in args.actors.split(",") if k)
    except ValueError:
        raise CommandError(f"--actors must be comma-separated counts, got {args.actors!r}",
                           USAGE) from None
    if not actors or min(actors) < 1 or max(actors) > 64:
        raise CommandError("--actors: counts from 1 to 64", USAGE)
    if not game.cell_kernels:
        raise CommandError(f"the n-tuple learner plays m,n,k games; {game.name} is not one",
                           USAGE)
    say = (lambda _: None) if args.json else print
    params = parse_params(args.param)
    try:
        figures: dict[str, Any] = {"speed": actor_scaling(
            game.name, actors=actors, seconds=args.seconds, cluster=args.cluster,
            params=params, games=args.games or 0, ceiling=args.ceiling, progress=say)}
        if args.judge:
            figures["strength"] = actor_strength(
                game.name, actors=actors, games=args.judge_after, judge_games=args.judge_games,
                time_limit=args.judge_time, positions=args.positions, params=params,
                progress=say)
    except RayUnavailable as e:
        raise CommandError(str(e), USAGE) from e
    except BadParameter as e:
        raise CommandError(f"--param: {e}", USAGE) from e
    except CeilingFailed as e:
        raise CommandError(f"--ceiling: {e}") from e
    except CannotTrain as e:
        raise CommandError(str(e)) from e
    if args.json:
        print(json.dumps(figures))
    else:
        m = figures["speed"]["machine"]
        print(f"{m['cores']} cores, load average {m['load_average']} -> "
              f"{m['load_average_after']}")
    return 0


def run_bench_learners(args: argparse.Namespace) -> int:
    from gameai.bench.learners import learners
    from gameai.games import get_game
    from gameai.trainer.learners.base import BadParameter
    from gameai.trainer.training import CannotTrain

    try:
        seeds = tuple(int(s) for s in args.seeds.split(","))
    except ValueError as e:
        raise CommandError(f"--seeds must be comma-separated integers, got {args.seeds!r}") \
            from e
    game = get_game(args.game)
    algorithms = tuple(a for a in args.algorithms.split(",") if a)
    unknown = [a for a in algorithms if a not in SELF_PLAY]
    if unknown:
        raise CommandError(f"--algorithms: unknown {', '.join(unknown)}; choose among "
                           f"{', '.join(SELF_PLAY)}", USAGE)
    try:
        figures = learners(seeds=seeds, game_name=game.name, algorithms=algorithms,
                           params=parse_params(args.param), max_games=args.max_games)
    except BadParameter as e:
        raise CommandError(f"--param: {e}", USAGE) from e
    except CannotTrain as e:
        raise CommandError(str(e)) from e
    print(json.dumps(figures) if args.json else learners_text(figures))
    return 0


# -- helpers ------------------------------------------------------------------------------

def parse_params(pairs: list[str]) -> dict[str, str]:
    """``--param NAME=VALUE`` flags as a dict (the learner checks names and values)."""
    params = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise CommandError(f"--param expects NAME=VALUE, got {pair!r}")
        params[name.strip()] = value.strip()
    return params


def read_model(path: str) -> Model:
    from gameai.models import CorruptModel, load_model

    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise CommandError(f"cannot read {path}: {e.strerror}") from e
    try:
        return load_model(data)
    except CorruptModel as e:
        raise CommandError(f"{path} is not a valid model: {e}") from e


def _writable(path: str | None, force: bool) -> Path | None:
    """Check before training that ``--out`` may be written, so no work is wasted."""
    if path is None:
        return None
    out = Path(path)
    if out.exists() and not force:
        raise CommandError(f"{out} exists; use --force to replace it")
    if not out.parent.is_dir():
        raise CommandError(f"cannot write {out}: {out.parent} is not a directory")
    return out


@contextlib.contextmanager
def _interruptible() -> Iterator[Any]:
    """A first Ctrl-C ends training after the current round (the model is still written);
    a second one stops at once."""
    asked = [False]

    def handler(signum: int, frame: Any) -> None:
        if asked[0]:
            raise KeyboardInterrupt
        asked[0] = True
        print("\nfinishing the round (Ctrl-C again to abort)", file=sys.stderr)

    old = signal.signal(signal.SIGINT, handler)
    try:
        yield lambda: asked[0]
    finally:
        signal.signal(signal.SIGINT, old)


def _epoch_iso(stamp: str) -> str:
    try:
        when = dt.datetime.fromtimestamp(int(stamp), dt.UTC)
    except (ValueError, OverflowError, OSError) as e:
        raise CommandError(f"SOURCE_DATE_EPOCH must be a unix time, got {stamp!r}") from e
    return when.isoformat(timespec="seconds").replace("+00:00", "Z")
