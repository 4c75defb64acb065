"""``gameai up``: the whole service on one machine, from one command.

It opens the model store (the shared embedded Redis under the data directory, unless
``GAMEAI_STORE_URL`` or ``GAMEAI_STORE_URL_FILE`` names one), starts one trainer per game
of ``--games`` (tic-tac-toe by default) and the move server serving them all, as child
processes, waits until the server holds a production model of the first game, and prints
where everything is. A game whose trainer has not yet passed the gates is served as soon
as it does (``up`` says so); until then the web board shows it as training.

Ctrl-C (or SIGTERM) stops the children with SIGTERM, so the server drains and the trainers
finish their round, then releases the embedded Redis, whose append-only file keeps every
model for the next run. A second run finds production in the store: the server is ready
at once and each trainer continues from its game's version.

Only the standard library is imported at load time; the work is imported when it runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gameai.cli.common import USAGE, CommandError, memory_option
from gameai.cli.processes import (
    Child,
    StopSignal,
    http_status,
    port_is_free,
    scrape_sum,
)

GAMES = ("tictactoe",)
ALGORITHM = "td"  # tables: perfect on the small boards, where the worker then idles
NTUPLE_CELLS = 12  # m,n,k boards past this many cells train an n-tuple network (issue 14)
READY_SECONDS = 600.0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gameai up``."""
    p = sub.add_parser(
        "up", help="run everything on this machine: store, trainers, server",
        description="Start the model store (an embedded Redis unless GAMEAI_STORE_URL or "
        "GAMEAI_STORE_URL_FILE is set), a trainer per game that publishes and promotes "
        "its first model to pass the gates, and the move server for those games; print the "
        "URLs. Ctrl-C stops everything; the models stay in the store for the next run.")
    p.add_argument("--games", type=_games, default=GAMES, metavar="G,...",
                   help="games to train and serve, comma-separated (default tictactoe)")
    p.add_argument("--http-port", type=_port, default=8000,
                   help="REST, web board and /metrics (default 8000)")
    p.add_argument("--grpc-port", type=_port, default=50051, help="gRPC (default 50051)")
    p.add_argument("--metrics-port", type=_port, default=9100,
                   help="the first trainer's /metrics and /healthz (default 9100); the "
                   "trainer of the Nth game of --games uses the port N-1 above it")
    p.add_argument("--data-dir", metavar="DIR", help="where the embedded Redis keeps the "
                   "models (default: $GAMEAI_DATA_DIR or ~/.local/share/gameai)")
    p.add_argument("--no-bundled", dest="bundled", action="store_false",
                   help="do not start a game from its bundled model (a game with none in "
                   "the store otherwise serves the model shipped with gameai at once: "
                   "connect-four's, docs/ntuple.md)")
    p.add_argument("--exact", action="store_true",
                   help="serve the exact solver's model of each game that has no production "
                   "version yet and whose solver table fits the memory limit (published as "
                   "algorithm 'solver', not learned; its trainer then idles, as production "
                   "is perfect)")
    p.add_argument("--publish-every", type=_positive, metavar="N",
                   help="self-play games between the trainers' candidates (default: per "
                   "algorithm)")
    p.add_argument("--judge-games", type=_positive, metavar="N",
                   help="n-tuple trainers: games of each match of their gates (default 100)")
    p.add_argument("--judge-time", type=float, metavar="S",
                   help="n-tuple trainers: seconds of solver search per opponent move in "
                   "their gates (default 2)")
    memory_option(p)
    p.set_defaults(func=run_up)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def algorithm_for(game: str) -> str:
    """The learner ``up`` trains ``game`` with: td's table on the small boards (it becomes
    perfect and the trainer idles), an n-tuple network on m,n,k boards of more than
    ``NTUPLE_CELLS`` cells (four-in-a-row, ``mnk-4x5-4``, Connect Four), where tables do
    not pass the gates (issue 14), and td along the state graph for the other games."""
    from gameai.games import get_game

    rules = get_game(game)
    return "ntuple" if rules.cell_kernels and rules.cells > NTUPLE_CELLS else ALGORITHM


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a port number, got {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be between 1 and 65535, got {port}")
    return port


def _games(text: str) -> tuple[str, ...]:
    from gameai.games import GameError, get_game

    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError("must name at least one game")
    try:
        return tuple(dict.fromkeys(get_game(name).name for name in names))
    except GameError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def run_up(args: argparse.Namespace) -> int:
    from gameai.store.connect import StoreSettings, store_url
    from gameai.store.errors import StoreError

    ports = {"--http-port": [args.http_port], "--grpc-port": [args.grpc_port],
             "--metrics-port": trainer_ports(args)}
    if ports["--metrics-port"][-1] > 65535:
        raise CommandError(f"--metrics-port {args.metrics_port}: {len(args.games)} trainers "
                           "need that many ports from it, up to 65535", USAGE)
    every = [port for numbers in ports.values() for port in numbers]
    if len(set(every)) < len(every):
        raise CommandError("--http-port, --grpc-port and --metrics-port must differ (the "
                           "trainers use the metrics port and the ports after it)")
    for flag, numbers in ports.items():
        for port in numbers:
            if not port_is_free(port):
                raise CommandError(f"port {port} is in use: choose another with {flag}")
    settings = StoreSettings.load({"data_dir": args.data_dir})  # SettingsError: exit 2
    logs = settings.data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)

    stop = StopSignal()
    try:
        with stop.installed(), store_url(settings) as url:
            return _run(args, url, settings, logs, stop)
    except StoreError as e:
        raise CommandError(str(e)) from None


