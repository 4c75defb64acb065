"""Seed 003: state values by base-3 key with visit counts, the Bellman update, epsilon-greedy.

Two agents, X and O, each value every state from its own side (seed 003's
``FitnessDict``), keyed by the seed's base-3 integer (no symmetry) with a visit count.
Every transition ``s -> s'`` of a game, the agent's own moves and the opponent's alike,
updates both agents' value of ``s`` with ``alpha = 1 / N(s)``::

    V(s) <- V(s) + alpha * (-1 + gamma * V(s') - V(s))      (game goes on: step reward -1)
    V(s) <- V(s) + alpha * (R - V(s))                        (s' ends the game)

with ``R`` = win 10, draw 2, loss -30 and ``gamma`` = 0.9 (the seed's values). The mover
picks the next state of highest value to it, a state never seen being worth 0 and a final
state its reward, or with probability epsilon a random one (annealed from
``epsilon_start`` to ``epsilon_end``). With ``opponent=random`` each game pits one
epsilon-greedy agent against random moves, alternating who starts (the seed's training).

The exported model gives each move the value of the state it leads to, averaged over the
symmetric images weighted by visits, mapped piecewise linearly to [-1, 1] (loss -30 -> -1,
draw 2 -> 0, win 10 -> 1).

One kernel plays every game, through the walker the game asks for
(:mod:`gameai.trainer.walkers`); a move to a position's third occurrence (a draw rule)
ends the game as a draw and is rewarded as one.
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
from gameai.trainer.learners.schedules import annealed
from gameai.trainer.learners.stores import claim, lookup
from gameai.trainer.learners.tabular import TabularLearner
from gameai.trainer.walkers.interface import (
    DRAW,
    GO_ON,
    WIN,
    Moves,
    begin,
    child_key,
    exploring,
    finish,
    list_moves,
    move_result,
    mover,
    play,
    position_key,
)
from gameai.trainer.walkers.rng import below, greedy, uniform


@dataclass(frozen=True)
class QParams(Params):
    gamma: float = 0.9
    win: float = 10.0
    draw: float = 2.0
    loss: float = -30.0
    step: float = -1.0
    epsilon_start: float = 0.5
    epsilon_end: float = 0.05
    epsilon_halflife: float = 3000.0
    opponent: str = "self"  # or "random"
    exploring_starts: float = 0.5

    def check(self) -> None:
        require(0 < self.gamma <= 1, "gamma", "in (0, 1]")
        require(self.loss < self.draw < self.win, "draw", "between loss and win")
        require(self.step <= 0, "step", "at most 0 (a cost per move)")
        require(0 <= self.epsilon_end <= self.epsilon_start <= 1, "epsilon_start",
                "at least epsilon_end and at most 1")
        require(self.epsilon_halflife > 0, "epsilon_halflife", "positive")
        require(self.opponent in ("self", "random"), "opponent", "self or random")
        require(0 <= self.exploring_starts <= 1, "exploring_starts", "between 0 and 1")

    def to_value(self, v: np.ndarray) -> np.ndarray:
        """State value -> model value: loss -> -1, draw -> 0, win -> 1, monotone."""
        return np.where(v >= self.draw, (v - self.draw) / (self.win - self.draw),
                        (v - self.draw) / (self.draw - self.loss))

    def from_value(self, value: np.ndarray) -> np.ndarray:
        return np.where(value >= 0, self.draw + value * (self.win - self.draw),
                        self.draw + value * (self.draw - self.loss))


class QLearner(TabularLearner):
    algorithm = "qlearning"
    params_type = QParams
    params: QParams
    export_shape = ExportShape("a qlearning table", pooled=True, width=2, held=8,
                               seconds=POOLED_SECONDS["qlearning"])

    def __init__(self, game: Game, *, seed: int = 0, params: Params | None = None,
                 walker: str | None = None) -> None:
        super().__init__(game, seed=seed, params=params, walker=walker)
        self.table = self.walker.new_store({"v": (np.float64, (2,), 0.0),
                                            "n": (np.int64, (), 0)},
                                           keys="positions", visits="n")

    @property
    def exploration(self) -> float:
        p = self.params
        return annealed(p.epsilon_start, p.epsilon_end, p.epsilon_halflife, self.games_played)

    def _run(self, games: int, played: int, stats: np.ndarray) -> None:
        p = self.params
        rewards = np.array([p.win, p.draw, p.loss, p.step, p.gamma, p.epsilon_start,
                            p.epsilon_end, p.epsilon_halflife,
                            1.0 if p.opponent == "random" else 0.0, self.start_share])
        t = self.table
        _q_games(self.walker.spec, t.compiled(), t.columns["v"], t.columns["n"], self.rng,
                 games, played, rewards, stats)

    def export(self, info: ModelInfo | None = None) -> Model:
        p = self.params
        V, N = self.table.columns["v"], self.table.columns["n"]

        def sums_of(moves: Moves) -> np.ndarray:
            slot = np.maximum(moves.child, 0)
            v = V[slot, moves.mover]
            weight = np.where(moves.child >= 0, N[slot], 0)
            v = np.where(moves.result == WIN, p.win, np.where(moves.result == DRAW, p.draw, v))
            weight = np.where(moves.result != GO_ON, 1, weight) * moves.legal
            return np.stack([np.where(weight > 0, v * weight, 0.0), weight],
                            axis=-1).astype(np.float64)

        def finish(x_to_move: np.ndarray, sums: np.ndarray) -> np.ndarray:
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = sums[..., 0] / sums[..., 1]
            return np.where(sums[..., 1] > 0, p.to_value(mean), np.nan)

        shape = self.export_shape
        return self.walker.pooled_model(self.table, sums_of, finish, what=shape.what,
                                        width=shape.width, held=shape.held, seconds=shape.seconds,
                                        start=True, info=info or self.info())

    def warm_start(self, model: Model) -> None:
        """Each position a model's move leads to gets the model's value for its mover and
        the negated value for the other side, with one visit; the model's positions are
        claimed, so that an export finds them."""
        _, children, movers, values = self.walker.model_successors(model, self.table)
        V, p = self.table.columns["v"], self.params
        V[children, movers] = p.from_value(values)
        V[children, 1 - movers] = p.from_value(-values)
        self.table.columns["n"][children] = 1


@nb.njit(cache=True)
def _q_games(walker: Any, store: Any, V: np.ndarray, N: np.ndarray, rng: np.ndarray,
             games: int, played: int, p: np.ndarray, stats: np.ndarray) -> None:
    win, draw, loss, step, gamma = p[0], p[1], p[2], p[3], p[4]
    random_opponent = p[8] > 0.5
    moves = np.empty(walker.max_moves, dtype=np.int64)
    vals = np.empty(walker.max_moves, dtype=np.float64)
    for g in range(games):
        epsilon = p[6] + (p[5] - p[6]) * 0.5 ** ((played + g) / p[7])
        agent = (played + g) & 1  # with a random opponent: the side that learns to play
        state = begin(walker, rng, p[9])
        s = claim(store, position_key(walker, state))
        ply = 0
        while True:
            who = mover(walker, state)
            n = list_moves(walker, state, moves)
            if exploring(walker, state) or (random_opponent and who != agent) \
                    or uniform(rng) < epsilon:
                pick = below(rng, n)
            else:
                for j in range(n):
                    result = move_result(walker, state, moves, j)
                    if result == WIN:
                        vals[j] = win
                    elif result == DRAW:
                        vals[j] = draw
                    else:
                        t = lookup(store, child_key(walker, state, moves, j))
                        vals[j] = V[t, who] if t >= 0 else 0.0
                pick = greedy(vals, n, rng)
            result = move_result(walker, state, moves, pick)
            key = child_key(walker, state, moves, pick)
            state = play(walker, state, moves, pick)
            N[s] += 1
            alpha = 1.0 / N[s]
            if result == WIN:
                V[s, who] += alpha * (win - V[s, who])
                V[s, 1 - who] += alpha * (loss - V[s, 1 - who])
                stats[who] += 1
                break
            if result == DRAW:
                V[s, 0] += alpha * (draw - V[s, 0])
                V[s, 1] += alpha * (draw - V[s, 1])
                stats[2] += 1
                break
            t = claim(store, key)
            for side in range(2):
                V[s, side] += alpha * (step + gamma * V[t, side] - V[s, side])
            s = t
            ply += 1
        stats[3] += ply + 1
        finish(walker, state)
