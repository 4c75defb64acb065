"""Retrograde analysis: exact values of every position of a game with cycles.

Works backwards from the ends over the whole :class:`~gameai.games.graph.StateGraph`:
a position whose side to move has lost is a loss in 0 plies; a position with a move to a
loss (for the opponent) in ``t`` plies is a win in ``t + 1``; a position all of whose moves
lead to opponent wins is a loss in one more than the longest of them. Positions are
settled in order of distance, so a win takes its shortest route and a loss its longest.
What is never settled is a draw: neither side can force an end, and under the draw rule
(a third repetition draws; :mod:`gameai.games.morris.game`) the game is drawn.

Scores follow :mod:`gameai.games.mnk.solver`'s convention from the side to move: a win in
``t`` plies scores ``big - t``, a draw 0, a loss in ``t`` plies ``t - big``. A draw has no
distance (the game ends only by repetition): its distance is reported as 0.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numba as nb
import numpy as np
import numpy.typing as npt

from gameai.games.errors import GameError, TooLarge
from gameai.games.graph import DRAWN, LOST, StateGraph
from gameai.games.interface import Game, MoveOutcome, Solution, State

I16 = npt.NDArray[np.int16]


@nb.njit(cache=True)
def _retrograde(children: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(value, distance)`` per position: value 1 a win for the side to move, -1 a loss,
    0 a draw (never settled, or a drawn end); distance in plies."""
    n, actions = children.shape
    # parents in CSR form, one entry per (parent, action) edge
    start = np.zeros(n + 1, dtype=np.int64)
    remaining = np.zeros(n, dtype=np.int64)
    for p in range(n):
        for a in range(actions):
            c = children[p, a]
            if c >= 0:
                start[c + 1] += 1
                remaining[p] += 1
    for i in range(n):
        start[i + 1] += start[i]
    parents = np.empty(start[n], dtype=np.int64)
    fill = start[:n].copy()
    for p in range(n):
        for a in range(actions):
            c = children[p, a]
            if c >= 0:
                parents[fill[c]] = p
                fill[c] += 1
    value = np.zeros(n, dtype=np.int8)
    distance = np.zeros(n, dtype=np.int32)
    known = np.zeros(n, dtype=np.bool_)
    queue = np.empty(n, dtype=np.int64)
    head = tail = 0
    for i in range(n):
        if end[i] == 1:  # the side to move has lost
            value[i] = -1
            known[i] = True
            queue[tail] = i
            tail += 1
        elif end[i] == 2:  # a drawn end: settled, and it settles no parent
            known[i] = True
    while head < tail:  # first in, first out: in order of distance
        c = queue[head]
        head += 1
        for e in range(start[c], start[c + 1]):
            p = parents[e]
            if known[p]:
                continue
            if value[c] < 0:  # a move to the opponent's loss: a win, by the shortest route
                value[p] = 1
            else:
                remaining[p] -= 1
                if remaining[p] > 0:
                    continue
                value[p] = -1  # every move leads to an opponent's win: the last is longest
            distance[p] = distance[c] + 1
            known[p] = True
            queue[tail] = p
            tail += 1
    return value, distance


def solve_graph(graph: StateGraph) -> I16:
    """The score of every canonical position of ``graph`` (see the module docstring).

    Raises:
        TooLarge: a forced win is as long as the game's score scale ``big`` or longer.
    """
    value, distance = _retrograde(graph.children, graph.end)
    big = graph.game.big
    if len(distance) and int(distance.max()) >= big:
        raise TooLarge(f"{graph.game.name}: a forced win takes {int(distance.max())} plies; "
                       f"the score scale ({big}) is too small")
    return np.where(value > 0, big - distance, np.where(value < 0, distance - big, 0)
                    ).astype(np.int16)


def back_up(child_scores: npt.NDArray[np.integer]) -> I16:
    """The score of a move, from the mover's view, given its child's score."""
    v = -child_scores.astype(np.int16)
    return np.where(v > 0, v - 1, np.where(v < 0, v + 1, 0)).astype(np.int16)


