"""Seeds 000 and 001's reward tallies (:mod:`gameai.trainer.learners.tally`) along a state graph.

The same tallies, choice, exploration, parameters and export as
:class:`gameai.trainer.learners.tally.TallyLearner`, per (position as played, move). A game's
weight is
``length_base ** (cells - length)`` as there, with games longer than ``cells`` plies (which
an m,n,k game never plays) weighted 1 like a game of ``cells`` plies: a morris game can
last hundreds of plies before the draw rule ends it, and a weight that kept shrinking
would make long drawn games count for nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from gameai.games import Game
from gameai.models import Model, ModelInfo
from gameai.trainer.learners.base import Params
from tests.trainer.reference.bitboard import U64, greedy, uniform
from tests.trainer.reference.position_graph import (
    GraphLearner,
    GraphSpec,
    check_random_starts,
    forget,
    move_result,
    start,
)
from tests.trainer.reference.tally import DRAW, LOSS, WIN, TallyParams, score_to_value


@dataclass(frozen=True)
class TallyGraphParams(TallyParams):
    """:class:`TallyParams` and ``random_starts``
    (:class:`tests.trainer.reference.position_graph.GraphLearner`)."""

    random_starts: float = 0.2

    def check(self) -> None:
        super().check()
        check_random_starts(self.random_starts)


class TallyGraphLearner(GraphLearner):
    algorithm = "tally"
    params_type = TallyGraphParams
    params: TallyGraphParams

    def __init__(self, game: Game, *, seed: int = 0, params: Params | None = None) -> None:
        super().__init__(game, seed=seed, params=params)
        self.t = np.zeros((len(self.spec.move_child), 3), dtype=np.float64)  # per move
        self.n = np.zeros(len(self.graph.raw_keys), dtype=np.int64)

    @property
    def exploration(self) -> float:
        """As :attr:`gameai.trainer.learners.tally.TallyLearner.exploration`, over the positions
        met."""
        n = self.n[self.n > 0]
        c = self.params.explore_c
        return float(np.mean(c / (c + n))) if len(n) else 1.0

    def _run(self, games: int, played: int, stats: np.ndarray) -> None:
        p = self.params
        _tally_graph_games(self.spec, self.t, self.n, self.rng, games, played,
                           np.array([p.length_base, p.explore_c, p.explore_min,
                                     p.partner_explore, p.swap_every,
                                     1.0 if p.credit == "greedy" else 0.0,
                                     p.random_starts]),
                           stats, self.seen, self.path, self.live)

    def export(self, info: ModelInfo | None = None) -> Model:
        tallies = self.pooled_rows(self.t, self.n > 0)
        x_to_move = (self.graph.to_move == 0)[:, None]
        xw, ow, draw = tallies[..., 0], tallies[..., 1], tallies[..., 2]
        win = np.where(x_to_move, xw, ow)
        loss = np.where(x_to_move, ow, xw)
        total = win + draw + loss
        with np.errstate(invalid="ignore", divide="ignore"):
            score = (WIN * win + DRAW * draw + LOSS * loss) / total
        rows = np.where(total > 0, score_to_value(score), np.nan)
        return self.graph_model(rows, info or self.info())

    def warm_start(self, model: Model) -> None:
        """One game's worth of pseudo-tallies per known move, with the model's score."""
        rows = self.model_rows(model)
        graph, spec = self.graph, self.spec
        parent = np.repeat(np.arange(len(spec.move_ptr) - 1), np.diff(spec.move_ptr))
        slot = self.perms[graph.sym[parent].astype(np.intp), spec.move_action]
        v = rows[graph.canon[parent], slot]
        known = ~np.isnan(v) & (spec.end[parent] == 0)
        v = np.nan_to_num(v, nan=0.0)
        win, loss = np.maximum(v, 0.0), np.maximum(-v, 0.0)
        x_to_move = spec.mover[parent] == 0
        tallies = np.stack([np.where(x_to_move, win, loss), np.where(x_to_move, loss, win),
                            1.0 - win - loss], axis=1)
        self.t[known] = tallies[known]
        self.n[np.unique(parent[known])] = 1


@nb.njit(cache=True)
def _tally_graph_games(spec: GraphSpec, T: np.ndarray, N: np.ndarray, rng: U64, games: int,
                       played: int, p: np.ndarray, stats: np.ndarray, seen: np.ndarray,
                       path: np.ndarray, live: np.ndarray) -> None:
    length_base, explore_c, explore_min, partner = p[0], p[1], p[2], p[3]
    swap_every, greedy_credit = int(p[4]), p[5] > 0.5
    vals = np.empty(spec.max_moves, dtype=np.float64)
    slots = np.empty(spec.max_plies, dtype=np.int64)
    chosen = np.empty(spec.max_plies, dtype=np.int64)
    for g in range(games):
        explorer = ((played + g) // swap_every) & 1
        s = start(rng, live, p[6])
        seen[s] = 1
        path[0] = s
        winner = -1
        first_credited = 0
        ply = 0
        while True:
            lo, hi = spec.move_ptr[s], spec.move_ptr[s + 1]
            n = hi - lo
            mover = spec.mover[s]
            slots[ply] = s
            level = max(explore_min, explore_c / (explore_c + N[s]))
            if mover != explorer:
                level *= partner
            if uniform(rng) < level:
                pick = min(int(uniform(rng) * n), n - 1)
                if greedy_credit:
                    first_credited = ply
            else:
                for j in range(n):
                    row = T[lo + j]
                    total = row[0] + row[1] + row[2]
                    if total > 0:  # seed 000's relative weighted reward, mover's view
                        vals[j] = (WIN * row[mover] + DRAW * row[2] + LOSS * row[1 - mover]) \
                            / total
                    else:
                        vals[j] = DRAW
                pick = greedy(vals, n, rng)
            chosen[ply] = lo + pick
            c = spec.move_child[lo + pick]
            result = move_result(spec, c, seen)
            seen[c] += 1
            path[ply + 1] = c
            if result != 0:
                if result == 1:
                    winner = mover
                break
            s = c
            ply += 1
        length = ply + 1
        forget(seen, path, ply + 2)
        reward = length_base ** max(0, spec.cells - length)
        column = winner if winner >= 0 else 2
        stats[3] += length
        stats[column] += 1
        for t in range(first_credited, length):
            T[chosen[t], column] += reward
            N[slots[t]] += 1