def trainer_ports(args: argparse.Namespace) -> list[int]:
    """The metrics port of each game's trainer, in the order of ``--games``."""
    return [args.metrics_port + i for i in range(len(args.games))]


def _run(args: argparse.Namespace, url: str, settings: Any, logs: Path,
         stop: StopSignal) -> int:
    games: tuple[str, ...] = args.games
    production = _production_versions(url, settings.prefix, games)
    exact: dict[str, str] = {}
    if args.exact:
        exact = _publish_exact(url, settings.prefix, [g for g in games if not production[g]])
        production = _production_versions(url, settings.prefix, games)
    if args.bundled:
        exact |= _publish_bundled(url, settings.prefix, [g for g in games if not production[g]])
        production = _production_versions(url, settings.prefix, games)
    env = {k: v for k, v in os.environ.items() if k != "GAMEAI_STORE_URL_FILE"}
    env |= {"GAMEAI_STORE_URL": url, "GAMEAI_STORE_PREFIX": settings.prefix}
    gameai = [sys.executable, "-m", "gameai"]
    budget = [*(["--publish-every", str(args.publish_every)] if args.publish_every else []),
              *(["--judge-games", str(args.judge_games)] if args.judge_games else []),
              *(["--judge-time", str(args.judge_time)] if args.judge_time else [])]
    trainers = [Child(f"{game} trainer",
                      [*gameai, "trainer", "--game", game, "--algorithm", algorithm_for(game),
                       "--metrics-port", str(port), "--promote", "auto", "--resume",
                       *([] if args.bundled else ["--no-bundled"]), *budget],
                      logs / ("trainer.log" if i == 0 else f"trainer-{game}.log"))
                for i, (game, port) in enumerate(zip(games, trainer_ports(args), strict=True))]
    # One server process unless GAMEAI_WORKERS says otherwise: on one machine that also
    # trains, a second worker doubles the start-up (~3 s -> ~10 s measured) for no gain.
    workers = [] if os.environ.get("GAMEAI_WORKERS") else ["--workers", "1"]
    server = Child("server", [*gameai, "serve", "--games", ",".join(games), "--http-port",
                              str(args.http_port), "--grpc-port", str(args.grpc_port),
                              *workers], logs / "server.log")
    children = [server, *trainers]
    print(f"store: {settings.where}")
    for game in games:
        if game in exact:
            print(f"  {game}: {exact[game]}")
        elif production[game]:
            print(f"  {game}: production is version {production[game]}, reused")
        else:
            print(f"  {game}: no model yet: its trainer learns one first "
                  f"({algorithm_for(game)})")
    sys.stdout.flush()  # a pipe (a log, a supervisor) sees each line when it is printed
    try:
        for child in children:
            child.start(env)
        http = f"http://127.0.0.1:{args.http_port}"
        _wait(lambda: http_status(f"{http}/healthz") == 200, children, stop,
              "the server to start")
        _wait_first_model(f"{http}/readyz", games, trainer_ports(args), children, stop)
        served = ready_games(f"{http}/readyz")
        print(urls(args, logs, training=[g for g in games if g not in served]), flush=True)
        while True:
            _check(children, stop)
            if len(served) < len(games):
                now = ready_games(f"{http}/readyz")
                for game in [g for g in games if g in now and g not in served]:
                    print(f"{game} is served now: a model passed the gates", flush=True)
                served |= now
            stop.wait(0.5)
    except KeyboardInterrupt:
        print("stopping the server and the trainers, then the store ...", flush=True)
        return 0
    finally:
        for child in children:
            child.stop()


def urls(args: argparse.Namespace, logs: Path, *, training: list[str]) -> str:
    http = f"http://127.0.0.1:{args.http_port}"
    trainers = [f"http://127.0.0.1:{port}/metrics" + (f" ({game})" if len(args.games) > 1
                                                       else "")
                for game, port in zip(args.games, trainer_ports(args), strict=True)]
    lines = [
        "",
        "gameai is up:",
        f"  web board        {http}/",
        f"  REST API docs    {http}/docs   (OpenAPI: {http}/openapi.json)",
        f"  gRPC             127.0.0.1:{args.grpc_port}   (gameai.v1.MoveService, reflection on)",
        f"  server metrics   {http}/metrics",
        *(f"  {'trainer metrics' if i == 0 else '':<15}  {t}" for i, t in enumerate(trainers)),
        f"  logs             {logs}",
    ]
    if training:
        lines.append(f"  still training   {', '.join(training)} (served as soon as a model "
                     "passes the gates)")
    lines += ["Ctrl-C stops everything; the models stay in the store for the next run.", ""]
    return "\n".join(lines)


