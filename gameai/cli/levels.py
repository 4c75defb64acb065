"""``gameai bench levels``: how strong each level of play is against perfect and random play.

Imports only the standard library at load time."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gameai.cli.common import REFUSED, CommandError, positive, write_atomically
from gameai.cli.train import read_model, store_options, stored_model

if TYPE_CHECKING:
    from gameai.models import Model


def register_bench(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gameai bench levels``."""
    p = sub.add_parser(
        "levels", help="each level of play against perfect and random play, as X and as O",
        description="Play every level (beginner, casual, strong, best) against the exact "
        "solver and against random play, as X and as O, and print win, draw and loss rates "
        "with 95%% intervals; check that each level is measurably stronger than the one "
        "below (exit status 1 naming the pairs that are not).")
    p.add_argument("--game", default="tictactoe")
    p.add_argument("--games", type=positive, default=2000, metavar="N",
                   help="games per level, opponent and side (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="seed of every draw (default 0)")
    p.add_argument("--model", metavar="FILE", help="the model whose values the levels play "
                   "by (default: the game's exact model, from its solver)")
    p.add_argument("--version", help="instead of --model: a stored version of --game "
                   "(number, alias or 'latest')")
    p.add_argument("--depth", type=int, metavar="D", help="a model that searches (n-tuple "
                   "networks): how deep (default: the model's default, as the server plays)")
    p.add_argument("--time-limit", type=float, default=1.0, metavar="S",
                   help="games past the whole-game tables (Connect Four): seconds the search "
                   "may spend on a position of the perfect opponent (default 1)")
    store_options(p)
    p.add_argument("--book", metavar="FILE", help="past the tables: where the search's proved "
                   "answers are kept and read back (default: book-GAME.jsonl in the cache "
                   "folder, shared with bench ntuple --judge)")
    p.add_argument("--table-bits", type=int, default=24, metavar="N",
                   help="past the tables: the search table's 2**N slots of 16 bytes "
                   "(default 24: 256 MiB)")
    p.add_argument("--save", nargs="?", const="", metavar="FILE", help="record the figures "
                   "as the game's calibration (other games' are kept) in FILE, by default the "
                   "file the server and its web board show them from (gameai/service/levels.json)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--markdown", action="store_true", help="print the table docs/levels.md "
                   "shows instead")
    p.set_defaults(func=run_bench_levels)


def run_bench_levels(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gameai.games import get_game
    from gameai.games.mnk import search
    from gameai.games.mnk.solver import searches
    from gameai.trainer.evaluation.book import Book, default_book
    from gameai.trainer.evaluation.calibrate import calibrate
    from gameai.trainer.progress import Progress

    game = get_game(args.game)
    model = _model(args, game.name)
    if model.game is not game:
        raise CommandError(f"{args.model} plays {model.game.name}, not {game.name}")
    book = Book(game, Path(args.book)) if args.book else default_book(game)
    if not 16 <= args.table_bits <= 30:
        raise CommandError(f"--table-bits: from 16 to 30, got {args.table_bits}")
    if searches(game):  # past the whole-game tables
        search.reserve_table(game, args.table_bits)
    with Progress(total=16 * args.games, desc=f"levels of {game.name}",
                  enabled=not args.json) as bar:
        report = calibrate(game, model, games=args.games, seed=args.seed,
                           time_limit=args.time_limit, depth=args.depth, book=book,
                           progress=bar.advance)
    if args.save is not None:
        _save(report, args.save)
    if args.markdown:
        from gameai.service.calibration import markdown

        print(markdown(report))
    else:
        print(json.dumps(report) if args.json else levels_text(report))
    return REFUSED if report["unordered"] else 0


def _model(args: argparse.Namespace, game: str) -> Model:
    if args.model and args.version:
        raise CommandError("give --model FILE or --version V, not both")
    if args.model:
        return read_model(args.model)
    if args.version:
        return stored_model(args)
    from gameai.games import TooLarge, get_game
    from gameai.models.oracle import solver_model

    try:
        return solver_model(get_game(game))
    except TooLarge as e:
        raise CommandError(f"{e}: give the model to calibrate (--model or --version)") from e


def _save(report: dict[str, Any], where: str) -> None:
    from gameai.service.calibration import CALIBRATION_FILE

    path = Path(where or CALIBRATION_FILE)
    try:
        saved = json.loads(path.read_text()) if path.exists() else {}
    except (OSError, ValueError) as e:
        raise CommandError(f"cannot read {path}: {e}") from e
    saved[report["game"]] = report
    write_atomically(path, (json.dumps(saved, indent=1, sort_keys=True) + "\n").encode())


def levels_text(report: dict[str, Any]) -> str:
    """The calibration as a table: per level and match-up, wins / draws / losses in percent
    (the win rate's 95% interval), then the mean score and the order check."""
    model = report["model"]
    searched = f" searched {report['depth']} deep" if report.get("depth") is not None else ""
    lines = [f"{report['game']}: levels playing by the {model.get('algorithm', '?')} model"
             f"{searched}, "
             f"{report['games']:,} games per level, opponent and side (seed {report['seed']}; "
             f"{report['seconds']} s, load {report['load_average'][0]})",
             f"{'level':<9} {'vs perfect as X':>22} {'vs perfect as O':>22} "
             f"{'vs random as X':>22} {'vs random as O':>22}  score"]
    for name, level in report["levels"].items():
        cells = [_cell(level[o][s]) for o in ("perfect", "random") for s in ("X", "O")]
        score = level["score"]
        lines.append(f"{name:<9} " + " ".join(f"{c:>22}" for c in cells) +
                     f"  {score['value']:.3f} ({score['low']:.3f}-{score['high']:.3f})")
    lines.append("cells: won / drawn / lost in %; score: 1 a win, 1/2 a draw, mean of the four")
    perfect = report["perfect_opponent"]
    if perfect["solver"] == "search":
        lines.append(f"perfect opponent: the search, {perfect['time_limit']:g} s a position; "
                     f"{100 * perfect['proved_share']:.1f}% of its {perfect['moves']:,} moves "
                     "proved optimal, the others the best proved bound")
    for o in report["order"]:
        d = o["difference"]
        verdict = "stronger" if o["ordered"] else "NOT measurably stronger"
        lines.append(f"  {o['upper']} {verdict} than {o['lower']}: score +{d['value']:.3f} "
                     f"(95% {d['low']:+.3f} to {d['high']:+.3f})")
    lines.append("levels ordered" if not report["unordered"] else
                 f"levels NOT ordered: {', '.join(report['unordered'])}")
    return "\n".join(lines)


def _cell(tally: dict[str, Any]) -> str:
    pct = [round(100 * tally[k]["value"]) for k in ("win_rate", "draw_rate", "loss_rate")]
    return "{} / {} / {}".format(*pct)
