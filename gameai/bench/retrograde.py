"""``gameai bench retrograde``: every morris variant's state graph (or the named games')
built and solved from nothing (no cache), each part timed."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from gameai.games import Game, get_game
from gameai.games.graph import StateGraph, assemble, build_graph
from gameai.games.morris.game import MorrisGame, variants
from gameai.games.morris.graph import walk
from gameai.games.retrograde import solve_graph


def _built(game: Game) -> StateGraph:
    # from nothing (a game's own graph is cached): morris by its compiled walk, any other
    # game by the interface's generic walk
    if isinstance(game, MorrisGame):
        return assemble(game, *walk(game))
    return build_graph(game)


def bench_variants(names: Sequence[str] = ()) -> dict[str, Any]:
    """The figures of every morris variant (or of the games ``names``), and the first
    call's time (the kernels' loading)."""
    games: list[Game] = [get_game(n) for n in names] or list(variants())
    started = time.perf_counter()
    solve_graph(_built(games[0]))  # loads the compiled kernels once
    first = time.perf_counter() - started
    rows: list[dict[str, Any]] = []
    for game in games:
        t0 = time.perf_counter()
        graph = _built(game)
        t1 = time.perf_counter()
        scores = solve_graph(graph)
        t2 = time.perf_counter()
        root = scores[graph.canon[0]]
        rows.append({"game": game.name, "positions": len(graph.raw_keys),
                     "canonical_positions": len(graph),
                     "value": {1: "x_wins", 0: "draw", -1: "o_wins"}[int(np.sign(root))],
                     "graph_seconds": round(t1 - t0, 5), "solve_seconds": round(t2 - t1, 5)})
    worst = max(float(r["graph_seconds"]) + float(r["solve_seconds"]) for r in rows)
    return {"variants": rows, "first_seconds": round(first, 3), "worst_seconds": round(worst, 5),
            "target_seconds": 1.0, "moonshot_seconds": 0.1,
            "load_average": [round(v, 2) for v in os.getloadavg()]}
