"""``gameai bench ntuple``: the figures of issue 14 for an n-tuple model.

* ``latency``: a real ``gameai serve`` process (two workers) over an embedded Redis holding
  the model; ``clients`` concurrent REST clients ask ``best-move`` at each search depth
  for distinct positions (so no answer comes from the server's cache), p50 and p99; first
  the same against the perfect tic-tac-toe table on the same server, the floor of the
  transport and the machine's load, measured in the same run;
* ``selfplay``: self-play games/s with 1 and 2 parallel actors;
* ``strength``: the exhaustive opponent's losing lines against the network alone and with
  the search at each depth (boards small enough for it: four-in-a-row and below).

Every figure is printed with the load average it was measured under.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from gameai.bench.server import percentile, serving
from gameai.games import Game, State, get_game
from gameai.games.mnk.board import Board
from gameai.games.mnk.positions import live_boards
from gameai.models import NtupleModel
from gameai.models.oracle import solver_model
from gameai.trainer.evaluation.evaluate import line_outcomes

if TYPE_CHECKING:
    from gameai.service.exact import ExactPlay
    from gameai.store import ProvedTable


def random_positions(game: Game, count: int, seed: int = 0) -> list[str]:
    """``count`` distinct unfinished positions of random play, as board texts."""
    rng = np.random.default_rng(seed)
    seen: dict[str, None] = {}
    tries = 0
    while len(seen) < count and tries < count * 20:
        tries += 1
        board = game.initial()
        assert isinstance(board, Board)
        for _ in range(int(rng.integers(0, game.cells - 1))):
            moves = board.legal_moves()
            after = board.play(moves[int(rng.integers(len(moves)))])
            if after.is_over():
                break
            board = after
        seen[str(board)] = None
    return list(seen)


def latency(model: NtupleModel, *, depths: list[int], clients: int = 8,
            seconds: float = 5.0, positions: int = 20_000, workers: int = 2,
            progress: Callable[[str], None] = print) -> dict[str, Any]:
    """p50/p99 of REST best-move at each depth, ``clients`` at once, on a real server."""
    from gameai.store import ModelStore, RedisServer

    game = model.game
    boards = random_positions(game, positions)
    report: dict[str, Any] = {"game": game.name, "clients": clients, "workers": workers,
                              "seconds": seconds, "positions": len(boards),
                              "load_average_before": os.getloadavg(), "depths": {}}
    saved = {k: os.environ.get(k) for k in ("GAMEAI_GAMES", "GAMEAI_MAX_DEPTH")}
    os.environ["GAMEAI_GAMES"] = ",".join(dict.fromkeys(("tictactoe", game.name)))
    os.environ["GAMEAI_MAX_DEPTH"] = str(max(depths))
    try:
        with tempfile.TemporaryDirectory() as tmp, \
                RedisServer(tmp, tcp=True, persist=False) as redis:
            store = ModelStore.from_url(redis.url)
            for published in (solver_model(get_game("tictactoe")), model):
                version = store.publish(published.to_bytes(), by="bench").version
                store.set_alias(game=published.game.name, alias="production",
                                version=version, by="bench")
            store.close()
            with serving(redis.url, workers, games=tuple(dict.fromkeys(
                    ("tictactoe", game.name)))) as (http_port, _grpc, _pid):
                # the floor: a table's best-move on the same server, in the same run
                run = asyncio.run(_drive(http_port, "tictactoe", live_boards(
                    get_game("tictactoe")), 0, None, clients, seconds))
                report["baseline_tictactoe_table"] = run
                progress(f"baseline (tictactoe table): p50 {run['p50_ms']:.2f} ms, p99 "
                         f"{run['p99_ms']:.2f} ms, {run['rate']:,.0f} requests/s")
                offset = 0
                for depth in depths:
                    run = asyncio.run(_drive(http_port, game.name, boards, offset, depth,
                                             clients, seconds))
                    offset += run["requests"] + clients
                    report["depths"][str(depth)] = run
                    progress(f"depth {depth}: p50 {run['p50_ms']:.2f} ms, p99 "
                             f"{run['p99_ms']:.2f} ms, {run['rate']:,.0f} requests/s, "
                             f"errors {run['errors']}")
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    report["load_average_after"] = os.getloadavg()
    return report


async def _drive(port: int, game: str, boards: list[str], offset: int, depth: int | None,
                 clients: int, seconds: float) -> dict[str, Any]:
    requests = []
    for board in boards:
        fields: dict[str, Any] = {"board": board}
        if depth is not None:
            fields["depth"] = depth
        body = json.dumps(fields).encode()
        requests.append(f"POST /v1/games/{game}/best-move HTTP/1.1\r\nHost: bench\r\n"
                        f"Content-Type: application/json\r\nContent-Length: {len(body)}"
                        "\r\n\r\n".encode() + body)
    latencies: list[float] = []
    errors = [0]
    warm_until = time.perf_counter() + 0.3
    end = warm_until + seconds

    async def client(i: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        n = offset + i
        while time.perf_counter() < end:
            started = time.perf_counter()
            writer.write(requests[n % len(requests)])
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(int(line[15:]) for line in head.split(b"\r\n")
                          if line[:15].lower() == b"content-length:")
            await reader.readexactly(length)
            n += clients
            if started >= warm_until:
                latencies.append(time.perf_counter() - started)
                errors[0] += 0 if head.startswith(b"HTTP/1.1 200") else 1
        writer.close()

    await asyncio.gather(*(client(i) for i in range(clients)))
    latencies.sort()
    return {"requests": len(latencies), "rate": len(latencies) / seconds,
            "errors": errors[0], "p50_ms": percentile(latencies, 50) * 1e3,
            "p99_ms": percentile(latencies, 99) * 1e3,
            "cached_possible": len(latencies) > len(boards)}


def strength(model: NtupleModel, *, depths: list[int],
             progress: Callable[[str], None] = print) -> dict[str, Any]:
    """Lines lost and drawn against the exhaustive opponent, as X and as O: the network
    alone and with the search at each depth."""
    report: dict[str, Any] = {"game": model.game.name, "load_average": os.getloadavg(),
                              "policies": {}}
    policies: list[tuple[str, NtupleModel]] = [("network", model)]
    policies += [(f"depth {d}", model.with_search(d)) for d in depths]
    for name, policy in policies:
        started = time.perf_counter()
        figures: dict[str, Any] = {}
        for side in ("X", "O"):
            lost, drawn = line_outcomes(policy, side=side)
            figures[f"losses_as_{side.lower()}"] = lost
            figures[f"draws_as_{side.lower()}"] = drawn
        figures["seconds"] = round(time.perf_counter() - started, 2)
        report["policies"][name] = figures
        progress(f"{name}: lines lost as X {figures['losses_as_x']:,}, as O "
                 f"{figures['losses_as_o']:,} ({figures['seconds']} s)")
    return report


def selfplay(game: Game, *, games: int, rounds: int = 3, actors: tuple[int, ...] = (1, 2),
             shared: bool = True, params: dict[str, Any] | None = None,
             progress: Callable[[str], None] = print) -> dict[str, Any]:
    """Self-play games/s, learning included, with each number of parallel actors (and, with
    ``shared``, the most actors on one set of weights, ``sync_games=0``); the setups
    alternate round by round so that the machine's load hits each alike, and the speed-up
    is the median of each round's ratio to the first. The process's CPU seconds are given
    beside the wall time: on a shared machine the wall speed-up says how much of a second
    core was free, CPU games/s what the code costs."""
    from gameai.trainer.training import make_learner

    setups = {f"{k} actor{'s' if k > 1 else ''}": {"actors": str(k)} for k in actors}
    if shared and max(actors) > 1:
        setups[f"{max(actors)} actors, shared"] = {"actors": str(max(actors)),
                                                   "sync_games": "0"}
    learners = {name: make_learner(game, "ntuple", seed=0, params={**(params or {}), **extra})
                for name, extra in setups.items()}
    for learner in learners.values():
        learner.play(0)  # compile
    rates: dict[str, list[float]] = {name: [] for name in setups}
    cpu_rates: dict[str, list[float]] = {name: [] for name in setups}
    load = [os.getloadavg()[0]]
    for _ in range(rounds):
        for name, learner in learners.items():
            cpu = time.process_time()
            stats = learner.play(games)
            rates[name].append(stats.games_per_second)
            cpu_rates[name].append(games / max(time.process_time() - cpu, 1e-9))
        load.append(os.getloadavg()[0])
        progress(", ".join(f"{name} {rates[name][-1]:,.0f} games/s ({cpu_rates[name][-1]:,.0f}"
                           " a CPU second)" for name in setups))
    first = next(iter(setups))
    speedup = {name: float(np.median([r / b for r, b in zip(rates[name], rates[first],
                                                               strict=True)]))
               for name in setups}
    report = {"game": game.name, "games_per_round": games, "rounds": rounds,
              "load_average": load, "games_per_second": rates,
              "games_per_cpu_second": cpu_rates, "speedup": speedup}
    progress(f"speed-up over {first} (wall, median of rounds): " + ", ".join(
        f"{name}: {v:.2f}x" for name, v in speedup.items()) +
        f"; load average {min(load):.1f}-{max(load):.1f}")
    return report


# the classes of Pons's Connect Four sets that the error rates are read on
POSITION_CLASSES = (("beginning", "hard"), ("middle", "medium"))
BEST_LEVEL = "level best"  # the served policy's name in position_errors' report


def position_errors(model: NtupleModel, *, depths: list[int | None], count: int = 100,
                    seed: int = 0, classes: tuple[tuple[str, str], ...] = POSITION_CLASSES,
                    exact_ms: float = 0, progress: Callable[[str], None] = print
                    ) -> dict[str, Any]:
    """The error rates of each policy (``None``: the network alone) on the solver-labelled
    benchmark positions of each class (:mod:`gameai.bench.positions`, gravity games, the
    same set for the same seed and count, cached), counted two ways and named:
    ``by_score``, a move whose exact score is below the best move's (a slower win, a
    faster loss, a draw for a win: what Pons's test sets and bitbully count), and
    ``by_outcome``, only a move whose exact outcome is worse (win > draw > loss). With
    ``exact_ms`` the served ``best`` level is judged too (:data:`BEST_LEVEL`): the solver
    first within that budget as a server tries it (:class:`gameai.service.exact.ExactPlay`
    with no shared table: a first encounter), the optimal move the network values most
    where it proves the position, else the network's move at its default depth. A class
    the board cannot have (or too rare to draw) is ``{"omitted": why}``."""
    from gameai.bench.positions import cached_set
    from gameai.games.mnk.game import as_mnk
    from gameai.games.mnk.search import Searcher
    from gameai.host import cache_dir

    game = as_mnk(model.game)
    searcher = Searcher(game)
    report: dict[str, Any] = {"game": game.name, "count": count, "seed": seed,
                              "exact_ms": exact_ms, "load_average_before": os.getloadavg(),
                              "classes": {}}
    def searched(depth: int | None) -> Callable[[Board], int]:
        if depth is None:
            return lambda b: model.evaluate(b).best.col
        return lambda b: model.search(b, depth, best_only=True).best.col

    policies = [("network" if d is None else f"depth {d}", searched(d)) for d in depths]
    exact = None
    if exact_ms > 0:
        best, exact = best_level_player(model, exact_ms)
        policies.append((BEST_LEVEL, lambda b: best(b, None) % game.cols))
    try:
        for stage, difficulty in classes:
            started = time.perf_counter()
            try:
                found = cached_set(game, stage=stage, difficulty=difficulty, count=count,
                                   seed=seed, searcher=searcher, cache_dir=cache_dir())
            except ValueError as why:  # a class this board cannot have, or too rare to draw
                report["classes"][f"{stage} {difficulty}"] = {"omitted": str(why)}
                progress(f"{stage} {difficulty}: omitted: {why}")
                continue
            figures: dict[str, Any] = {
                "positions": len(found),
                "labelling_seconds": round(time.perf_counter() - started, 1)}
            for name, policy in policies:
                figures[name] = _errors(found, game, policy)
                by_score, by_outcome = figures[name]["by_score"], figures[name]["by_outcome"]
                progress(f"{stage} {difficulty} ({len(found)} positions): {name} "
                         f"{100 * by_score['rate']:.1f}% errors by exact score (95% "
                         f"{100 * by_score['low']:.1f}-{100 * by_score['high']:.1f}%), "
                         f"{100 * by_outcome['rate']:.1f}% by outcome (95% "
                         f"{100 * by_outcome['low']:.1f}-{100 * by_outcome['high']:.1f}%)")
            report["classes"][f"{stage} {difficulty}"] = figures
    finally:
        if exact is not None:
            exact.close()
    report["load_average_after"] = os.getloadavg()
    return report


def best_level_player(model: NtupleModel, exact_ms: float, table: ProvedTable | None = None
                      ) -> tuple[Callable[[State, Any], int], ExactPlay]:
    """The served level ``best`` as a player of ``model``'s game: the solver first, within
    ``exact_ms`` a move, as a server tries it (:class:`gameai.service.exact.ExactPlay`:
    its stages that stop trying where proofs keep failing, the proofs it made kept for the
    positions met again; the shared ``table`` of proved positions read first and written
    as a server does, where one is given), then the optimal move the network values most
    where that proves the position, else the network's move at its default depth
    (:func:`gameai.trainer.book_builder.model_move`). Its solver has a table of its own, as
    large as a server's, so a judge's opponent's proofs are not shared with it. Returns the
    player (state, rng) -> action and the :class:`ExactPlay`, to close after the games."""
    from gameai.games.mnk.search import DEFAULT_TT_BITS
    from gameai.service.exact import ExactPlay
    from gameai.service.metrics import Metrics
    from gameai.trainer.book_builder import model_move

    game = model.game
    exact = ExactPlay(table, Metrics(), {game.name: exact_ms}, own_table_bits=DEFAULT_TT_BITS)

    def play(state: State, _rng: Any) -> int:
        return model_move(model, state, exact.prove(state, exact_ms / 1000))
    return play, exact


def _errors(found: list[Any], game: Any, policy: Callable[[Board], int]) -> dict[str, Any]:
    """How many of ``found``'s positions ``policy`` (board -> column from 0) errs on, by
    exact score and by outcome, each with its Wilson interval."""
    from gameai.trainer.evaluation.calibrate import wilson

    counts = {"by_score": 0, "by_outcome": 0}
    for position in found:
        column = policy(game.parse(position.board)) + 1
        scores = position.move_scores
        sign = {c: (s > 0) - (s < 0) for c, s in scores.items()}
        counts["by_score"] += scores[column] < max(scores.values())
        counts["by_outcome"] += sign[column] < max(sign.values())
    out: dict[str, Any] = {}
    for way, errors in counts.items():
        low, high = wilson(errors, len(found))
        out[way] = {"errors": errors, "rate": errors / len(found), "low": low, "high": high}
    return out
