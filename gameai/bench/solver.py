"""``gameai bench solver`` for games solved by search: benchmark positions and the empty
board (:mod:`gameai.bench.positions`, :mod:`gameai.games.mnk.search`)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from gameai.bench import CannotBench
from gameai.games.mnk.game import MnkGame

# The classes the targets name, and the time limit each position is given
# (None: until solved); a beginning position is stopped at 10 s, the target's bound.
CLASSES = (("end", "easy", None), ("middle", "easy", None), ("middle", "medium", None),
           ("beginning", "hard", 10.0))
EMPTY_TT_BITS = 26  # 64M slots, 1.5 GiB: the empty board's search outgrows the default


def run_search_bench(args: argparse.Namespace, game: MnkGame) -> int:
    if args.empty:
        return _empty_board(args, game)
    if not game.gravity:
        raise CannotBench(f"{game.name} has no benchmark positions (they are drawn for "
                           "gravity games); time its empty board with --empty")
    from tqdm import tqdm

    from gameai.bench.positions import cached_set, time_positions
    from gameai.games.mnk.search import Searcher
    from gameai.host import cache_dir

    load_before = os.getloadavg()
    labeller = Searcher(game)
    rows = []
    for stage, difficulty, limit in CLASSES:
        count = args.beginning_count if stage == "beginning" else args.count
        with tqdm(total=count, desc=f"labelling {stage} {difficulty}", unit=" positions",
                  file=sys.stderr, disable=args.json, leave=False) as bar:

            def labelled(n: int, bar: Any = bar) -> None:
                bar.update(n - bar.n)

            found = cached_set(game, stage=stage, difficulty=difficulty, count=count,
                               seed=args.seed, searcher=labeller,
                               cache_dir=cache_dir(), progress=labelled)
        with tqdm(total=count, desc=f"solving {stage} {difficulty}", unit=" positions",
                  file=sys.stderr, disable=args.json, leave=False) as bar:
            timing = time_positions(game, found, stage=stage, difficulty=difficulty,
                                    time_limit=limit, step=bar.update)
        rows.append(timing.to_json())
    figures: dict[str, Any] = {
        "game": game.name, "seed": args.seed, "classes": rows,
        "load_average": [round(x, 2) for x in (*load_before, *os.getloadavg())],
        "wrong": sum(r["wrong"] for r in rows),
    }
    if args.json:
        print(json.dumps(figures))
    else:
        _print_classes(figures)
    return 1 if figures["wrong"] else 0


def _print_classes(figures: dict[str, Any]) -> None:
    load = figures["load_average"]
    print(f"{figures['game']}: benchmark positions (seed {figures['seed']}), each solved "
          f"from an empty table; load average {load[0]} before, {load[3]} after")
    print(f"  {'class':<18} {'positions':>9} {'pos/s':>9} {'mean ms':>10} {'max ms':>10} "
          f"{'cpu ms':>9} {'nodes/s':>11} {'<=2 s':>6} {'<=10 s':>6}")
    for r in figures["classes"]:
        print(f"  {r['stage'] + ' ' + r['difficulty']:<18} {r['positions']:>9} "
              f"{r['positions_per_second']:>9,.1f} {r['mean_ms']:>10,.3f} "
              f"{r['max_ms']:>10,.1f} {r['mean_cpu_ms']:>9,.3f} "
              f"{r['nodes_per_second']:>11,} {r['within_2s']:>6.0%} {r['within_10s']:>6.0%}")
    if figures["wrong"]:
        print(f"  {figures['wrong']} solved scores differ from their labels", file=sys.stderr)


def _empty_board(args: argparse.Namespace, game: MnkGame) -> int:
    """The empty board's exact value, then the centre column's, with progress."""
    from gameai.games.mnk.scores import describe_score
    from gameai.games.mnk.search import Searcher

    load_before = os.getloadavg()
    searcher = Searcher(game, tt_bits=EMPTY_TT_BITS)
    board = game.initial()

    def show(nodes: int, seconds: float, lower: int, upper: int) -> None:
        if not args.json:
            print(f"\r  {seconds:8.0f} s  {nodes:>16,} nodes  {nodes / max(seconds, 1e-9):>12,.0f}"
                  f" nodes/s  score in [{lower}, {upper}]", end="", file=sys.stderr, flush=True)

    c0, t0 = time.process_time(), time.perf_counter()
    score = searcher.score(board, progress=show)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    nodes = searcher.nodes
    centre = board.play(game.cols // 2 + (game.rows - 1) * game.cols)
    t1 = time.perf_counter()
    v = -searcher.score(centre)  # the child's score, seen from X, one ply older below
    centre_score = v - 1 if v > 0 else v + 1 if v < 0 else 0
    outcome, distance = describe_score(game, score, board)
    figures: dict[str, Any] = {
        "game": game.name, "score": score, "outcome": outcome, "distance": distance,
        "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1), "nodes": nodes,
        "nodes_per_second": round(nodes / seconds), "tt_bits": EMPTY_TT_BITS,
        "centre_column_score": centre_score,
        "centre_seconds": round(time.perf_counter() - t1, 1),
        "load_average": [round(x, 2) for x in (*load_before, *os.getloadavg())],
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(file=sys.stderr)
    print(f"{game.name}, the empty board: {outcome} for X in {distance} plies (score {score})"
          f" in {seconds:,.1f} s ({cpu:,.1f} s of CPU), {nodes:,} nodes, "
          f"{figures['nodes_per_second']:,} nodes/s, a table of 2**{EMPTY_TT_BITS} slots; "
          f"load average {figures['load_average'][0]} before, {figures['load_average'][3]} "
          "after")
    print(f"the centre column scores {centre_score} (solved in {figures['centre_seconds']} s "
          "more)")
    return 0
