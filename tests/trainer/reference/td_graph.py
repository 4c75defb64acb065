"""Seeds 002 and 004's afterstate TD(0) (:mod:`gameai.trainer.learners.td`) along a state graph.

The same update, parameters, exploration and export as
:class:`gameai.trainer.learners.td.TdLearner`; the
afterstate of a move is the canonical id of the position it leads to, so values are shared
by symmetric images as there. A move that ends the game is worth 1 (a win) or
``draw_value`` (a drawn end, or the third occurrence of a position: the draw rule), and
its afterstate is not learned.

An exploring start (``random_starts``) is itself the afterstate of the side that is not to
move there, and is learned as one: pulled towards that side's next afterstate in the game
(or its result). Without that, the afterstate of a move that good play has stopped making
kept the value of the games that tried it early on: on three-mens-morris, seeds 0 and
1,238,657,675 plateaued at an optimal-move rate of 0.999195 (4 of 4,974 positions, the
images of one: two moves that win in time valued below two that draw) and never passed
the gates' "perfect where the solver can tell".
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
from tests.trainer.reference.td import TdParams


@dataclass(frozen=True)
class TdGraphParams(TdParams):
    """:class:`TdParams` and ``random_starts``: the share of games that start from a
    position drawn uniformly from every live position rather than from the empty board
    (exploring starts: positions that good play never reaches still get played)."""

    random_starts: float = 0.2

    def check(self) -> None:
        super().check()
        check_random_starts(self.random_starts)


class TdGraphLearner(GraphLearner):
    algorithm = "td"
    params_type = TdGraphParams
    params: TdGraphParams

    def __init__(self, game: Game, *, seed: int = 0, params: Params | None = None) -> None:
        super().__init__(game, seed=seed, params=params)
        self.v = np.full(len(self.graph), 0.5, dtype=np.float64)
        self.n = np.zeros(len(self.graph), dtype=np.int64)

    @property
    def exploration(self) -> float:
        p = self.params
        if p.explore == "boltzmann":
            return annealed(p.tau_start, p.tau_end, p.tau_halflife, self.games_played)
        return annealed(p.epsilon_start, p.epsilon_end, p.epsilon_halflife, self.games_played)

    def _run(self, games: int, played: int, stats: np.ndarray) -> None:
        p = self.params
        boltz = p.explore == "boltzmann"
        schedule = np.array([
            p.tau_start if boltz else p.epsilon_start, p.tau_end if boltz else p.epsilon_end,
            p.tau_halflife if boltz else p.epsilon_halflife], dtype=np.float64)
        alpha = np.array([p.alpha0, p.alpha_power, p.alpha_min, p.draw_value,
                          p.random_starts])
        _td_graph_games(self.spec, self.v, self.n, self.rng, games, played, 0 if boltz else 1,
                        schedule, alpha, stats, self.seen, self.path, self.live)

    def export(self, info: ModelInfo | None = None) -> Model:
        graph, d = self.graph, self.params.draw_value
        kids = graph.children
        safe = np.maximum(kids, 0)
        v = np.where(self.n[safe] > 0, self.v[safe], np.nan)
        v = np.where(graph.end[safe] == 1, 1.0, np.where(graph.end[safe] == 2, d, v))
        rows = np.where(v >= d, (v - d) / (1 - d), (v - d) / d)
        return self.graph_model(np.where(kids >= 0, rows, np.nan), info or self.info())

    def warm_start(self, model: Model) -> None:
        """Each afterstate takes the model's value of a move that leads to it."""
        rows = self.model_rows(model)
        kids = self.graph.children
        known = (kids >= 0) & ~np.isnan(rows) & (self.graph.end[np.maximum(kids, 0)] == 0)
        d = self.params.draw_value
        values = rows[known]
        self.v[kids[known]] = np.where(values >= 0, d + values * (1 - d), d + values * d)
        self.n[kids[known]] = 1


@nb.njit(cache=True)
def _td_graph_games(spec: GraphSpec, V: np.ndarray, N: np.ndarray, rng: U64, games: int,
                    played: int, mode: int, schedule: np.ndarray, alpha: np.ndarray,
                    stats: np.ndarray, seen: np.ndarray, path: np.ndarray,
                    live: np.ndarray) -> None:
    vals = np.empty(spec.max_moves, dtype=np.float64)
    weights = np.empty(spec.max_moves, dtype=np.float64)
    slots = np.empty(spec.max_plies, dtype=np.int64)  # afterstate of each ply (-1: the end)
    movers = np.empty(spec.max_plies, dtype=np.int8)
    random_move = np.zeros(spec.max_plies, dtype=np.bool_)
    alpha0, power, alpha_min, draw, starts = alpha[0], alpha[1], alpha[2], alpha[3], alpha[4]
    for g in range(games):
        level = schedule[1] + (schedule[0] - schedule[1]) * 0.5 ** ((played + g) / schedule[2])
        s = start(rng, live, starts)
        # an exploring start is the afterstate of the side not to move there: learned too
        first = spec.canon[s] if s != 0 else -1
        first_owner = 1 - spec.mover[s]
        seen[s] = 1
        path[0] = s
        winner = -1
        ply = 0
        while True:
            lo, hi = spec.move_ptr[s], spec.move_ptr[s + 1]
            n = hi - lo
            best = -1.0
            for j in range(n):
                c = spec.move_child[lo + j]
                result = move_result(spec, c, seen)
                if result == 1:
                    vals[j] = 1.0
                elif result == 2:
                    vals[j] = draw
                else:
                    vals[j] = V[spec.canon[c]]
                best = max(best, vals[j])
            random_move[ply] = False
            if mode == 0:  # Boltzmann: P(move) ~ exp(V / tau)
                total = 0.0
                for j in range(n):
                    weights[j] = np.exp((vals[j] - best) / level)
                    total += weights[j]
                r = uniform(rng) * total
                pick = n - 1
                for j in range(n):
                    r -= weights[j]
                    if r < 0.0:
                        pick = j
                        break
            elif uniform(rng) < level:  # epsilon: a random move
                pick = min(int(uniform(rng) * n), n - 1)
                random_move[ply] = vals[pick] < best
            else:
                pick = greedy(vals, n, rng)
            mover = spec.mover[s]
            movers[ply] = mover
            c = spec.move_child[lo + pick]
            result = move_result(spec, c, seen)
            seen[c] += 1
            path[ply + 1] = c
            if result != 0:
                slots[ply] = -1
                if result == 1:
                    winner = mover
                break
            slots[ply] = spec.canon[c]
            s = c
            ply += 1
        last = ply
        forget(seen, path, last + 2)
        stats[3] += last + 1
        if winner == 0:
            stats[0] += 1
        elif winner == 1:
            stats[1] += 1
        else:
            stats[2] += 1
        for player in range(2):
            if winner == player:
                target = 1.0
            elif winner < 0:
                target = draw
            else:
                target = 0.0
            t = last if movers[last] == player else last - 1
            while t >= 0:
                a = slots[t]
                if a >= 0 and not (t + 2 <= last and random_move[t + 2]):
                    step = max(alpha_min, alpha0 / (1.0 + N[a]) ** power)
                    V[a] += step * (target - V[a])
                    N[a] += 1
                if a >= 0:
                    target = V[a]
                t -= 2
            if first >= 0 and player == first_owner and not (1 <= last and random_move[1]):
                step = max(alpha_min, alpha0 / (1.0 + N[first]) ** power)
                V[first] += step * (target - V[first])
                N[first] += 1
