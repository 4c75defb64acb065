"""``gameai book build``: prove the positions the served model's games reach and write them
to the store's shared table of proved positions (:mod:`gameai.trainer.book_builder`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from gameai.cli.common import STORE_DOWN, USAGE, CommandError, positive
from gameai.cli.train import store_options

DEFAULT_NOISE = 0.2  # the noisy opponent's, as the gates' middle one (0.1, 0.2, 0.3)

if TYPE_CHECKING:
    from gameai.games import Game
    from gameai.trainer import book_builder


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gameai book``."""
    p = sub.add_parser("book", help="the opening book: proved positions every server reads",
                       description="The opening book: positions the solver proved, in the "
                       "store's shared table that every server reads at level best and in "
                       "hints (docs/solver.md).")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    b = actions.add_parser(
        "build", help="prove the positions the served model's games reach",
        description="Play --games games of the served model (one side each in turn, or "
        "--sides; its move as the server plays it at level best, against a uniformly "
        "random or a perfect --opponent), then prove every position they reach up to ply "
        "--plies, deepest first, and write each to the shared table; again with the new "
        "proofs (which change the model's moves where its own were not optimal) until the "
        "games reach nothing new. With --every-reply (against the perfect opponent) also "
        "every line of its optimal replies, until the book holds every line a perfect "
        "opponent can take. Resumable: positions the table holds are skipped, so run "
        "it again to go on.")
    b.add_argument("--game", required=True)
    b.add_argument("--plies", type=int, required=True, metavar="N",
                   help="prove positions up to this ply (moves played)")
    b.add_argument("--from-ply", type=int, default=0, metavar="P",
                   help="stop after this ply (default 0: down to the start)")
    b.add_argument("--games", type=int, default=1000, metavar="N",
                   help="games of the served model that choose the positions (1000; 0 "
                   "with --every-reply: the tree of replies alone)")
    b.add_argument("--seed", type=int, default=0, help="the opponent's seed (0)")
    b.add_argument("--opponent", choices=("random", "perfect", "noisy"), default="random",
                   help="who the model plays: uniformly random moves (the default), "
                   "perfect play with ties drawn at random (the positions strong players "
                   "reach; its own proofs are kept in this machine's cache), or a noisy "
                   "solver: perfect play but, with probability --noise, a random move that "
                   "does not lose (the games a strong player's slip hands the model)")
    b.add_argument("--noise", type=float, metavar="P",
                   help="with --opponent noisy: how often it plays a random move that does "
                   "not lose instead of a perfect one (0.2, as the gates' middle opponent)")
    b.add_argument("--opponent-time-limit", type=float, default=300.0, metavar="S",
                   help="seconds the perfect opponent may search a move (300); past it, "
                   "it plays the move with the best proved bounds")
    b.add_argument("--every-reply", action="store_true",
                   help="with --opponent perfect: also follow every optimal reply of the "
                   "opponent, not only the games' sample, round by round until the book "
                   "holds every line a perfect opponent can take against the model to "
                   "--plies (the report says how much of that tree the table holds)")
    b.add_argument("--sides", choices=("XO", "X", "O"), default="XO",
                   help="the model's side: XO (X and O in turn, the default), X or O")
    b.add_argument("--model", default="production",
                   help="the version or alias whose games count (production)")
    b.add_argument("--workers", type=positive, metavar="N",
                   help="local solver processes (default: every core)")
    b.add_argument("--cluster", metavar="ADDRESS", help="prove on the Ray cluster whose "
                   "head is at ADDRESS (host:port, or 'auto') instead of local processes")
    b.add_argument("--time-limit", type=float, default=0.0, metavar="S",
                   help="seconds a position may take (0: no limit; one out of time is "
                   "left for the next run)")
    b.add_argument("--proved-max", type=positive, metavar="N", help="positions the table "
                   "keeps per game (default: $GAMEAI_PROVED_MAX or 1000000)")
    store_options(b)
    b.add_argument("--json", action="store_true", help="print the report as JSON")
    b.set_defaults(func=run_build)
    e = actions.add_parser(
        "export", help="write a game's proved positions to a book file",
        description="Write every position the store's shared table holds for --game to "
        "--out, a book file (gzip'd text, by key: the same table gives the same bytes), as "
        "the bundled models' books are made (docs/solver.md).")
    e.add_argument("--game", required=True)
    e.add_argument("--out", required=True, metavar="FILE", help="the book file to write")
    store_options(e)
    e.set_defaults(func=run_export)


