"""The handlers of ``gameai train``, ``gameai evaluate`` and the trainer's benchmarks.

Each turns its arguments into calls of the training, evaluation and publishing modules,
and their named errors into one-line messages (:class:`gameai.cli.CommandError`): 1 for a
refused request, 3 when the store cannot be reached.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gameai.cli import CommandError, write_atomically
from gameai.games import get_game
from gameai.models import CorruptModel, Model, load_model
from gameai.store import StoreError, StoreUnavailable
from trainer.cli import DEFAULT_GAMES, DEFAULT_UNBEATABLE_CAP
from trainer.learner import BadParameter
from trainer.progress import Progress, summary
from trainer.training import CannotTrain

STORE_DOWN = 3


def run_train(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    params = parse_params(args.param)
    if args.promote and not args.store:
        raise CommandError("--promote needs --store (where to publish)")
    out = _writable(args.out, args.force)
    try:
        if args.algorithm == "mlp":
            model, extra = _distil(args, game, params)
        else:
            model, extra = _self_play(args, game, params)
    except (BadParameter, CannotTrain) as e:
        raise CommandError(str(e)) from e
    if out is not None:
        write_atomically(out, model.to_bytes())
        extra["out"] = str(out)
    if args.store:
        extra["published"] = _publish(args, model)
    report = {"game": game.name, "algorithm": args.algorithm, "seed": args.seed,
              "games_played": model.info.games_played, **extra,
              "evaluation": model.info.evaluation}
    print(json.dumps(report) if args.json else _train_text(report))
    return 0


def _self_play(args: argparse.Namespace, game: Any, params: dict[str, str]
               ) -> tuple[Model, dict[str, Any]]:
    from trainer.training import make_learner, train

    if args.teacher:
        raise CommandError("--teacher is only for --algorithm mlp")
    learner = make_learner(game, args.algorithm, seed=args.seed, params=params)
    cap = args.games or (DEFAULT_UNBEATABLE_CAP if args.until_unbeatable else DEFAULT_GAMES)
    stamp = os.environ.get("SOURCE_DATE_EPOCH")  # reproducible builds: fixed metadata
    created_at = _epoch_iso(stamp) if stamp else None
    with Progress(total=None if args.until_unbeatable else cap, enabled=not args.quiet,
                  desc=f"{args.algorithm} {game.name}") as bar, _interruptible() as stop:
        result = train(learner, games=cap, until_unbeatable=args.until_unbeatable,
                       eval_every=args.eval_every, should_stop=stop,
                       on_round=lambda s, c: bar.advance(s.games, note=summary(c.evaluation)),
                       record_time=stamp is None, created_at=created_at)
    extra: dict[str, Any] = {"stopped": result.stopped,
                             "selfplay_seconds": round(result.seconds, 3),
                             "games_per_second": round(learner.games_played
                                                       / max(result.seconds, 1e-9), 1)}
    if args.plot:
        from trainer.plot import plot_history

        try:
            plot_history(result.history, args.plot, cols=game.cols,
                         title=f"{args.algorithm} on {game.name}, seed {args.seed}")
        except (RuntimeError, OSError) as e:
            raise CommandError(f"cannot draw {args.plot}: {e}") from e
        extra["plot"] = args.plot
    return result.model, extra


def _distil(args: argparse.Namespace, game: Any, params: dict[str, str]
            ) -> tuple[Model, dict[str, Any]]:
    from trainer.evaluate import evaluate
    from trainer.learner import build_params
    from trainer.mlp import MlpParams, distill, restamp
    from trainer.training import with_evaluation

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
    from gameai.store.connect import StoreSettings, open_store
    from trainer.gates import publish

    settings = StoreSettings.from_env(url=args.store, prefix=args.store_prefix)
    try:
        with open_store(settings) as store:
            done = publish(store, model, by=who(), promote=args.promote or "manual")
    except StoreUnavailable as e:
        raise CommandError(f"cannot publish: {e}", STORE_DOWN) from e
    except StoreError as e:
        raise CommandError(f"cannot publish: {e}") from e
    return done.to_json()


def run_evaluate(args: argparse.Namespace) -> int:
    from trainer.evaluate import evaluate

    if args.file and (args.version or args.game):
        raise CommandError("give a model FILE, or --game and --version of a stored one")
    if args.file:
        model = read_model(args.file)
    elif args.game and args.version:
        model = _stored_model(args)
    else:
        raise CommandError("give a model FILE, or --game G --version V (with --store URL)")
    report = evaluate(model, random_games=args.random_games, seed=args.seed)
    print(json.dumps(report) if args.json else evaluation_text(model, report))
    return 0


def _stored_model(args: argparse.Namespace) -> Model:
    from gameai.store.connect import StoreSettings, open_store

    game = get_game(args.game)
    settings = StoreSettings.from_env(url=args.store, prefix=args.store_prefix,
                                      data_dir=args.data_dir)
    try:
        with open_store(settings) as store:
            record = store.require(game=game.name, ref=args.version)
            return store.load(game=game.name, version=record.version)
    except StoreUnavailable as e:
        raise CommandError(str(e), STORE_DOWN) from e
    except (StoreError, CorruptModel) as e:
        raise CommandError(str(e)) from e


def run_bench_selfplay(args: argparse.Namespace) -> int:
    from trainer.bench import selfplay

    figures = selfplay(args.game, seconds=args.seconds)
    print(json.dumps(figures) if args.json else _lines(figures))
    return 0


def run_bench_learners(args: argparse.Namespace) -> int:
    from trainer.bench import learners

    try:
        seeds = tuple(int(s) for s in args.seeds.split(","))
    except ValueError as e:
        raise CommandError(f"--seeds must be comma-separated integers, got {args.seeds!r}") \
            from e
    figures = learners(seeds=seeds, game_name=args.game)
    print(json.dumps(figures) if args.json else _learners_text(figures))
    return 0


def _learners_text(figures: dict[str, Any]) -> str:
    lines = [f"time until unbeatable as X and O on {figures['game']} (wall: self-play and "
             f"evaluation; load average {figures['load_average']})"]
    for algorithm in ("td", "qlearning", "tally"):
        f = figures[algorithm]
        runs = ", ".join(f"seed {r['seed']}: {r['seconds']:.2f} s ({r['games']:,} games)"
                         for r in f["runs"])
        target = (f"of target {f['target_seconds']:.0f} s " if f["target_seconds"] is not None
                  else "")
        lines.append(f"  {algorithm:>9}: worst {f['worst_seconds']:.2f} s {target}"
                     f"[{'met' if f['met'] else 'MISSED'}]; {runs}")
    for r in figures["mlp"]["runs"]:
        lines.append(f"  mlp (seed {r['seed']} td teacher): {r['student_bytes']:,} bytes vs "
                     f"{r['teacher_bytes']:,}, {r['exceptions']} exceptions, network right "
                     f"{100 * r['network_accuracy']:.1f}%, unbeatable {r['unbeatable']}, "
                     f"{r['student_move_us']:.0f} us/move vs {r['teacher_move_us']:.0f}")
    return "\n".join(lines)


# -- helpers ------------------------------------------------------------------------------

def parse_params(pairs: list[str]) -> dict[str, str]:
    params = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise CommandError(f"--param expects NAME=VALUE, got {pair!r}")
        params[name.strip()] = value.strip()
    return params


def read_model(path: str) -> Model:
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


def who() -> str:
    return f"trainer@{socket.gethostname()}"


def _epoch_iso(stamp: str) -> str:
    try:
        when = dt.datetime.fromtimestamp(int(stamp), dt.UTC)
    except (ValueError, OverflowError, OSError) as e:
        raise CommandError(f"SOURCE_DATE_EPOCH must be a unix time, got {stamp!r}") from e
    return when.isoformat(timespec="seconds").replace("+00:00", "Z")


def evaluation_text(model: Model, report: dict[str, Any]) -> str:
    info = model.info
    lines = [f"{model.game.describe()}: {model.kind} model by {info.algorithm}, "
             f"{info.games_played:,} games, {report['model_bytes']:,} bytes"]
    if "losses_as_x" in report and "losses_as_o" in report:
        from trainer.evaluate import unbeatable

        verdict = "unbeatable" if unbeatable(report) else "beatable"
        what = report.get("opponent_counts", "lines")
        lines.append(f"  opponent's winning {what}: as X {report['losses_as_x']:,}, as O "
                     f"{report['losses_as_o']:,} ({verdict}; the game is "
                     f"{report.get('game_value', 'unsolved').replace('_', ' ')})")
    if "optimal_move_rate" in report:
        lines.append(f"  optimal moves: {100 * report['optimal_move_rate']:.2f}% of "
                     "reachable positions")
    for side, r in report["vs_random"].items():
        lines.append(f"  vs random {side.replace('_', ' ')}: {r['win']} won, {r['draw']} "
                     f"drawn, {r['loss']} lost")
    for name, ok in report.get("checks", {}).items():
        lines.append(f"  {name.replace('_', ' ')}: {'yes' if ok else 'NO'}")
    for name, why in report["omitted"].items():
        lines.append(f"  omitted {name}: {why}")
    return "\n".join(lines)


def _train_text(report: dict[str, Any]) -> str:
    head = (f"{report['algorithm']} on {report['game']}: {report['games_played']:,} games")
    if "stopped" in report:
        head += (f", stopped: {report['stopped']}, self-play {report['selfplay_seconds']} s "
                 f"({report['games_per_second']:,.0f} games/s)")
    lines = [head, "  " + summary(report["evaluation"])]
    if "distillation" in report:
        lines.append("  distillation: " + json.dumps(report["distillation"]))
    if "out" in report:
        lines.append(f"  wrote {report['out']}")
    elif "published" not in report:
        lines.append("  model not saved (use --out FILE or --store URL)")
    if "published" in report:
        lines.append("  published: " + json.dumps(report["published"]))
    if "plot" in report:
        lines.append(f"  plot: {report['plot']}")
    return "\n".join(lines)


def _lines(figures: dict[str, Any]) -> str:
    return "\n".join(f"{k:>34}: {v}" for k, v in figures.items())
