"""Seed 003's state values with the Bellman update (:mod:`gameai.trainer.learners.qlearning`) along
a state
graph.

The same update, rewards, parameters and export as
:class:`gameai.trainer.learners.qlearning.QLearner`:
two agents value every position (as played, no symmetry, as seed 003 keys it) from their
own side, with ``alpha = 1 / N(s)``. A move to a position's third occurrence ends the
game as a draw (the draw rule) and is rewarded as one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from gameai.games import Game
from gameai.models import Model, ModelInfo
from gameai.trainer.learners.base import Params
from gameai.trainer.learners.schedules import annealed
from tests.trainer.reference.bitboard import U64, greedy, uniform
from tests.trainer.reference.position_graph import (
    GraphLearner,
    GraphSpec,
    check_random_starts,
    forget,
    move_result,
    start,
)
from tests.trainer.reference.qlearning import QParams


@dataclass(frozen=True)
class QGraphParams(QParams):
    """:class:`QParams` and ``random_starts``
    (:class:`tests.trainer.reference.position_graph.GraphLearner`)."""

    random_starts: float = 0.2

    def check(self) -> None:
        super().check()
        check_random_starts(self.random_starts)


class QGraphLearner(GraphLearner):
    algorithm = "qlearning"
    params_type = QGraphParams
    params: QGraphParams

    def __init__(self, game: Game, *, seed: int = 0, params: Params | None = None) -> None:
        super().__init__(game, seed=seed, params=params)
        positions = len(self.graph.raw_keys)
        self.v = np.zeros((positions, 2), dtype=np.float64)
        self.n = np.zeros(positions, dtype=np.int64)

    @property
    def exploration(self) -> float:
        p = self.params
        return annealed(p.epsilon_start, p.epsilon_end, p.epsilon_halflife, self.games_played)

    def _run(self, games: int, played: int, stats: np.ndarray) -> None:
        p = self.params
        rewards = np.array([p.win, p.draw, p.loss, p.step, p.gamma, p.epsilon_start,
                            p.epsilon_end, p.epsilon_halflife,
                            1.0 if p.opponent == "random" else 0.0, p.random_starts])
        _q_graph_games(self.spec, self.v, self.n, self.rng, games, played, rewards, stats,
                       self.seen, self.path, self.live)

    def export(self, info: ModelInfo | None = None) -> Model:
        """Each move's value is the value of the position it leads to for the mover,
        averaged over the symmetric images weighted by visits (as :class:`QLearner`)."""
        p, spec = self.params, self.spec
        parent = np.repeat(np.arange(len(spec.move_ptr) - 1), np.diff(spec.move_ptr))
        child, mover = spec.move_child, spec.mover[parent]
        v = self.v[child, mover]
        weight = self.n[child].astype(np.float64)
        v = np.where(spec.end[child] == 1, p.win, np.where(spec.end[child] == 2, p.draw, v))
        weight = np.where(spec.end[child] != 0, 1.0, weight)
        sums = np.stack([np.where(weight > 0, v * weight, 0.0), weight], axis=1)
        visited = self.n > 0
        visited[0] = True
        pooled = self.pooled_rows(sums, visited)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = pooled[..., 0] / pooled[..., 1]
        rows = np.where(pooled[..., 1] > 0, p.to_value(mean), np.nan)
        return self.graph_model(rows, info or self.info())

    def warm_start(self, model: Model) -> None:
        """Each position a model's move leads to gets the model's value for the mover and
        its negation for the other side, with one visit (as :class:`QLearner`)."""
        rows = self.model_rows(model)
        graph, p = self.graph, self.params
        raw_rows = rows[graph.canon]
        perms = self.perms[graph.sym.astype(np.intp)]
        values = np.take_along_axis(raw_rows, perms, axis=1)
        kids = graph.raw_children
        known = (kids >= 0) & ~np.isnan(values)
        known &= graph.raw_end[np.maximum(kids, 0)] == 0
        parent, action = np.nonzero(known)
        child, side = kids[parent, action], graph.raw_to_move[parent].astype(np.intp)
        value = values[parent, action]
        self.v[child, side] = p.from_value(value)
        self.v[child, 1 - side] = p.from_value(-value)
        self.n[child] = 1
        self.n[parent] = np.maximum(self.n[parent], 1)


@nb.njit(cache=True)
def _q_graph_games(spec: GraphSpec, V: np.ndarray, N: np.ndarray, rng: U64, games: int,
                   played: int, p: np.ndarray, stats: np.ndarray, seen: np.ndarray,
                   path: np.ndarray, live: np.ndarray) -> None:
    win, draw, loss, step, gamma = p[0], p[1], p[2], p[3], p[4]
    random_opponent = p[8] > 0.5
    vals = np.empty(spec.max_moves, dtype=np.float64)
    for g in range(games):
        epsilon = p[6] + (p[5] - p[6]) * 0.5 ** ((played + g) / p[7])
        agent = (played + g) & 1  # with a random opponent: the side that learns to play
        s = start(rng, live, p[9])
        seen[s] = 1
        path[0] = s
        ply = 0
        while True:
            lo, hi = spec.move_ptr[s], spec.move_ptr[s + 1]
            n = hi - lo
            mover = spec.mover[s]
            if (random_opponent and mover != agent) or uniform(rng) < epsilon:
                pick = min(int(uniform(rng) * n), n - 1)
            else:
                for j in range(n):
                    c = spec.move_child[lo + j]
                    result = move_result(spec, c, seen)
                    if result == 1:
                        vals[j] = win
                    elif result == 2:
                        vals[j] = draw
                    else:
                        vals[j] = V[c, mover]
                pick = greedy(vals, n, rng)
            c = spec.move_child[lo + pick]
            result = move_result(spec, c, seen)
            seen[c] += 1
            path[ply + 1] = c
            N[s] += 1
            alpha = 1.0 / N[s]
            if result == 1:
                V[s, mover] += alpha * (win - V[s, mover])
                V[s, 1 - mover] += alpha * (loss - V[s, 1 - mover])
                stats[mover] += 1
                break
            if result == 2:
                V[s, 0] += alpha * (draw - V[s, 0])
                V[s, 1] += alpha * (draw - V[s, 1])
                stats[2] += 1
                break
            for side in range(2):
                V[s, side] += alpha * (step + gamma * V[c, side] - V[s, side])
            s = c
            ply += 1
        stats[3] += ply + 1
        forget(seen, path, ply + 2)
