"""``gameai bench exact``: what exact play at level best costs in best-move latency.

Starts an embedded Redis holding a Connect Four n-tuple network (the default shape, trained
for ``--train-games`` self-play games) as production, and one ``gameai serve`` process per
solver budget (``--budgets``, milliseconds: ``0`` is the network alone), all on the same
store. In each round (``--rounds``) every server is driven in turn by ``--clients``
concurrent REST clients (keep-alive HTTP/1.1, in a separate process) for ``--seconds``,
with the same requests: positions of seeded random games, the ply drawn uniformly from 0
to 40, a new draw each round. Reported per budget: p50/p99 latency, requests per second,
and the share of answers that said ``exact: true``, overall and by ply.

The servers share the store, so a budget's proofs of one round are in the shared table at
the next (as live traffic grows the book); the budget-0 server never reads it.

With ``--games N`` each server also plays N games as the first player against the perfect
player (the judge's, its proved answers kept in the machine's book, ties among its optimal
replies broken at random, seeded): every move of the served ``best`` level is a REST
best-move request, and the report gives, per budget, the games won, drawn and lost, the
share of the server's moves that said ``exact: true`` overall, by ply and from ply 16 on,
and the ply from which every one of a game's moves was exact. ``--model FILE`` (or
``bundled``: Connect Four's bundled starting model) serves that model instead of a freshly
trained one; ``--seconds 0`` skips the latency rounds. With ``--book-games N`` the games
are preceded by a book (:mod:`gameai.trainer.book_builder`, local processes on every core)
of the positions N games of the model as X against the perfect player reach at the plies
``--book-plies`` (its tie-breaks seeded by ``--seed`` + 1, so the measured games' lines are
not the book's by construction); with ``--book-every-reply`` the book also follows every
optimal reply of the perfect player (:func:`gameai.trainer.book_builder.reply_tree`), so it
holds every line the measured games can take to its last ply, whatever their tie-breaks;
the report says what the book took, how much of that tree it holds, and the shared
table's size before the games and after them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from gameai.bench.server import percentile, review_model, tree_cpu_seconds

GAME = "connect-four"
MAX_PLY = 40
PLY_BANDS = ((0, 9), (10, 19), (20, 29), (30, 40))


def main(args: argparse.Namespace) -> int:
    from gameai.store import ModelStore, RedisServer

    budgets = budget_list(args.budgets)
    report: dict[str, Any] = {"load_average_before": os.getloadavg(), "cpus": os.cpu_count(),
                              "clients": args.clients, "seconds": args.seconds,
                              "rounds": args.rounds, "workers": args.workers,
                              "train_games": args.train_games}
    runs: dict[float, list[dict[str, Any]]] = {b: [] for b in budgets}
    with tempfile.TemporaryDirectory() as tmp, \
            RedisServer(tmp, tcp=True, persist=False) as redis, \
            contextlib.ExitStack() as servers, \
            multiprocessing.get_context("spawn").Pool(1) as clients:
        store = ModelStore.from_url(redis.url)
        model_bytes = _model_bytes(args)
        version = store.publish(model_bytes, by="bench").version
        store.set_alias(game=GAME, alias="production", version=version, by="bench")
        background = getattr(args, "background_ms", 0) or 0
        ports = {b: servers.enter_context(_serving(redis.url, b, args.workers, background))
                 for b in budgets}
        for round_number in range(args.rounds if args.seconds > 0 else 0):
            count = args.positions or max(6000, round(3000 * args.seconds))
            positions = draw_positions(random.Random(round_number), count)
            # every other round in the reverse order: a machine that slows down or speeds
            # up during the run weighs on every budget alike
            for budget in budgets if round_number % 2 == 0 else budgets[::-1]:
                http_port, pid = ports[budget]
                cpu = tree_cpu_seconds(pid)
                run = clients.apply(_drive, (http_port, positions, args.clients, args.seconds))
                run["cpu"] = tree_cpu_seconds(pid) - cpu
                runs[budget].append(run)
        if getattr(args, "revisit", 0):
            report["revisit"] = {str(b): revisit(ports[b][0], args.revisit, args.revisit_wait,
                                                 seed=1000 + i)
                                 for i, b in enumerate(budgets)}
        if getattr(args, "games", 0) and (getattr(args, "book_games", 0)
                                          or getattr(args, "book_every_reply", False)):
            report["book"] = build_book(redis.url, model_bytes, args)
        book_size = store.proved().size(game=GAME)
        games = {b: play_games(ports[b][0], args.games, args.time_limit, seed=args.seed)
                 for b in budgets} if getattr(args, "games", 0) else {}
        report["table_size"] = store.proved().size(game=GAME)
        report["table_size_before_games"] = book_size
        store.close()
    report["load_average_after"] = os.getloadavg()
    report["budgets"] = {str(b): summarize(r) for b, r in runs.items() if r}
    if games:
        report["games"] = {str(b): g for b, g in games.items()}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)
    return 0


def _model_bytes(args: argparse.Namespace) -> bytes:
    """The served model: ``--model`` (a file, or ``bundled``), else a network trained for
    ``--train-games`` games."""
    model = getattr(args, "model", None)
    if model == "bundled":
        from gameai.models.bundled import bundled

        entry = bundled(GAME)
        assert entry is not None, "Connect Four bundles a model"
        return entry.read()
    if model:
        with open(model, "rb") as f:
            return f.read()
    return review_model(args.train_games).to_bytes()


def budget_list(text: str) -> list[float]:
    """``--budgets``: milliseconds, comma-separated, fractions allowed (``0,0.5,1``); a
    whole number stays one (its report key ``1``, not ``1.0``).

    Raises:
        ValueError: not numbers from 0 to 1000.
    """
    out: list[float] = []
    for part in filter(None, (p.strip() for p in str(text).split(","))):
        try:
            ms = float(part)
        except ValueError:
            raise ValueError(f"--budgets: {part!r} is not a number of milliseconds") from None
        if not 0 <= ms <= 1000:
            raise ValueError(f"--budgets: {part} must be from 0 to 1000 ms")
        out.append(int(ms) if ms.is_integer() else ms)
    if not out:
        raise ValueError("--budgets: give at least one budget")
    return out


def book_plies(text: str) -> tuple[int, int]:
    """``--book-plies`` "FROM-TO" as ``(from, to)``."""
    low, sep, high = text.partition("-")
    try:
        first, last = int(low), int(high)
    except ValueError:
        first = last = -1
    if not sep or not 0 <= first <= last:
        raise ValueError(f"--book-plies must be FROM-TO with 0 <= FROM <= TO, got {text!r}")
    return first, last


def build_book(url: str, model_bytes: bytes, args: argparse.Namespace) -> dict[str, Any]:
    """The book of ``--book-games`` games of the model as X against the perfect player
    (seed ``--seed`` + 1) at ``--book-plies``, and with ``--book-every-reply`` of every line
    of its optimal replies, in the store at ``url``: what it took."""
    from gameai.games import get_game
    from gameai.models import load_model
    from gameai.trainer import book_builder
    from gameai.trainer.evaluation.book import default_book
    from gameai.trainer.evaluation.calibrate import perfect_player

    first, last = book_plies(args.book_plies)
    game = get_game(GAME)
    model = load_model(model_bytes)
    workers = len(os.sched_getaffinity(0))
    started = time.perf_counter()
    with book_builder.local_pool(workers) as submit:
        report = book_builder.build_book(
            model, store_url=url, prefix="gameai", plies=last, from_ply=first,
            games=args.book_games, submit=submit, workers=workers, seed=args.seed + 1,
            max_entries=10_000_000, time_limit=None, sides="X",
            opponent=perfect_player(game, time_limit=args.time_limit, book=default_book(game)),
            every_reply=getattr(args, "book_every_reply", False),
            notes=lambda text: print(text, file=sys.stderr))
    coverage = report.coverage.get("X")
    return {"games": args.book_games, "plies": [first, last],
            "every_reply": coverage.to_json() if coverage else None,
            "seconds": time.perf_counter() - started,
            "rounds": max((p.round for p in report.by_ply), default=0),
            "positions": sum(p.positions for p in report.by_ply if p.round == 1),
            "proved": sum(p.proved for p in report.by_ply),
            "timed_out": sum(p.timed_out for p in report.by_ply),
            "solver_seconds": sum(p.solve_seconds for p in report.by_ply)}


def play_games(port: int, games: int, time_limit: float, *, seed: int = 0
               ) -> dict[str, Any]:
    """``games`` games of the server's best level (REST best-move, as X) against the
    perfect player: results and how many of the server's moves were proved exact."""
    from http.client import HTTPConnection

    from tqdm import tqdm

    from gameai.games import get_game
    from gameai.trainer.evaluation.book import default_book
    from gameai.trainer.evaluation.calibrate import perfect_player

    game = get_game(GAME)
    perfect = perfect_player(game, time_limit=time_limit, book=default_book(game))
    rng = random.Random(seed)
    results = {"win": 0, "draw": 0, "loss": 0}
    by_ply: dict[int, list[bool]] = {}
    all_exact_from: list[int] = []
    client = HTTPConnection("127.0.0.1", port, timeout=60)  # the standard library's: the
    path = f"/v1/games/{GAME}/best-move"  # image has no HTTP client package
    with contextlib.closing(client), \
            tqdm(total=games, desc=f"games against perfect play, port {port}",
                 unit=" games", file=sys.stderr, leave=False) as bar:
        for _ in range(games):
            state = game.initial()
            moves: list[str] = []
            flags: list[tuple[int, bool]] = []
            while not state.is_over():
                if state.to_move == "X":
                    client.request("POST", path, json.dumps({"moves": "".join(moves)}),
                                   {"Content-Type": "application/json"})
                    answer = client.getresponse()
                    body = json.loads(answer.read())
                    if answer.status != 200:
                        raise RuntimeError(f"best-move answered {answer.status}: {body}")
                    column = int(body["move"]["index"]) % game.cols
                    action = next(a for a in state.legal_actions() if a % game.cols == column)
                    flags.append((len(moves), bool(body.get("exact"))))
                else:
                    action = perfect(state, rng)
                state = state.play(action)
                moves.append(str(action % game.cols + 1))
            winner = state.winner()
            results["win" if winner == "X" else "loss" if winner == "O" else "draw"] += 1
            for ply, exact in flags:
                by_ply.setdefault(ply, []).append(exact)
            inexact = [ply for ply, exact in flags if not exact]
            all_exact_from.append(inexact[-1] + 2 if inexact else 0)
            bar.update(1)
    late = [e for ply, es in by_ply.items() if ply >= 16 for e in es]
    moves_all = [e for es in by_ply.values() for e in es]
    return {**results, "games": games,
            "exact_share": sum(moves_all) / max(1, len(moves_all)),
            "exact_share_from_ply_16": sum(late) / max(1, len(late)),
            "exact_share_by_ply": {str(p): round(sum(es) / len(es), 3)
                                   for p, es in sorted(by_ply.items())},
            "all_exact_from_ply": {"median": sorted(all_exact_from)[len(all_exact_from) // 2],
                                   "max": max(all_exact_from)},
            "opponent_unproved_moves": perfect.guessed_moves}


def revisit(port: int, count: int, wait: float, *, seed: int) -> dict[str, Any]:
    """The middle game met twice: ``count`` positions of plies 10-19 (random games, drawn
    by ``seed``) asked one at a time, then again after ``wait`` seconds of an idle server,
    in which its background prover (``--background-ms``) proves what the budget did not:
    how many answers were exact each time."""
    from gameai.bench.server import http

    rng = random.Random(seed)
    positions: list[str] = []
    while len(positions) < count:
        positions += [m for m, ply in draw_positions(rng, count) if 10 <= ply <= 19]
    positions = positions[:count]

    def exact_answers() -> int:
        exact = 0
        for moves in positions:
            status, body = http("POST", f"http://127.0.0.1:{port}/v1/games/{GAME}/best-move",
                                {"moves": moves})
            exact += status == 200 and bool(json.loads(body).get("exact"))
        return exact

    first = exact_answers()
    time.sleep(wait)
    return {"positions": count, "wait_seconds": wait, "exact_first": first,
            "exact_again": exact_answers()}


def draw_positions(rng: random.Random, count: int) -> list[tuple[str, int]]:
    """``count`` live Connect Four positions as ``(moves, ply)``: seeded random games cut
    at a ply drawn uniformly from 0 to :data:`MAX_PLY` (a game that ends first is drawn
    again)."""
    from gameai.games import get_game

    game = get_game(GAME)
    out: list[tuple[str, int]] = []
    while len(out) < count:
        ply = rng.randint(0, MAX_PLY)
        state, moves = game.initial(), []
        for _ in range(ply):
            action = rng.choice(state.legal_actions())
            state = state.play(action)
            moves.append(str(action % game.cols + 1))
            if state.is_over():
                break
        if not state.is_over():
            out.append(("".join(moves), ply))
    return out


@contextlib.contextmanager
def _serving(url: str, budget: float, workers: int, background: int = 0
             ) -> Iterator[tuple[int, int]]:
    """A ``gameai serve`` of Connect Four with the solver budget ``budget`` ms and the
    background prover's ``background`` ms a position (0: none): its HTTP port and process
    id."""
    from gameai.bench.server import serving

    env = {"GAMEAI_EXACT_MS": f"{GAME}={budget}",
           "GAMEAI_EXACT_BACKGROUND_MS": f"{GAME}={background}"}
    with serving(url, workers, games=(GAME,), env=env) as (http_port, _, pid):
        yield http_port, pid


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    latencies = sorted(x for r in runs for x in r["latencies"])
    answers = [a for r in runs for a in r["answers"]]
    bands = {}
    for low, high in PLY_BANDS:
        inside = [exact for ply, exact in answers if low <= ply <= high]
        bands[f"{low}-{high}"] = sum(inside) / len(inside) if inside else None
    return {"requests": len(latencies), "errors": sum(r["errors"] for r in runs),
            "failures": [f for r in runs for f in r["failures"]][:5],
            "rate": sum(r["count"] for r in runs) / sum(r["seconds"] for r in runs),
            "p50_ms": percentile(latencies, 50) * 1e3,
            "p99_ms": percentile(latencies, 99) * 1e3,
            # the server's CPU time (its workers and their threads) per answered request:
            # what the budget costs, steadier than latency on a shared machine
            "server_cpu_ms": sum(r["cpu"] for r in runs) / max(1, len(latencies)) * 1e3,
            "exact_share": sum(e for _, e in answers) / max(1, len(answers)),
            "exact_share_by_ply": bands}


def print_report(report: dict[str, Any]) -> None:
    print(f"Connect Four best-move over REST, {report['clients']} clients, "
          f"{report['workers']} worker(s), {report['rounds']} round(s) of "
          f"{report['seconds']:g} s per budget")
    for budget, s in report["budgets"].items():
        bands = ", ".join(f"{band} {share:.0%}" if share is not None else f"{band} -"
                          for band, share in s["exact_share_by_ply"].items())
        print(f"  budget {budget:>3} ms: p50 {s['p50_ms']:.2f} ms, p99 {s['p99_ms']:.2f} ms, "
              f"{s['rate']:,.0f}/s, server CPU {s['server_cpu_ms']:.2f} ms a request, "
              f"{s['errors']} errors; exact {s['exact_share']:.0%} "
              f"(by ply: {bands})")
    for budget, g in report.get("games", {}).items():
        print(f"  budget {budget:>3} ms, {g['games']} games as X vs perfect play: "
              f"{g['win']}/{g['draw']}/{g['loss']}; moves exact {g['exact_share']:.0%}, "
              f"from ply 16 {g['exact_share_from_ply_16']:.0%}; every move exact from ply "
              f"{g['all_exact_from_ply']['median']} (median), {g['all_exact_from_ply']['max']}"
              f" (worst)")
    for budget, v in report.get("revisit", {}).items():
        print(f"  budget {budget:>3} ms, {v['positions']} middle-game positions (plies 10-19) "
              f"asked twice, {v['wait_seconds']:g} s idle between: exact {v['exact_first']} "
              f"the first time, {v['exact_again']} the second")
    if "book" in report:
        b = report["book"]
        print(f"  book before the games: {b['games']} games as X vs perfect play, plies "
              f"{b['plies'][0]}-{b['plies'][1]}, {b['proved']} positions proved in "
              f"{b['rounds']} round(s), {b['seconds']:.0f} s ({b['solver_seconds']:.0f} s of "
              f"solver time)")
        if b.get("every_reply"):
            c = b["every_reply"]
            print(f"  every reply of the perfect player followed: {c['model_held']} of "
                  f"{c['model_positions']} of the model's positions and {c['opponent_held']} "
                  f"of {c['opponent_positions']} of the opponent's proved"
                  + ("" if c["complete"] else
                     f" (incomplete from ply {c['first_missing_ply']})"))
    print(f"  shared table: {report['table_size_before_games']:,} positions before the "
          f"games, {report['table_size']:,} after; load average before/after: "
          f"{report['load_average_before'][0]:.2f}/{report['load_average_after'][0]:.2f} "
          f"on {report['cpus']} cpus")


def _drive(port: int, positions: list[tuple[str, int]], clients: int, seconds: float
           ) -> dict[str, Any]:
    return asyncio.run(_clients(port, positions, clients, seconds))


async def _clients(port: int, positions: list[tuple[str, int]], clients: int,
                   seconds: float) -> dict[str, Any]:
    """``clients`` keep-alive connections sending the positions in turn (each once at
    most); latencies after a 0.3 s warm-up."""
    latencies: list[float] = []
    answers: list[tuple[int, bool]] = []
    errors = [0]
    failures: list[str] = []
    warm_until = time.perf_counter() + 0.3
    end = warm_until + seconds

    async def one_client(offset: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for i in range(offset, len(positions), clients):
            started = time.perf_counter()
            if started >= end:
                break
            moves, ply = positions[i]
            body = json.dumps({"moves": moves}).encode()
            writer.write(b"POST /v1/games/" + GAME.encode() + b"/best-move HTTP/1.1\r\n"
                         b"Host: bench\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(body)).encode() + b"\r\n\r\n" + body)
            try:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(int(line[15:]) for line in head.split(b"\r\n")
                              if line[:15].lower() == b"content-length:")
                answer = await reader.readexactly(length)
            except (ConnectionError, asyncio.IncompleteReadError) as e:
                errors[0] += 1
                failures.append(f"{type(e).__name__}: {e}")
                writer.close()
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                continue
            if started < warm_until:
                continue
            latencies.append(time.perf_counter() - started)
            if head.startswith(b"HTTP/1.1 200"):
                answers.append((ply, bool(json.loads(answer).get("exact"))))
            else:
                errors[0] += 1
        writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(one_client(i) for i in range(clients)))
    spent = min(time.perf_counter(), end) - max(started, warm_until)
    return {"count": len(latencies), "latencies": latencies, "answers": answers,
            "errors": errors[0], "failures": failures[:5], "seconds": max(spent, 1e-9)}
