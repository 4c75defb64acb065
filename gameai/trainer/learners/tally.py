"""Seeds 000 and 001: reward tallies per (position, move), chosen by relative weighted score.

The memory maps a position's pattern (seed 003's base-3 key of it; no symmetry, as in the
seed) to, for every move tried there, the rewards collected by X wins, O wins and draws.
At the end of each game every move of it is credited with ``length_base ** (cells -
length)``, so shorter games weigh more (seed 000: otherwise it learned to skip immediate
wins). A move is chosen by its relative weighted reward, from the mover's view::

    score = 100 * win / total + 10 * draw / total - 1 * loss / total

so how often a move was tried does not matter, only how it fared. A move never tried
scores as a draw would. Exploration decays with experience: in a position met ``n`` times
the player moves at random with probability ``explore_c / (explore_c + n)``. The learner
plays itself and swaps sides every ``swap_every`` games: one side explores, the other
explores ``partner_explore`` times as much (0: plays its best).

The exported model maps the score to [-1, 1] piecewise linearly (a sure loss -1 -> -1,
a sure draw 10 -> 0, a sure win 100 -> 1, so the best move keeps the best value) after
pooling the tallies of the up to eight symmetric images of each position.

One kernel plays every game, through the walker the game asks for
(:mod:`gameai.trainer.walkers`). Games longer than ``cells`` plies (which an m,n,k game
never plays) weigh 1 like a game of ``cells`` plies: a morris game can last hundreds of
plies before the draw rule ends it, and a weight that kept shrinking would make long
drawn games count for nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np

from gameai.games import Game
from gameai.models import Model, ModelInfo
from gameai.trainer.learners.base import Params, require
from gameai.trainer.learners.export import POOLED_SECONDS, ExportShape
from gameai.trainer.learners.stores import claim
from gameai.trainer.learners.tabular import TabularLearner
from gameai.trainer.walkers.interface import (
    GO_ON,
    Moves,
    begin,
    exploring,
    finish,
    list_moves,
    move_result,
    move_row,
    mover,
    play,
    position_key,
)
from gameai.trainer.walkers.interface import WIN as _WON
from gameai.trainer.walkers.rng import below, greedy, uniform

WIN, DRAW, LOSS = 100.0, 10.0, -1.0  # seed 000's weights


@dataclass(frozen=True)
class TallyParams(Params):
    length_base: float = 2.0
    explore_c: float = 2.0
    explore_min: float = 0.1
    partner_explore: float = 0.5
    swap_every: int = 100
    credit: str = "greedy"  # or "all"
    exploring_starts: float = 1.0

    def check(self) -> None:
        require(self.length_base >= 1, "length_base", "at least 1")
        require(self.explore_c >= 0, "explore_c", "at least 0")
        require(0 <= self.explore_min <= 1, "explore_min", "between 0 and 1")
        require(0 <= self.partner_explore <= 1, "partner_explore", "between 0 and 1")
        require(self.swap_every >= 1, "swap_every", "at least 1")
        require(self.credit in ("greedy", "all"), "credit", "greedy or all")
        require(0 <= self.exploring_starts <= 1, "exploring_starts", "between 0 and 1")


def score_to_value(score: np.ndarray) -> np.ndarray:
    """Seed 000's score in [-1, 100] -> a model value in [-1, 1], monotone, draw -> 0."""
    return np.where(score >= DRAW, (score - DRAW) / (WIN - DRAW), (score - DRAW) / (DRAW - LOSS))