@lru_cache(maxsize=16)
def solved(game: Game) -> tuple[StateGraph, I16]:
    """``game``'s state graph and the score of each of its canonical positions."""
    graph = game.state_graph()
    return graph, solve_graph(graph)


def move_scores(game: Game) -> tuple[np.ndarray, I16, npt.NDArray[np.bool_]]:
    """:meth:`Game.move_scores <gameai.games.interface.Game.move_scores>` from the graph."""
    graph, scores = solved(game)
    live = np.flatnonzero(graph.end == 0)
    children = graph.children[live]
    legal = children >= 0
    rows = np.where(legal, back_up(scores[np.maximum(children, 0)]), 0).astype(np.int16)
    return graph.keys[live], rows, legal


def describe(game: Game, score: int) -> tuple[str, int]:
    """``(outcome, distance)`` of a score; a draw's distance is 0."""
    if score > 0:
        return "win", game.big - score
    if score < 0:
        return "loss", game.big + score
    return "draw", 0


def solve_state(state: State) -> Solution:
    """The value of ``state`` and of each legal move, best first (ties by action id).

    Raises:
        GameOver: the game has ended at ``state``.
    """
    state.require_playable()
    game = state.game
    graph, scores = solved(game)
    node = graph.canonical_id(state)
    if node < 0:
        raise GameError(f"this position is not reachable in {game.name}")
    outcomes = []
    for action in state.legal_actions():
        child = graph.canonical_id(state.play(action))
        score = int(back_up(scores[[child]])[0])
        move = game.move(action)
        outcomes.append(MoveOutcome(action, move.row, move.col, *describe(game, score), score,
                                    False, move.from_index, move.from_row, move.from_col))
    best = max(m.score for m in outcomes)
    outcomes = sorted(
        (MoveOutcome(m.move, m.row, m.col, m.outcome, m.distance, m.score, m.score == best,
                     m.from_index, m.from_row, m.from_col) for m in outcomes),
        key=lambda m: (-m.score, m.move))
    outcome, distance = describe(game, int(scores[node]))
    return Solution(state, int(np.sign(scores[node])), outcome, distance, tuple(outcomes))


def analyze(game: Game) -> dict[str, Any]:
    """``gameai analyze`` for a game solved by retrograde analysis: how many positions are
    reachable, the game's value, the value of each opening placement by its point
    (``openings``) and of every first move, placements and movements (``first_moves``, best
    first)."""
    graph, scores = solved(game)
    root = game.initial()
    solution = solve_state(root)
    openings: list[dict[str, Any] | None] = [None] * game.cells
    for m in solution.moves:
        if m.from_index is None:
            index = m.row * game.cols + m.col
            openings[index] = {"outcome": m.outcome, "distance": m.distance,
                               "optimal": m.optimal}
    lost = int((graph.end == LOST).sum())
    drawn_ends = int((graph.end == DRAWN).sum())
    live = graph.end == 0
    value = {1: "x_wins", 0: "draw", -1: "o_wins"}[solution.value * (1 if root.to_move == "X"
                                                                     else -1)]
    decided = scores[live] != 0
    return {
        "game": game.name,
        "rules": game.describe(),
        "positions": len(graph.raw_keys),
        "canonical_positions": len(graph),
        "live_positions": int(live.sum()),
        "finished_positions": lost + drawn_ends,
        "won_for_mover": int((scores[live] > 0).sum()),
        "lost_for_mover": int((scores[live] < 0).sum()),
        "drawn": int((~decided).sum()),
        "longest_forced_win": int(game.big - scores[scores > 0].min()) if (scores > 0).any()
        else 0,
        "value": value,
        "outcome": solution.outcome,
        "distance": solution.distance,
        "openings": openings,
        "first_moves": [{"from": m.from_index, "to": m.row * game.cols + m.col,
                         "outcome": m.outcome, "distance": m.distance, "optimal": m.optimal}
                        for m in solution.moves],
    }
