"""The honest evaluator for games evaluated along their state graph (morris, and any game
without the m,n,k kernels): the same report as :mod:`gameai.trainer.evaluation.evaluate`, the same
meaning of "unbeatable".

* ``losses_as_x`` / ``losses_as_o`` and ``draws_as_x`` / ``draws_as_o``: the exhaustive
  opponent. The model plays its best move, the opponent every legal reply, and the draw
  rule ends a game at the third occurrence of a position. Where the positions this
  reaches hold no cycle, every line is finite and the figures count lines, exactly as the
  m,n,k evaluator does (``tests/trainer`` holds the two equal on tic-tac-toe). Where they
  hold a cycle the lines cannot be counted (a line may go round it twice before the draw
  rule ends it, in any order of cycles), so the figures count positions instead: the
  distinct positions where the model has lost, and the drawn ends plus the positions on a
  cycle the opponent can keep the game in. Either way a figure is 0 exactly when no line
  ends that way: a lost position the opponent reaches is reached by a line that never
  repeats a position, and a reachable cycle is a line the draw rule ends.
* ``optimal_move_rate``: the share of every reachable live position (each orientation
  counted, ``optimal_move_positions`` of them), where the model's move keeps the retrograde
  solver's value.
* ``vs_random``: seeded games against uniformly random moves, under the draw rule.
* ``opponent_counts``: ``"lines"`` or ``"positions"``, what the figures above count.
* ``game_value``, ``model_bytes``, ``omitted``: as in :mod:`gameai.trainer.evaluation.evaluate`.
"""

from __future__ import annotations

import math
from typing import Any

import numba as nb
import numpy as np
import numpy.typing as npt

from gameai.games import Game
from gameai.games.graph import DRAWN, LOST, StateGraph
from gameai.models import Model
from gameai.trainer.walkers.bitboard import U64, seed_state, uniform
from gameai.trainer.walkers.position_graph import GraphSpec, forget, make_graph_spec, move_result

RANDOM_GAMES = 1000


def graph_policy(model: Model, graph: StateGraph) -> npt.NDArray[np.intp]:
    """The model's action in every raw position of ``graph`` (-1 where the game is over):
    the best value, ties to the lowest action id, as :meth:`Model.best_move` chooses."""
    rows = model.canonical_values(graph.keys)[graph.canon]
    perms = np.array(model.game.action_symmetries, dtype=np.intp)[graph.sym.astype(np.intp)]
    values = np.take_along_axis(rows, perms, axis=1)
    legal = graph.raw_children >= 0
    choice = np.argmax(np.where(legal, np.nan_to_num(values, nan=0.0), -np.inf), axis=1)
    return np.where(legal.any(axis=1), choice, -1)


def line_outcomes(model: Model, *, side: str) -> tuple[int, int]:
    """``(lost, drawn)`` against the exhaustive opponent with the model playing ``side``
    (lines where they can be counted, else positions: see the module docstring)."""
    lost, drawn, _ = opponent_outcomes(model, side=side)
    return lost, drawn


def opponent_outcomes(model: Model, *, side: str,
                      policy: npt.NDArray[np.intp] | None = None) -> tuple[int, int, str]:
    """:func:`line_outcomes` and what was counted: ``"lines"`` or ``"positions"``.
    ``policy``: the model's :func:`graph_policy`, where the caller has it."""
    graph = model.game.state_graph()
    if policy is None:
        policy = graph_policy(model, graph)
    mine = graph.raw_to_move == (0 if side == "X" else 1)
    kids = graph.raw_children
    n = len(kids)
    allowed = np.where(mine[:, None], np.arange(kids.shape[1])[None, :] == policy[:, None],
                       True) & (kids >= 0)
    parent, action = np.nonzero(allowed)
    child = kids[parent, action].astype(np.intp)
    reach = _reachable(n, parent, child)
    keep = reach[parent]
    parent, child = parent[keep], child[keep]
    lost_end = reach & (graph.raw_end == LOST) & mine
    drawn_end = reach & (graph.raw_end == DRAWN)
    on_cycle = _on_cycles(n, parent, child) & reach
    if not on_cycle.any():
        lines = _count_paths(n, parent, child)
        return int(lines[lost_end].sum()), int(lines[drawn_end].sum()), "lines"
    return int(lost_end.sum()), int(drawn_end.sum() + on_cycle.sum()), "positions"


def _reachable(n: int, parent: npt.NDArray[np.intp], child: npt.NDArray[np.intp]
               ) -> npt.NDArray[np.bool_]:
    reach = np.zeros(n, dtype=bool)
    reach[0] = True
    frontier = np.zeros(n, dtype=bool)
    frontier[0] = True
    while frontier.any():
        step = np.zeros(n, dtype=bool)
        step[child[frontier[parent]]] = True
        frontier = step & ~reach
        reach |= frontier
    return reach


def _count_paths(n: int, parent: npt.NDArray[np.intp], child: npt.NDArray[np.intp]
                 ) -> npt.NDArray[np.int64]:
    """Paths from position 0 to every position of an acyclic edge set (Kahn's order)."""
    order = np.argsort(parent, kind="stable")
    parent, child = parent[order], child[order]
    start = np.searchsorted(parent, np.arange(n + 1))
    indegree = np.bincount(child, minlength=n)
    count = np.zeros(n, dtype=np.int64)
    count[0] = 1
    stack = [0]
    while stack:
        p = stack.pop()
        for e in range(start[p], start[p + 1]):
            c = int(child[e])
            count[c] += count[p]
            indegree[c] -= 1
            if indegree[c] == 0:
                stack.append(c)
    return count


