"""``gameai analyze`` and ``gameai solve``: the game core from the command line."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from gameai.cli.common import CommandError, memory_option, positive


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "analyze",
        help="statistics of every game (seed 000's tables)",
        description="Count every position and game of GAME and tabulate results by opening "
        "cell, over all games and over games without 'stupid' moves (seed 000).",
    )
    p.add_argument("game", help="tictactoe, four-in-a-row, mnk-RxC-K, connect-RxC-K, "
                   "three-mens-morris, nine-holes, ...")
    p.add_argument("--json", action="store_true", help="print JSON instead of grids")
    memory_option(p)
    p.set_defaults(func=run_analyze)

    p = sub.add_parser(
        "solve",
        help="exact value and optimal moves of a position",
        description="Solve a position exactly: its value, every legal move's outcome and "
        "distance to the end (plies), and the time taken.",
    )
    p.add_argument("game")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--board", help="pattern like 'X--|-O-|---' (default: the empty board)")
    where.add_argument("--moves", help="the moves from the start: for gravity games the "
                       "columns from 1 ('4453'); for morris games '5 1 9 3 7 2 9-6'")
    p.add_argument("--to-move", default="", choices=("", "X", "O"),
                   help="the side to move, where the counts do not tell (morris, once all "
                   "six pieces are down)")
    p.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                   help="stop a search after this long and print what it proved "
                   "(default 60; 0: no limit)")
    p.add_argument("--json", action="store_true")
    memory_option(p)
    p.set_defaults(func=run_solve)


def run_analyze(args: argparse.Namespace) -> int:
    from gameai.games import get_game

    game = get_game(args.game)
    started = time.perf_counter()
    report = game.analyze()
    seconds = time.perf_counter() - started
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{game.describe()}: analysed in {seconds:.2f} s")
    if "openings" in report:  # a game solved by retrograde analysis: no game counts
        _print_retrograde(report, game.cols)
        return 0
    print(f"positions: {report['positions']:,} ({report['canonical_positions']:,} up to symmetry)")
    g = report["games"]
    print(f"games: {g['total']:,} (X wins {g['x_wins']:,}, O wins {g['o_wins']:,}, "
          f"draws {g['draws']:,}); without stupid moves: {report['non_stupid_games']:,}")
    print(f"value: {_value_text(report['value'])}")
    for group, title in (("all", "all games"), ("non_stupid", "games without stupid moves")):
        for key, what in (("x_wins", "X wins"), ("o_wins", "O wins"), ("draws", "draws")):
            print(f"\n{what} by X's opening cell, {title}:")
            print(_grid(report["by_opening"][group][key], game.cols))
    print("\nreward 100*x_wins + 10*draws - o_wins by opening cell, all games:")
    print(_grid(report["reward_table"], game.cols))
    return 0


def _print_retrograde(report: dict[str, Any], cols: int) -> None:
    print(f"positions: {report['positions']:,} reachable ({report['canonical_positions']:,} "
          f"up to symmetry; {report['live_positions']:,} of those live)")
    print(f"live positions for the side to move: {report['won_for_mover']:,} won, "
          f"{report['drawn']:,} drawn, {report['lost_for_mover']:,} lost; longest forced "
          f"win {report['longest_forced_win']} plies")
    distance = f" in {report['distance']} plies" if report["outcome"] != "draw" else ""
    print(f"value: {_value_text({'x_wins': 1, 'draw': 0, 'o_wins': -1}[report['value']])}"
          f"{distance}")
    if all(o is None for o in report["openings"]):  # the first moves move pieces
        print("\nX's first moves, best first (win/draw/loss for X, plies; points 1-N by row):")
        for m in report["first_moves"]:
            move = f"{m['to'] + 1}" if m["from"] is None else f"{m['from'] + 1}-{m['to'] + 1}"
            distance = f" {m['distance']}" if m["outcome"] != "draw" else ""
            print(f"  {'*' if m['optimal'] else ' '} {move}: {m['outcome']}{distance}")
        return
    print("\nX's first placement, by point (win/draw/loss for X, plies; '-' barred):")
    cells = [("-" if o is None else f"{o['outcome']}" + (f" {o['distance']}"
              if o["outcome"] != "draw" else "")) for o in report["openings"]]
    width = max(len(c) for c in cells)
    for r in range(0, len(cells), cols):
        print("  " + " | ".join(f"{c:^{width}}" for c in cells[r:r + cols]))


def run_solve(args: argparse.Namespace) -> int:
    from gameai.games import get_game

    game = get_game(args.game)
    if args.moves is not None:
        board = game.parse_moves(args.moves)
    elif args.board is not None:
        board = game.parse(args.board, to_move=args.to_move)
    else:
        board = game.initial()
    started = time.perf_counter()
    solution = _solve(game, board, args.time_limit)
    seconds = time.perf_counter() - started
    if args.json:
        print(json.dumps(_solution_json(solution, seconds)))
        return 0
    print(f"{game.describe()}, {board.to_move} to move:")
    for r in range(game.rows):
        print("  " + " ".join(board.cell(r * game.cols + c) for c in range(game.cols)))
    distance = f" in {solution.distance} plies" if solution.distance else ""
    print(f"value: {solution.outcome} for {board.to_move}{distance}")
    print("moves (best first):")
    for m in solution.moves:
        mark = "*" if m.optimal else " "
        where = f"row {m.row} col {m.col} (cell {m.row * game.cols + m.col})"
        if getattr(game, "gravity", False):
            where = f"column {m.col + 1} ({where})"
        if m.from_index is not None:
            where = f"row {m.from_row} col {m.from_col} -> {where}"
        end = f" in {m.distance}" if m.distance or m.outcome != "draw" else ""
        print(f" {mark} {where}: {m.outcome}{end}")
    print(f"solved in {seconds * 1000:.1f} ms")
    if args.moves:
        print(f"position: {board}")
    return 0


def _solve(game: Any, board: Any, time_limit: float | None) -> Any:
    if time_limit is not None and time_limit < 0:
        raise CommandError(f"--time-limit must be 0 (no limit) or more, got {time_limit:g}")
    return game.solve(board, time_limit=time_limit or None)


def _solution_json(solution: Any, seconds: float) -> dict[str, Any]:
    game = solution.board.game
    moves = []
    for m in solution.moves:
        move: dict[str, Any] = {"row": m.row, "col": m.col, "index": m.row * game.cols + m.col}
        if m.from_index is not None:
            move["from"] = {"row": m.from_row, "col": m.from_col, "index": m.from_index}
            move["action"] = m.move
        moves.append({**move, "outcome": m.outcome, "distance": m.distance,
                      "optimal": m.optimal})
    return {
        "game": game.name,
        "board": str(solution.board),
        "to_move": solution.board.to_move,
        "value": solution.value,
        "outcome": solution.outcome,
        "distance": solution.distance,
        "optimal_moves": list(solution.optimal_moves),
        "moves": moves,
        "seconds": round(seconds, 6),
    }


def _value_text(value: int) -> str:
    return {1: "X wins with perfect play", 0: "a draw with perfect play",
            -1: "O wins with perfect play"}[value]


def _grid(values: list[int], cols: int) -> str:
    width = max(len(f"{v:,}") for v in values)
    rows = [values[i : i + cols] for i in range(0, len(values), cols)]
    return "\n".join("  " + " | ".join(f"{v:>{width},}" for v in row) for row in rows)


def register_bench(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "solver", help="time the exact solver: a game's whole table, or the search on "
        "benchmark positions (connect-four)",
        description="Games solved by a whole-game table (four-in-a-row): time building it. "
        "Games solved by search (connect-four, mnk-4x5-4 ...): for gravity games, time the "
        "search on labelled benchmark positions by stage and difficulty (positions/s, "
        "mean and max per position, nodes/s); --empty times the empty board instead.")
    p.add_argument("--game", default="four-in-a-row")
    p.add_argument("--count", type=positive, default=50,
                   help="search: positions per end and middle class (default 50)")
    p.add_argument("--beginning-count", type=positive, default=10,
                   help="search: hard beginning positions (default 10; labelling them "
                   "takes minutes the first time, then the set is cached)")
    p.add_argument("--seed", type=int, default=0, help="search: the positions' seed")
    p.add_argument("--empty", action="store_true",
                   help="search: solve the empty board instead (a long benchmark)")
    p.add_argument("--json", action="store_true")
    memory_option(p)
    p.set_defaults(func=run_bench_solver)
    p = sub.add_parser("retrograde", help="time the retrograde solver on every morris variant")
    p.add_argument("--game", action="append", default=[], metavar="GAME",
                   help="time this game instead, its graph built by the interface's generic "
                   "walk (any game of at most 2,000,000 positions; repeatable)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_bench_retrograde)


def run_bench_retrograde(args: argparse.Namespace) -> int:
    """Build and solve every morris variant's (or each ``--game``'s) whole state graph and
    print the figures."""
    from gameai.bench.retrograde import bench_variants

    figures = bench_variants(args.game)
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"load average {figures['load_average']}; first call {figures['first_seconds']} s "
          "(loads the compiled kernels)")
    for row in figures["variants"]:
        print(f"  {row['game']:<48} {row['positions']:>6,} positions, value {row['value']:<7}"
              f" graph {row['graph_seconds']:.4f} s + solve {row['solve_seconds']:.4f} s")
    print(f"slowest variant: {figures['worst_seconds']:.4f} s (target {figures['target_seconds']}"
          f" s, moonshot {figures['moonshot_seconds']} s)")
    return 0


def _searched(game: Any) -> bool:
    from gameai.games.mnk import search
    from gameai.games.mnk.solver import table_is_quick

    return search.supports(game) and not table_is_quick(game)


def run_bench_solver(args: argparse.Namespace) -> int:
    """Solve and analyse ``--game`` from scratch (no disk cache) and print the figures."""
    from gameai.cli.common import CommandError
    from gameai.games import get_game
    from gameai.games.mnk.board import Board
    from gameai.games.mnk.game import as_mnk
    from gameai.games.mnk.positions import enumerate_positions
    from gameai.games.mnk.solver import solve_positions
    from gameai.games.mnk.stats import analyze

    named = get_game(args.game)
    if _searched(named):
        from gameai.bench import CannotBench
        from gameai.bench.solver import run_search_bench

        try:
            return run_search_bench(args, as_mnk(named))
        except CannotBench as e:
            raise CommandError(str(e)) from e
    if not named.cell_kernels:
        raise CommandError(f"bench solver times the layered m,n,k solver; {named.name} is "
                           "solved by retrograde analysis: time it with 'gameai bench "
                           f"retrograde --game {named.name}'")
    game = as_mnk(named)
    t0 = time.perf_counter()
    positions = enumerate_positions(Board.empty(game))
    t1 = time.perf_counter()
    table = solve_positions(positions)
    t2 = time.perf_counter()
    report = analyze(game)
    t3 = time.perf_counter()
    figures = {
        "game": game.name,
        "canonical_positions": len(table),
        "positions": report["positions"],
        "games": report["games"]["total"],
        "enumerate_seconds": round(t1 - t0, 3),
        "solve_seconds": round(t2 - t0, 3),
        "analyze_seconds": round(t3 - t2, 3),
        "target_seconds": 120,
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:>20}: {value:,}" if isinstance(value, int) else f"{key:>20}: {value}")
    return 0
