"""``gameai serve`` and ``gameai bench server``. Imports only the standard library at load
time; the benchmark's HTTP client is the standard library's, so the image runs it too."""

from __future__ import annotations

import argparse

from gameai.cli.common import USAGE, CommandError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gameai serve``."""
    p = sub.add_parser(
        "serve", help="run the move server (gRPC, REST, web board, metrics)",
        description="Serve best moves and values over gRPC and REST from the model store. "
        "Every flag also has an environment variable (docs/service.md); flags win.")
    p.add_argument("--store", dest="store_url", metavar="URL",
                   help="redis://, rediss:// or unix:// URL (default: an embedded Redis)")
    p.add_argument("--store-file", metavar="PATH", help="read the store URL from this file")
    p.add_argument("--store-prefix", metavar="PREFIX", help="key prefix (default gameai)")
    p.add_argument("--data-dir", metavar="DIR", help="embedded Redis data directory")
    p.add_argument("--host", help="bind address (default 127.0.0.1)")
    p.add_argument("--http-port", metavar="PORT", help="REST, web board, /metrics (8000)")
    p.add_argument("--grpc-port", metavar="PORT", help="gRPC (50051)")
    p.add_argument("--games", metavar="G,...", help="games to serve (default tictactoe)")
    p.add_argument("--admin-token-file", metavar="PATH",
                   help="bearer token for the admin routes, read from this file (no token: "
                   "admin routes off; GAMEAI_ADMIN_TOKEN also works)")
    p.add_argument("--workers", metavar="N",
                   help="processes sharing the ports (default: 2 on two or more cores, else 1)")
    p.add_argument("--poll-seconds", metavar="S", help="store poll period, the fallback to "
                   "pub/sub (default 1)")
    p.add_argument("--max-batch", metavar="N", help="boards per batch request (10000)")
    p.add_argument("--max-depth", metavar="N", help="deepest search a best-move or evaluate "
                   "request may ask of a model that searches (8)")
    p.add_argument("--max-nodes", metavar="N", help="the most nodes a request's node budget "
                   "may give a model's search (10000000; more is capped)")
    p.add_argument("--max-time-ms", metavar="MS", help="the longest a request's time budget "
                   "may give a model's search (10000; more is capped)")
    p.add_argument("--max-body-bytes", metavar="N", help="largest request (1 MiB)")
    p.add_argument("--grace-seconds", metavar="S", help="longest shutdown at SIGTERM (10)")
    p.add_argument("--drain-seconds", metavar="S", help="at SIGTERM, keep serving this long "
                   "after turning NOT_SERVING, so load balancers move away (1)")
    p.add_argument("--max-solve-ms", metavar="MS", help="the longest solver budget a review "
                   "or a streamed analysis may ask (30000)")
    p.add_argument("--shadow-queue", metavar="N", help="best-move queries that may wait for "
                   "the shadow worker; more are dropped and counted (1000)")
    p.add_argument("--shadow-solve-ms", metavar="MS", help="the solver's budget per shadowed "
                   "query, for the optimal-move rates (20; 0: none)")
    p.add_argument("--ready-when", metavar="all|any", help="/readyz and gRPC health say "
                   "ready once every served game has its production model loaded (all, the "
                   "default) or once any one has (the others answer 404 until then)")
    p.add_argument("--exact-ms", metavar="GAME=MS,...", help="the solver's budget per "
                   "best-move query at level best, by game: a proved move is played and "
                   "answered exact (connect-four=1; a game left out: the network's move)")
    p.add_argument("--exact-background-ms", metavar="GAME=MS,...", help="what a background "
                   "prover spends, at the lowest priority, on a position the request's budget "
                   "did not prove, writing the proof to the shared table (connect-four=2000; "
                   "a game left out: none)")
    p.add_argument("--proved-max", metavar="N", help="positions the shared table of proved "
                   "positions keeps per game; later proofs are not written (1000000)")
    p.add_argument("--log-level", metavar="LEVEL", help="debug, info, warning, error")
    p.set_defaults(func=run_serve)


def register_bench(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gameai bench server``."""
    p = sub.add_parser(
        "server", help="move server throughput and latency, gRPC and REST",
        description="Start a server on free loopback ports with an embedded Redis and a "
        "perfect tictactoe model, then measure BestMove against health checks on both "
        "transports, p50/p99 latency at 8 concurrent clients, batch evaluation, and one "
        "process against several sharing the ports.")
    p.add_argument("--seconds", type=float, default=2.0, help="per measurement (default 2)")
    p.add_argument("--rounds", type=int, default=3, help="baseline/move rounds (default 3)")
    p.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    p.add_argument("--workers", default="1,2", help="server process counts to compare")
    p.add_argument("--client-processes", type=int, default=2,
                   help="load-generating processes (default 2)")
    p.add_argument("--review-games", type=int, default=5000, help="self-play games that "
                   "train the Connect Four network the reviews are timed with (5000)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run_bench)
    p = sub.add_parser(
        "exact", help="Connect Four best-move latency with and without exact play",
        description="Start one server per solver budget (GAMEAI_EXACT_MS) over one embedded "
        "Redis with a Connect Four n-tuple network, then drive each in turn with the same "
        "best-move requests (positions of random games, plies 0-40) from concurrent REST "
        "clients: p50/p99 latency and the share of answers proved exact, by ply.")
    p.add_argument("--budgets", default="0,3", help="solver budgets in ms, comma-separated "
                   "(fractions allowed: 0,0.5,1; 0: the network alone; default 0,3)")
    p.add_argument("--seconds", type=float, default=5.0, help="per server and round (5)")
    p.add_argument("--rounds", type=int, default=2, help="rounds, each over new positions "
                   "(2)")
    p.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    p.add_argument("--workers", type=int, default=1, help="server processes each (1)")
    p.add_argument("--positions", type=int, default=None, help="positions drawn per round "
                   "(each is asked once per server; default 3,000 a second of --seconds, "
                   "at least 6,000: more than a server answers, so none runs dry)")
    p.add_argument("--train-games", type=int, default=500, help="self-play games that "
                   "train the network (500)")
    p.add_argument("--model", metavar="FILE", help="serve this Connect Four model instead "
                   "('bundled': the bundled starting model)")
    p.add_argument("--games", type=int, default=0, metavar="N", help="also play N games as "
                   "the first player against the perfect player on each server: the share "
                   "of its best moves proved exact, by ply (default 0)")
    p.add_argument("--time-limit", type=float, default=300.0, metavar="S", help="with "
                   "--games: the perfect player's seconds a move past its book (300)")
    p.add_argument("--seed", type=int, default=0, help="with --games: the perfect player's "
                   "tie-breaks (0)")
    p.add_argument("--book-games", type=int, default=0, metavar="N", help="with --games: "
                   "first build a book (gameai book build) from N games of the model as X "
                   "against the perfect player, its tie-breaks seeded apart from the "
                   "measured games' (default 0: no book)")
    p.add_argument("--background-ms", type=int, default=0, metavar="MS",
                   help="the servers' background prover, ms a position "
                   "(GAMEAI_EXACT_BACKGROUND_MS; default 0: none, since the latency rounds' "
                   "positions never come again and an idle server's proofs would load the "
                   "machine the next server is measured on; give it to see the games' book "
                   "grow from their own traffic)")
    p.add_argument("--revisit", type=int, default=0, metavar="N",
                   help="also ask N middle-game positions (plies 10-19) of each server one at "
                   "a time, then again after --revisit-wait seconds idle: how many were "
                   "exact each time (with --background-ms, the prover's work between)")
    p.add_argument("--revisit-wait", type=float, default=30.0, metavar="S",
                   help="with --revisit: the idle seconds between the two passes (30)")
    p.add_argument("--book-every-reply", action="store_true", help="with --games: the "
                   "book also follows every optimal reply of the perfect player (gameai "
                   "book build --every-reply), so it holds every line the measured games "
                   "can take up to the book's last ply (--book-games may then be 0)")
    p.add_argument("--book-plies", default="16-26", metavar="FROM-TO", help="the plies the "
                   "book proves (16-26)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run_bench_exact)


def run_serve(args: argparse.Namespace) -> int:
    from gameai.service.app import serve
    from gameai.service.settings import SettingsError, load_settings

    flags = {k: v for k, v in vars(args).items() if k not in ("func", "command")}
    try:
        settings = load_settings(flags)
    except SettingsError as e:
        raise CommandError(str(e), USAGE) from None
    return serve(settings)


def run_bench_exact(args: argparse.Namespace) -> int:
    from gameai.bench.exact import book_plies, budget_list, main

    try:
        book_plies(args.book_plies)
        budget_list(args.budgets)
    except ValueError as e:
        raise CommandError(str(e), USAGE) from None
    if args.book_games < 0:
        raise CommandError("--book-games must be 0 or more", USAGE)
    if args.revisit < 0 or args.revisit_wait < 0:
        raise CommandError("--revisit and --revisit-wait must be 0 or more", USAGE)
    if args.background_ms < 0:
        raise CommandError("--background-ms must be 0 or more", USAGE)
    if args.positions is not None and args.positions < 1:
        raise CommandError(f"--positions must be 1 or more, got {args.positions}", USAGE)
    return main(args)


def run_bench(args: argparse.Namespace) -> int:
    from gameai.bench.server import main

    return main(args)