def _on_cycles(n: int, parent: npt.NDArray[np.intp], child: npt.NDArray[np.intp]
               ) -> npt.NDArray[np.bool_]:
    """Positions on a cycle of the edge set: those in a strongly connected component of
    more than one position (no position moves to itself). Tarjan's algorithm, iterative."""
    order = np.argsort(parent, kind="stable")
    parent, child = parent[order], child[order]
    start = np.searchsorted(parent, np.arange(n + 1)).tolist()
    succ = child.tolist()
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    result = np.zeros(n, dtype=bool)
    counter = 0
    for root in range(n):
        if index[root] >= 0 or start[root] == start[root + 1]:
            continue
        work = [(root, start[root])]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        while work:
            v, e = work[-1]
            if e < start[v + 1]:
                work[-1] = (v, e + 1)
                w = succ[e]
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, start[w]))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    result[component] = True
    return result


def optimal_move_rate(model: Model) -> float:
    """Share of every reachable live position (each orientation counted, as the m,n,k
    evaluator counts them) where the model's move keeps the value."""
    kept, positions = optimal_moves(model)
    return kept / positions if positions else 1.0


def optimal_moves(model: Model, policy: npt.NDArray[np.intp] | None = None
                  ) -> tuple[int, int]:
    """``(kept, positions)`` over every live position of the state graph as played (the
    raw view: every orientation a game reaches), the model answering each in its own
    orientation, ties to the lowest action id."""
    graph = model.game.state_graph()
    keys, scores, legal = model.game.move_scores()
    order = np.argsort(keys)  # the scores' rows by canonical key (live positions only)
    found = np.minimum(np.searchsorted(keys[order], graph.keys), len(keys) - 1)
    row = order[found][graph.canon]  # raw id -> its scores row (meaningful where live)
    if policy is None:
        policy = graph_policy(model, graph)
    live = np.flatnonzero(policy >= 0)
    perms = np.array(model.game.action_symmetries, dtype=np.intp)
    chosen = perms[graph.sym[live].astype(np.intp), policy[live]]  # in the canonical rows
    best = np.where(legal, scores, np.iinfo(np.int16).min).max(axis=1)
    kept = np.sign(scores[row[live], chosen]) == np.sign(best[row[live]])
    return int(kept.sum()), len(live)


def game_value(game: Game) -> str:
    """``x_wins``, ``draw`` or ``o_wins`` with perfect play."""
    root = game.initial()
    value = game.solve(root).value * (1 if root.to_move == "X" else -1)
    return {1: "x_wins", 0: "draw", -1: "o_wins"}[value]


def vs_random(model: Model, *, games: int = RANDOM_GAMES, seed: int = 0,
              policy: npt.NDArray[np.intp] | None = None) -> dict[str, Any]:
    """Results of ``games`` games against uniformly random moves, as X and as O."""
    graph = model.game.state_graph()
    spec = make_graph_spec(graph)
    if policy is None:
        policy = graph_policy(model, graph)
    rng = seed_state(seed)
    seen = np.zeros(len(graph.raw_keys), dtype=np.int32)
    path = np.zeros(spec.max_plies, dtype=np.int64)
    out = {}
    for side in (0, 1):
        result = np.zeros(3, dtype=np.int64)
        _random_games(spec, policy.astype(np.int64), side, games, rng, seen, path, result)
        out[f"as_{'xo'[side]}"] = {"win": int(result[0]), "draw": int(result[1]),
                                   "loss": int(result[2])}
    return out


@nb.njit(cache=True)
def _random_games(spec: GraphSpec, policy: np.ndarray, side: int, games: int, rng: U64,
                  seen: np.ndarray, path: np.ndarray, result: np.ndarray) -> None:
    for _ in range(games):
        s = 0
        seen[s] = 1
        path[0] = s
        ply = 0
        while True:
            lo, hi = spec.move_ptr[s], spec.move_ptr[s + 1]
            mover = spec.mover[s]
            if mover == side:
                pick = lo
                while spec.move_action[pick] != policy[s]:
                    pick += 1
            else:
                pick = lo + min(int(uniform(rng) * (hi - lo)), hi - lo - 1)
            c = spec.move_child[pick]
            outcome = move_result(spec, c, seen)
            seen[c] += 1
            ply += 1
            path[ply] = c
            if outcome == 1:
                result[0 if mover == side else 2] += 1
                break
            if outcome == 2:
                result[1] += 1
                break
            s = c
        forget(seen, path, ply + 1)


def evaluate_graph(model: Model, *, random_games: int = RANDOM_GAMES, seed: int = 0
                   ) -> dict[str, Any]:
    """Every figure of the report (see :mod:`gameai.trainer.evaluation.evaluate`); omitted ones say
    why."""
    report: dict[str, Any] = {}
    counted = set()
    policy = graph_policy(model, model.game.state_graph())
    for side in ("x", "o"):
        lost, drawn, what = opponent_outcomes(model, side=side.upper(), policy=policy)
        report[f"losses_as_{side}"], report[f"draws_as_{side}"] = lost, drawn
        counted.add(what)
    report["opponent_counts"] = "lines" if counted == {"lines"} else "positions"
    kept, positions = optimal_moves(model, policy)
    # rounded down, as the m,n,k evaluator does: 1.0 means every position
    report["optimal_move_rate"] = math.floor(kept / positions * 1e6) / 1e6 if positions else 1.0
    report["optimal_move_positions"] = positions
    report["game_value"] = game_value(model.game)
    report["vs_random"] = vs_random(model, games=random_games, seed=seed, policy=policy)
    report["model_bytes"] = len(model.to_bytes())
    report["omitted"] = {"checks": "seed 000's five questions are about tic-tac-toe"}
    from gameai.trainer.evaluation.evaluate import with_verdict

    return with_verdict(report)

