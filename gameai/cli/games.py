"""``gameai analyze`` and ``gameai solve``: the game core from the command line."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "analyze",
        help="statistics of every game (seed 000's tables)",
        description="Count every position and game of GAME and tabulate results by opening "
        "cell, over all games and over games without 'stupid' moves (seed 000).",
    )
    p.add_argument("game", help="tictactoe, four-in-a-row, mnk-RxC-K, connect-RxC-K, ...")
    p.add_argument("--json", action="store_true", help="print JSON instead of grids")
    p.set_defaults(func=run_analyze)

    p = sub.add_parser(
        "solve",
        help="exact value and optimal moves of a position",
        description="Solve a position exactly: its value, every legal move's outcome and "
        "distance to the end (plies), and the time taken.",
    )
    p.add_argument("game")
    p.add_argument("--board", help="pattern like 'X--|-O-|---' (default: the empty board)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_solve)


def run_analyze(args: argparse.Namespace) -> int:
    from gameai.games import get_game
    from gameai.games.stats import analyze

    game = get_game(args.game)
    started = time.perf_counter()
    report = analyze(game)
    seconds = time.perf_counter() - started
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{game.describe()}: analysed in {seconds:.2f} s")
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


def run_solve(args: argparse.Namespace) -> int:
    from gameai.games import Board, get_game
    from gameai.games.solver import solve

    game = get_game(args.game)
    board = Board.parse(game, args.board) if args.board is not None else Board.empty(game)
    started = time.perf_counter()
    solution = solve(board)
    seconds = time.perf_counter() - started
    if args.json:
        print(json.dumps(_solution_json(solution, seconds)))
        return 0
    print(f"{game.describe()}, {board.to_move} to move:")
    for r in range(game.rows):
        print("  " + " ".join(board.cell(r * game.cols + c) for c in range(game.cols)))
    print(f"value: {solution.outcome} for {board.to_move} in {solution.distance} plies")
    print("moves (best first):")
    for m in solution.moves:
        mark = "*" if m.optimal else " "
        print(f" {mark} row {m.row} col {m.col} (cell {m.move}): {m.outcome} in {m.distance}")
    print(f"solved in {seconds * 1000:.1f} ms")
    return 0


def _solution_json(solution: Any, seconds: float) -> dict[str, Any]:
    return {
        "game": solution.board.game.name,
        "board": str(solution.board),
        "to_move": solution.board.to_move,
        "value": solution.value,
        "outcome": solution.outcome,
        "distance": solution.distance,
        "optimal_moves": list(solution.optimal_moves),
        "moves": [
            {"row": m.row, "col": m.col, "index": m.move, "outcome": m.outcome,
             "distance": m.distance, "optimal": m.optimal}
            for m in solution.moves
        ],
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
    p = sub.add_parser("solver", help="time the exact solver and the statistics of a game")
    p.add_argument("--game", default="four-in-a-row")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_bench_solver)


def run_bench_solver(args: argparse.Namespace) -> int:
    """Solve and analyse ``--game`` from scratch (no disk cache) and print the figures."""
    from gameai.games import Board, get_game
    from gameai.games.positions import enumerate_positions
    from gameai.games.solver import solve_positions
    from gameai.games.stats import analyze

    game = get_game(args.game)
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