def run_build(args: argparse.Namespace) -> int:
    from gameai.games import GameError, get_game
    from gameai.store import StoreError, StoreUnavailable
    from gameai.store.connect import StoreSettings, store_url
    from gameai.store.proved import DEFAULT_MAX_ENTRIES
    from gameai.trainer import book_builder
    from gameai.trainer.progress import Progress

    try:
        game = get_game(args.game).name
    except GameError as e:
        raise CommandError(str(e), USAGE) from None
    if args.plies < 0 or not 0 <= args.from_ply <= args.plies:
        raise CommandError("--plies must be 0 or more and --from-ply from 0 to --plies",
                           USAGE)
    if args.noise is not None and args.opponent != "noisy":
        raise CommandError("--noise is the noisy solver's: give --opponent noisy", USAGE)
    if args.noise is not None and not 0 < args.noise < 1:
        raise CommandError(f"--noise must be more than 0 and less than 1, got {args.noise:g}",
                           USAGE)
    if args.every_reply and args.opponent != "perfect":
        raise CommandError("--every-reply follows the perfect opponent's optimal replies: "
                           "give --opponent perfect", USAGE)
    if args.games < (0 if args.every_reply else 1):
        raise CommandError(f"--games must be {0 if args.every_reply else 1} or more, got "
                           f"{args.games}", USAGE)
    max_entries = args.proved_max or int(os.environ.get("GAMEAI_PROVED_MAX",
                                                        DEFAULT_MAX_ENTRIES))
    settings = StoreSettings.load(vars(args))
    try:
        with store_url(settings) as url:
            from gameai.store import ModelStore

            with ModelStore.from_url(url, prefix=settings.prefix) as store:
                record = store.require(game=game, ref=args.model)
                model = store.load(game=game, version=record.version)
            opponent = _opponent(args, model.game)
            workers, backend, pool = _pool(args)
            with pool as submit, Progress(total=None, unit=" positions",
                                          desc=f"book {game}",
                                          enabled=not args.json) as bar:
                report = book_builder.build_book(
                    model, store_url=url, prefix=settings.prefix, plies=args.plies,
                    games=args.games, submit=submit, workers=workers, backend=backend,
                    from_ply=args.from_ply, seed=args.seed, max_entries=max_entries,
                    time_limit=args.time_limit or None, opponent=opponent,
                    sides=args.sides, every_reply=args.every_reply, progress=bar,
                    notes=lambda text: print(text, file=sys.stderr))
    except StoreUnavailable as e:
        raise CommandError(str(e), STORE_DOWN) from e
    except StoreError as e:
        raise CommandError(str(e)) from e
    out = {"game": report.game, "version": record.version, "plies": report.plies,
           "games": report.games, "opponent": args.opponent, "sides": args.sides,
           "workers": report.workers, "backend": report.backend,
           "by_ply": [p.to_json() for p in report.by_ply]}
    if args.opponent == "noisy":
        out["noise"] = DEFAULT_NOISE if args.noise is None else args.noise
    if report.coverage:
        out["every_reply"] = {side: c.to_json() for side, c in report.coverage.items()}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        proved = sum(p.proved for p in report.by_ply)
        seconds = sum(p.seconds for p in report.by_ply)
        print(f"{game} book to ply {args.plies} from version {record.version}: {proved} "
              f"positions proved in {seconds:.1f} s on {workers} {backend} worker(s)")
        for side, c in report.coverage.items():
            state = ("complete: every line a perfect opponent can take is proved"
                     if c.complete else f"incomplete: first position missing at ply "
                     f"{c.first_missing_ply}")
            print(f"  every reply, the model as {side}: {c.model_held} of {c.model_positions}"
                  f" of its positions and {c.opponent_held} of {c.opponent_positions} of the "
                  f"opponent's held ({state})")
    incomplete = any(not c.complete for c in report.coverage.values())
    return 1 if incomplete or any(p.timed_out for p in report.by_ply) else 0


def _opponent(args: argparse.Namespace, game: Game) -> book_builder.Player:
    from gameai.trainer import book_builder

    if args.opponent == "random":
        return book_builder.random_opponent
    from gameai.trainer.evaluation.book import default_book
    from gameai.trainer.evaluation.calibrate import perfect_player

    if args.opponent_time_limit <= 0:
        raise CommandError("--opponent-time-limit must be more than 0 seconds", USAGE)
    perfect = perfect_player(game, time_limit=args.opponent_time_limit,
                             book=default_book(game))
    if args.opponent == "noisy":
        from gameai.trainer.evaluation.judge import NoisySolver

        noise = DEFAULT_NOISE if args.noise is None else args.noise
        return NoisySolver(game, perfect, noise, args.opponent_time_limit)
    return perfect


def _pool(args: argparse.Namespace
          ) -> tuple[int, str, AbstractContextManager[book_builder.Submit]]:
    from gameai.trainer import book_builder

    if args.cluster:
        from gameai.trainer.selfplay.ray import RayUnavailable, connect

        try:
            cluster = connect(args.cluster)
        except RayUnavailable as e:
            raise CommandError(str(e), USAGE) from e
        return int(cluster["cpus"]), "ray", book_builder.ray_pool()
    workers = args.workers or len(os.sched_getaffinity(0))
    return workers, "local", book_builder.local_pool(workers)


def run_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gameai.games import GameError, get_game
    from gameai.store import ModelStore, StoreError, StoreUnavailable
    from gameai.store.book import write_book
    from gameai.store.connect import StoreSettings, store_url

    try:
        game = get_game(args.game).name
    except GameError as e:
        raise CommandError(str(e), USAGE) from e
    settings = StoreSettings.load(vars(args))
    try:
        with store_url(settings) as url, ModelStore.from_url(url, prefix=settings.prefix) as store:
            entries = store.proved().entries(game=game)
    except StoreUnavailable as e:
        raise CommandError(str(e), STORE_DOWN) from e
    except StoreError as e:
        raise CommandError(str(e)) from e
    data = write_book(game, entries)
    try:
        Path(args.out).write_bytes(data)
    except OSError as e:
        raise CommandError(f"--out {args.out}: {e.strerror}") from e
    import hashlib

    print(f"{game}: {len(entries):,} proved positions written to {args.out} "
          f"({len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()})")
    return 0