def _production_versions(url: str, prefix: str, games: tuple[str, ...]
                         ) -> dict[str, int | None]:
    from gameai.store import ModelStore

    store = ModelStore.from_url(url, prefix=prefix)
    try:
        return {game: store.resolve(game=game, ref="production") for game in games}
    finally:
        store.close()


def _publish_exact(url: str, prefix: str, games: list[str]) -> dict[str, str]:
    """Publish and promote (unpinned) the exact model of each of ``games`` that fits the
    memory limit; what ``up`` says about each."""
    from gameai.games import TooLarge, get_game
    from gameai.store import ModelStore
    from gameai.trainer.evaluation.exact import exact_model

    said = {}
    store = ModelStore.from_url(url, prefix=prefix)
    try:
        for game in games:
            print(f"  {game}: building the exact solver's model ...", flush=True)
            try:
                model = exact_model(get_game(game))
            except TooLarge as e:
                said[game] = f"no exact model ({e}); its trainer learns one"
                continue
            record = store.publish(model.to_bytes(), by="gameai up --exact")
            store.set_alias(game=game, alias="production", version=record.version,
                            by="gameai up --exact")
            said[game] = (f"serving the exact solver's model, version {record.version} "
                          "(algorithm solver, not learned)")
    finally:
        store.close()
    return said


def _publish_bundled(url: str, prefix: str, games: list[str]) -> dict[str, str]:
    """Publish and promote (unpinned) the bundled starting model of each of ``games`` that
    has one (:mod:`gameai.models.bundled`): served at once, and its trainer goes on from
    it; what ``up`` says about each."""
    from gameai.models import CorruptModel
    from gameai.models.bundled import publish_bundled
    from gameai.store import ModelStore

    said = {}
    with ModelStore.from_url(url, prefix=prefix) as store:
        for game in games:
            try:
                done = publish_bundled(store, game, by="gameai up (bundled model)")
            except CorruptModel as e:  # never served; the trainer learns from nothing
                said[game] = f"the bundled model is not used ({e}); its trainer learns one"
                continue
            if done is not None:
                version, entry = done
                said[game] = (f"serving the bundled model as version {version} "
                              f"({entry.judged}); its trainer goes on from it")
    return said


def _check(children: list[Child], stop: StopSignal) -> None:
    """Raise if a child died (with its log) or the user asked to stop."""
    for child in children:
        if problem := child.failed():
            raise CommandError(problem)
    if stop.requested:
        raise KeyboardInterrupt


def _wait(done: Callable[[], bool], children: list[Child], stop: StopSignal, what: str,
          progress: Callable[[], None] | None = None) -> None:
    """Poll ``done`` until it holds, watching the children all the while."""
    deadline = time.monotonic() + READY_SECONDS
    while not done():
        _check(children, stop)
        if time.monotonic() > deadline:
            raise CommandError(f"gave up waiting for {what} after {READY_SECONDS:.0f} s")
        if progress:
            progress()
        stop.wait(0.2)


def _wait_first_model(readyz: str, games: tuple[str, ...], ports: list[int],
                      children: list[Child], stop: StopSignal) -> None:
    """Wait for the server to hold a production model of the first game, showing the
    trainers' games."""
    from tqdm import tqdm

    first = games[0]
    if first in ready_games(readyz):
        return
    training = f"training {first} until a model passes the gates"
    with tqdm(desc=training, unit=" games", unit_scale=True, leave=False,
              file=sys.stderr) as bar:
        def progress() -> None:
            games_played = scrape_sum(f"http://127.0.0.1:{ports[0]}/metrics",
                                      "gameai_trainer_games_total")
            if games_played is not None and games_played > bar.n:
                bar.update(games_played - bar.n)
            activity = trainer_activity(f"http://127.0.0.1:{ports[0]}/healthz")
            desc = training if activity in (None, "self-play") else f"{first}: {activity}"
            if desc != bar.desc:
                bar.set_description_str(desc)  # the games stop while a candidate is judged

        _wait(lambda: first in ready_games(readyz), children, stop,
              f"the first {first} model", progress)


def trainer_activity(healthz: str) -> str | None:
    """What the trainer says it is doing (its ``/healthz``), or None if it does not answer."""
    try:
        with urllib.request.urlopen(healthz, timeout=2.0) as response:
            activity = json.loads(response.read()).get("activity")
    except (urllib.error.URLError, OSError, ValueError, AttributeError):
        return None
    return activity if isinstance(activity, str) else None


def ready_games(readyz: str) -> set[str]:
    """The games the server holds a production model of (its ``/readyz`` body)."""
    try:
        with urllib.request.urlopen(readyz, timeout=2.0) as response:
            body = response.read()
    except urllib.error.HTTPError as e:
        body = e.read()
    except (urllib.error.URLError, OSError):
        return set()
    try:
        games = json.loads(body)["games"]
        return {name for name, state in games.items() if state.get("ready")}
    except (ValueError, KeyError, TypeError, AttributeError):
        return set()