class TallyLearner(TabularLearner):
    algorithm = "tally"
    params_type = TallyParams
    params: TallyParams
    export_shape = ExportShape("a tally table", pooled=True, width=3, held=16,
                               seconds=POOLED_SECONDS["tally"])

    def __init__(self, game: Game, *, seed: int = 0, params: Params | None = None,
                 walker: str | None = None) -> None:
        super().__init__(game, seed=seed, params=params, walker=walker)
        self.table = self.walker.new_store({"n": (np.int64, (), 0)}, keys="positions",
                                           visits="n", per_move={"t": (np.float64, (3,), 0.0)})

    @property
    def exploration(self) -> float:
        """The exploring side's random-move probability in a position met once per game
        played so far, averaged over the table (a global summary of the per-position
        schedule)."""
        n = self.table.columns["n"][self.table.held()]
        c = self.params.explore_c
        return float(np.mean(c / (c + n))) if len(n) else 1.0

    def _run(self, games: int, played: int, stats: np.ndarray) -> None:
        p = self.params
        t = self.table
        _tally_games(self.walker.spec, t.compiled(), t.per_move("t"), t.columns["n"], self.rng,
                     games, played, np.array([p.length_base, p.explore_c, p.explore_min,
                                              p.partner_explore, p.swap_every,
                                              1.0 if p.credit == "greedy" else 0.0,
                                              self.start_share]), stats)

    def export(self, info: ModelInfo | None = None) -> Model:
        tallies = self.table.per_move("t")

        def finish(x_to_move: np.ndarray, pooled: np.ndarray) -> np.ndarray:
            xw, ow, draw = pooled[..., 0], pooled[..., 1], pooled[..., 2]
            win = np.where(x_to_move[:, None], xw, ow)
            loss = np.where(x_to_move[:, None], ow, xw)
            total = win + draw + loss
            with np.errstate(invalid="ignore", divide="ignore"):
                score = (WIN * win + DRAW * draw + LOSS * loss) / total
            return np.where(total > 0, score_to_value(score), np.nan)

        def nonempty(moves: Moves) -> np.ndarray:
            rows = moves.row
            return np.asarray(tallies[rows].reshape(len(rows), -1).any(axis=1), dtype=bool)

        shape = self.export_shape
        return self.walker.pooled_model(self.table, lambda moves: tallies[moves.row], finish,
                                        what=shape.what, width=shape.width, held=shape.held,
                                        seconds=shape.seconds, start=False,
                                        info=info or self.info(), nonempty=nonempty)

    def warm_start(self, model: Model) -> None:
        """One game's worth of pseudo-tallies per known move, with the model's score."""
        positions, rows, movers, values = self.walker.model_moves(model, self.table)
        known = ~np.isnan(values)
        v = np.nan_to_num(values, nan=0.0)
        win = np.where(known, np.maximum(v, 0.0), 0.0)
        loss = np.where(known, np.maximum(-v, 0.0), 0.0)
        draw = np.where(known, 1.0 - win - loss, 0.0)
        x_to_move = movers == 0
        self.table.per_move("t")[rows] = np.stack([np.where(x_to_move, win, loss),
                                                   np.where(x_to_move, loss, win), draw],
                                                  axis=-1)
        self.table.columns["n"][positions] = 1


@nb.njit(cache=True)
def _tally_games(walker: Any, store: Any, T: np.ndarray, N: np.ndarray, rng: np.ndarray,
                 games: int, played: int, p: np.ndarray, stats: np.ndarray) -> None:
    length_base, explore_c, explore_min, partner = p[0], p[1], p[2], p[3]
    swap_every, greedy_credit = int(p[4]), p[5] > 0.5
    moves = np.empty(walker.max_moves, dtype=np.int64)
    vals = np.empty(walker.max_moves, dtype=np.float64)
    slots = np.empty(walker.max_plies, dtype=np.int64)  # the position of each ply
    chosen = np.empty(walker.max_plies, dtype=np.int64)  # its move's row in T
    for g in range(games):
        explorer = ((played + g) // swap_every) & 1
        state = begin(walker, rng, p[6])
        winner = -1
        first_credited = 0
        ply = 0
        while True:
            who = mover(walker, state)
            n = list_moves(walker, state, moves)
            s = claim(store, position_key(walker, state))
            slots[ply] = s
            level = max(explore_min, explore_c / (explore_c + N[s]))
            if who != explorer:
                level *= partner
            if exploring(walker, state) or uniform(rng) < level:  # exploring start or not
                pick = below(rng, n)
                if greedy_credit:
                    first_credited = ply
            else:
                for j in range(n):
                    r = move_row(walker, state, s, moves, j)  # scalars, not a row's view:
                    total = T[r, 0] + T[r, 1] + T[r, 2]  # no reference to count a move
                    if total > 0:  # seed 000's relative weighted reward, mover's view
                        vals[j] = (WIN * T[r, who] + DRAW * T[r, 2] + LOSS * T[r, 1 - who]) \
                            / total
                    else:
                        vals[j] = DRAW
                pick = greedy(vals, n, rng)
            chosen[ply] = move_row(walker, state, s, moves, pick)
            result = move_result(walker, state, moves, pick)
            state = play(walker, state, moves, pick)
            if result != GO_ON:
                if result == _WON:
                    winner = who
                break
            ply += 1
        finish(walker, state)
        length = ply + 1
        reward = length_base ** max(0, walker.cells - length)
        column = winner if winner >= 0 else 2
        stats[3] += length
        stats[column] += 1
        for t in range(first_credited, length):
            T[chosen[t], column] += reward
            N[slots[t]] += 1
