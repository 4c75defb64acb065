"""``gameai bench ntuple``: an n-tuple model's serving latency and strength (issue 14).

Imports only the standard library at load time."""

from __future__ import annotations

import argparse
import json
from typing import Any

from gameai.cli.common import CommandError
from gameai.cli.train import read_model


def register_bench(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gameai bench ntuple``."""
    p = sub.add_parser(
        "ntuple", help="an n-tuple model: best-move latency by search depth, strength",
        description="Serve an n-tuple model from a real server and time best-move at each "
        "search depth with concurrent clients (p50, p99); judge the network alone and with "
        "each depth against the exhaustive opponent (four-in-a-row and smaller).")
    p.add_argument("--model", required=True, metavar="FILE", help="an n-tuple model file")
    p.add_argument("--depths", default="0,1,2,3,4", help="comma-separated (default 0-4)")
    p.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    p.add_argument("--seconds", type=float, default=5.0, help="per depth (default 5)")
    p.add_argument("--selfplay", type=int, default=0, metavar="GAMES",
                   help="also time self-play (learning included) with 1 and 2 parallel "
                   "actors, GAMES games a round, rounds alternating")
    p.add_argument("--judge", type=int, default=0, metavar="GAMES",
                   help="also judge the network alone and with the game's default depth by "
                   "the exact solver: GAMES games against perfect play as X and as O, a "
                   "noisy solver (0.1/0.2/0.3) as O, and the error rate by stage")
    p.add_argument("--positions", type=int, default=0, metavar="N",
                   help="also the error rates of the network alone and with the default "
                   "depth on N solver-labelled benchmark positions of each class (gravity "
                   "games; labelled once, then cached), counted by exact score and by "
                   "outcome")
    p.add_argument("--position-classes", default="beginning-hard,middle-medium",
                   metavar="CLASSES", help="with --positions: STAGE-DIFFICULTY classes, "
                   "comma-separated (default beginning-hard,middle-medium), or 'pons': the "
                   "five classes of Pons's public sets a benchmark can afford (end-easy, "
                   "middle-easy, middle-medium, beginning-easy, beginning-medium)")
    p.add_argument("--exact-ms", type=float, default=0, metavar="MS",
                   help="with --judge and --positions: also the served best level, the "
                   "solver first within MS ms a move as a server tries it (no shared "
                   "table; in --judge's games the proofs it made are kept, as a server "
                   "keeps them), the network's move where it does not prove (default 0: "
                   "not judged)")
    p.add_argument("--proved-store", metavar="URL",
                   help="with --exact-ms and --judge: level best also reads the shared table "
                   "of proved positions of the store at URL (a book of `gameai book build`), "
                   "as a server of that store does, and writes its own proofs there as one "
                   "would (default: no shared table)")
    p.add_argument("--proved-prefix", default="gameai", metavar="PREFIX",
                   help="with --proved-store: the store's key prefix (gameai)")
    p.add_argument("--judge-sides", default="XO", choices=("X", "O", "XO"),
                   help="with --judge: the sides the model plays against perfect play "
                   "(default XO; the noisy solvers are met as O, so only with O). X alone "
                   "halves a Connect Four judgement's proofs")
    p.add_argument("--judge-seed", type=int, default=0, metavar="SEED",
                   help="with --judge: the seed of the judge's games (default 0); another "
                   "seed plays other games, to check a figure chosen on the first")
    p.add_argument("--judge-mistakes", action="store_true",
                   help="with --judge: for each game as X not won, and each game as O "
                   "that a noisy solver gave away and the model lost, the first move that "
                   "made its exact outcome worse, and whether the other depths judged "
                   "play a right move there")
    p.add_argument("--judge-depths", metavar="DEPTHS",
                   help="with --judge and --positions: the search depths to judge, "
                   "comma-separated, besides the network alone (default: the game's "
                   "default depth)")
    p.add_argument("--positions-seed", type=int, default=0, metavar="SEED",
                   help="with --positions: which set of benchmark positions (default 0; "
                   "another seed draws and labels another set, to check a figure on "
                   "positions it was not chosen on)")
    p.add_argument("--noisy-games", type=int, default=200, metavar="N")
    p.add_argument("--per-stage", type=int, default=200, metavar="N",
                   help="solver-labelled positions of random play per stage (thirds of "
                   "the board) for the error rate; 0: none. Connect Four's openings take "
                   "minutes each: use --positions (its benchmark classes) there")
    p.add_argument("--time-limit", type=float, default=2.0, metavar="S",
                   help="seconds the solver may spend on a position (default 2)")
    p.add_argument("--book", metavar="FILE",
                   help="with --judge: where the searched opponents' proved answers are kept "
                   "and read back (default: book-GAME.jsonl in the cache folder), so a later "
                   "judgement does not solve the same openings again")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="with --judge: label the error rates' positions as Ray tasks on the "
                   "cluster whose head is at ADDRESS (host:port), or 'auto'")
    p.add_argument("--table-bits", type=int, default=24, metavar="N",
                   help="with --judge on a searched board: the search table's 2**N slots of "
                   "16 bytes (default 24: 256 MiB; 26 for openings: 1 GiB)")
    p.add_argument("--skip-latency", action="store_true")
    p.add_argument("--skip-strength", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_bench_ntuple)


def run_bench_ntuple(args: argparse.Namespace) -> int:
    from gameai.bench.ntuple import latency, strength
    from gameai.models import NtupleModel

    model = read_model(args.model)
    if not isinstance(model, NtupleModel):
        raise CommandError(f"{args.model} is a {model.kind} model, not an n-tuple network")
    depths = _depths("--depths", args.depths)
    judged: list[int | None] = [None, *(_depths("--judge-depths", args.judge_depths)
                                        if args.judge_depths else [model.default_depth])]
    classes = _classes(args.position_classes)  # refused before any long work
    if not 0 <= args.exact_ms <= 1000:
        raise CommandError(f"--exact-ms: from 0 to 1000, got {args.exact_ms:g}")
    if args.proved_store and not (args.exact_ms > 0 and args.judge):
        raise CommandError("--proved-store is read by level best in --judge's games: give "
                           "--exact-ms and --judge")
    say = (lambda _text: None) if args.json else print
    report: dict[str, Any] = {"model": args.model, "game": model.game.name}
    if not args.skip_latency:
        report["latency"] = latency(model, depths=depths, clients=args.clients,
                                    seconds=args.seconds, progress=say)
    if not args.skip_strength and model.game.cells <= 16:
        report["strength"] = strength(model, depths=depths, progress=say)
    if args.selfplay:
        from gameai.bench.ntuple import selfplay

        report["selfplay"] = selfplay(model.game, games=args.selfplay, progress=say,
                                      params=_shape(model))
    if args.judge:
        from pathlib import Path

        from gameai.games.mnk import search
        from gameai.games.mnk.solver import searches
        from gameai.trainer.evaluation.book import Book, default_book
        from gameai.trainer.evaluation.judge import judge

        if not 16 <= args.table_bits <= 30:
            raise CommandError(f"--table-bits: from 16 to 30, got {args.table_bits}")
        if searches(model.game):  # past the whole-game tables
            search.reserve_table(model.game, args.table_bits)
        book = Book(model.game, Path(args.book)) if args.book else default_book(model.game)
        others, exact, store = {}, None, None
        if args.exact_ms > 0:
            from gameai.bench.ntuple import BEST_LEVEL, best_level_player

            table = None
            if args.proved_store:
                store = _proved_store(args.proved_store, args.proved_prefix, model.game.name)
                table = store.proved()
            others[BEST_LEVEL], exact = best_level_player(model, args.exact_ms, table)
        try:
            report["judge"] = judge(model, depths=judged, games=args.judge,
                                    noisy_games=args.noisy_games, per_stage=args.per_stage,
                                    time_limit=args.time_limit, book=book,
                                    show_progress=True, progress=say,  # on stderr
                                    runner=_labeller(args.cluster), sides=args.judge_sides,
                                    mistakes=args.judge_mistakes, seed=args.judge_seed,
                                    others=others)
        finally:
            if exact is not None:
                exact.close()
            if store is not None:
                store.close()
    if args.positions:
        if not getattr(model.game, "gravity", False):
            raise CommandError(f"--positions: benchmark positions are drawn for gravity "
                               f"games, not {model.game.name}")
        from gameai.bench.ntuple import position_errors

        report["positions"] = position_errors(
            model, depths=judged, count=args.positions, seed=args.positions_seed,
            classes=classes, exact_ms=args.exact_ms, progress=say)
    if args.json:
        print(json.dumps(report))
    return 0


def _proved_store(url: str, prefix: str, game: str) -> Any:
    """The store of ``--proved-store``, reachable, or a command error naming it."""
    from gameai.store import ModelStore, StoreError

    try:
        store = ModelStore.from_url(url, prefix=prefix)
    except (StoreError, ValueError) as e:
        raise CommandError(f"--proved-store {url}: {e}") from e
    try:
        store.proved().size(game=game)  # reached now, not in the first game
    except StoreError as e:
        store.close()
        raise CommandError(f"--proved-store {url}: {e}") from e
    return store


def _classes(text: str) -> tuple[tuple[str, str], ...]:
    """``--position-classes``: ``pons`` or ``STAGE-DIFFICULTY`` pairs."""
    from gameai.bench.positions import DIFFICULTIES, STAGES, TEST_SET_CLASSES

    if text.strip() == "pons":
        return TEST_SET_CLASSES
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        stage, _, difficulty = part.partition("-")
        if stage not in STAGES or difficulty not in DIFFICULTIES:
            raise CommandError(f"--position-classes: {part!r} is not STAGE-DIFFICULTY (stages "
                               f"{', '.join(STAGES)}; difficulties {', '.join(DIFFICULTIES)}) "
                               "or 'pons'")
        out.append((stage, difficulty))
    if not out:
        raise CommandError("--position-classes: give at least one class, or 'pons'")
    return tuple(out)


def _depths(option: str, text: str) -> list[int]:
    try:
        depths = [int(d) for d in text.split(",") if d.strip()]
    except ValueError as e:
        raise CommandError(f"{option}: {text!r} is not a list of numbers") from e
    if not depths or min(depths) < 0 or max(depths) > 20:
        raise CommandError(f"{option}: give depths from 0 to 20, got {text!r}")
    return depths


def _shape(model: Any) -> dict[str, Any]:
    """Learner parameters that give a network of the model's shape."""
    return {"tuples": model.tuples.shape[0], "length": model.tuples.shape[1],
            "states": model.states, "sides": model.sides}


def _labeller(cluster: str | None) -> Any:
    """Where the judge's error-rate positions are labelled: Ray tasks on the cluster at
    ``cluster`` (joined here), else this process."""
    from gameai.trainer.evaluation.spread import runner
    from gameai.trainer.selfplay.ray import RayUnavailable, connect

    if cluster is None:
        return runner(False)
    try:
        connect(cluster)
    except RayUnavailable as e:
        raise CommandError(str(e)) from e
    return runner(True)
