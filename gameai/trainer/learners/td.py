"""Seeds 002 and 004: afterstate values learned by temporal differences.

Each afterstate (the board just after a move) has a value ``V``, the mover's chance of
winning, starting at 0.5 (seed 004's P-values). After every game the moves are replayed
backwards, player by player, and each afterstate is pulled towards the same player's next
one (seed 002's equation 2)::

    V(s) <- V(s) + alpha * (V(s') - V(s))

with the terminal value 1 for a win, ``draw_value`` for a draw and 0 for a loss. The step
``alpha = max(alpha_min, alpha0 / (1 + n) ** alpha_power)`` shrinks with each afterstate's
visit count ``n``, so values converge (seed 002's equation 3 holds down to ``alpha_min``).

Exploration is seed 002's Boltzmann choice among the afterstates, ``P ~ exp(V / tau)``,
with a temperature annealed from ``tau_start`` to ``tau_end`` (halving every
``tau_halflife`` games), or seed 004's epsilon-random moves (``explore=epsilon``); an
afterstate reached by a random move does not update the one before it, as Sutton advises
and seed 004 discusses. Values are shared by the up to eight symmetric images of a
position (seed 004's 825 canonical afterstates): the table is keyed by canonical key.

The exported model gives each move the value of its afterstate mapped to [-1, 1]
(0 loss -> -1, ``draw_value`` -> 0, 1 win -> 1).

One kernel plays every game, through the walker the game asks for
(:mod:`gameai.trainer.walkers`). A move that ends the game is worth 1 (a win) or
``draw_value`` (a drawn end, or a third occurrence under a draw rule), and its afterstate
is not learned. A game that starts inside (the position-graph walker's exploring start)
starts from an afterstate of the side not to move there, and that afterstate is learned
too: pulled towards that side's next afterstate in the game (or its result). Without
that, the afterstate of a move that good play has stopped making kept the value of the
games that tried it early on: on three-mens-morris, seeds 0 and 1,238,657,675 plateaued
at an optimal-move rate of 0.999195 (4 of 4,974 positions, the images of one: two moves
that win in time valued below two that draw) and never passed the gates' "perfect where
the solver can tell".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np

from gameai.games import Game
from gameai.models import Model, ModelInfo
from gameai.trainer.learners.base import Params, require
from gameai.trainer.learners.export import ExportShape
from gameai.trainer.learners.schedules import annealed
from gameai.trainer.learners.stores import claim, lookup
from gameai.trainer.learners.tabular import TabularLearner
from gameai.trainer.walkers.interface import (
    DRAW,
    GO_ON,
    WIN,
    Moves,
    afterstate_key,
    begin,
    exploring,
    finish,
    list_moves,
    move_result,
    mover,
    play,
    position_afterstate_key,
    starts_inside,
)
from gameai.trainer.walkers.rng import U64, below, greedy, uniform

_BOLTZMANN, _EPSILON = 0, 1


@dataclass(frozen=True)
class TdParams(Params):
    alpha0: float = 0.5
    alpha_power: float = 0.6
    alpha_min: float = 0.02
    draw_value: float = 0.5
    explore: str = "boltzmann"  # or "epsilon"
    tau_start: float = 0.3
    tau_end: float = 0.01
    tau_halflife: float = 2000.0
    epsilon_start: float = 0.3
    epsilon_end: float = 0.02
    epsilon_halflife: float = 2000.0
    exploring_starts: float = 0.5

    def check(self) -> None:
        require(0 < self.alpha0 <= 1, "alpha0", "in (0, 1]")
        require(self.alpha_power >= 0, "alpha_power", "at least 0")
        require(0 <= self.alpha_min <= self.alpha0, "alpha_min", "between 0 and alpha0")
        require(0 < self.draw_value < 1, "draw_value", "strictly between 0 (loss) and 1 (win)")
        require(self.explore in ("boltzmann", "epsilon"), "explore", "boltzmann or epsilon")
        require(0 < self.tau_end <= self.tau_start, "tau_end", "in (0, tau_start]")
        require(0 <= self.epsilon_end <= self.epsilon_start <= 1, "epsilon_start",
                "at least epsilon_end and at most 1")
        require(self.tau_halflife > 0, "tau_halflife", "positive")
        require(self.epsilon_halflife > 0, "epsilon_halflife", "positive")
        require(0 <= self.exploring_starts <= 1, "exploring_starts", "between 0 and 1")


class TdLearner(TabularLearner):
    algorithm = "td"
    params_type = TdParams
    params: TdParams
    symmetric = True  # seed 004: one value for the symmetric images of an afterstate
    export_shape = ExportShape("a td table")

    def __init__(self, game: Game, *, seed: int = 0, params: Params | None = None,
                 walker: str | None = None) -> None:
        super().__init__(game, seed=seed, params=params, walker=walker)
        self.table = self.walker.new_store({"v": (np.float64, (), 0.5),
                                            "n": (np.int64, (), 0)},
                                           keys="afterstates", visits="n")

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
        alpha = np.array([p.alpha0, p.alpha_power, p.alpha_min, p.draw_value])
        t = self.table
        _td_games(self.walker.spec, t.compiled(), t.columns["v"], t.columns["n"], self.rng,
                  games, played, _BOLTZMANN if boltz else _EPSILON, schedule, alpha,
                  self.start_share, stats)

    def export(self, info: ModelInfo | None = None) -> Model:
        d = self.params.draw_value
        V = self.table.columns["v"]

        def rows_of(moves: Moves) -> np.ndarray:
            slot = moves.afterstate
            v = np.where(slot >= 0, V[np.maximum(slot, 0)], np.nan)
            v = np.where(moves.result == WIN, 1.0, np.where(moves.result == DRAW, d, v))
            rows = np.where(v >= d, (v - d) / (1 - d), (v - d) / d)
            return np.where(moves.legal, rows, np.nan)

        return self.walker.afterstate_model(self.table, rows_of, what=self.export_shape.what,
                                            info=info or self.info())

    def warm_start(self, model: Model) -> None:
        """Seed each afterstate a model's move leads to with that move's value."""
        slots, values = self.walker.model_afterstates(model, self.table)
        d = self.params.draw_value
        self.table.columns["v"][slots] = np.where(values >= 0, d + values * (1 - d),
                                                  d + values * d)
        self.table.columns["n"][slots] = 1


@nb.njit(cache=True)
def _td_games(walker: Any, store: Any, V: np.ndarray, N: np.ndarray, rng: U64, games: int,
              played: int, mode: int, schedule: np.ndarray, alpha: np.ndarray, starts: float,
              stats: np.ndarray) -> None:
    moves = np.empty(walker.max_moves, dtype=np.int64)
    vals = np.empty(walker.max_moves, dtype=np.float64)
    weights = np.empty(walker.max_moves, dtype=np.float64)
    slots = np.empty(walker.max_plies, dtype=np.int64)  # afterstate of each ply (-1: the end)
    movers = np.empty(walker.max_plies, dtype=np.int8)
    random_move = np.zeros(walker.max_plies, dtype=np.bool_)  # not the policy's move
    alpha0, power, alpha_min, draw = alpha[0], alpha[1], alpha[2], alpha[3]
    for g in range(games):
        level = schedule[1] + (schedule[0] - schedule[1]) * 0.5 ** ((played + g) / schedule[2])
        state = begin(walker, rng, starts)
        first = -1  # a start inside the game: the afterstate of the side not to move there
        first_owner = 0
        if starts_inside(walker, state):
            first = claim(store, position_afterstate_key(walker, state))
            first_owner = 1 - mover(walker, state)
        winner = -1
        ply = 0
        while True:
            who = mover(walker, state)
            n = list_moves(walker, state, moves)
            random_move[ply] = exploring(walker, state)
            if random_move[ply]:
                pick = below(rng, n)
            else:
                best = -1.0
                for j in range(n):
                    result = move_result(walker, state, moves, j)
                    if result == WIN:
                        vals[j] = 1.0
                    elif result == DRAW:
                        vals[j] = draw
                    else:
                        s = lookup(store, afterstate_key(walker, state, moves, j))
                        vals[j] = V[s] if s >= 0 else 0.5
                    best = max(best, vals[j])
                pick = -1
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
            movers[ply] = who
            result = move_result(walker, state, moves, pick)
            if result == GO_ON:
                slots[ply] = claim(store, afterstate_key(walker, state, moves, pick))
            else:
                slots[ply] = -1
                if result == WIN:
                    winner = who
            state = play(walker, state, moves, pick)
            if result != GO_ON:
                break
            ply += 1
        last = ply
        finish(walker, state)
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
                s = slots[t]
                if s >= 0 and not (t + 2 <= last and random_move[t + 2]):
                    a = max(alpha_min, alpha0 / (1.0 + N[s]) ** power)
                    V[s] += a * (target - V[s])
                    N[s] += 1
                if s >= 0:
                    target = V[s]
                t -= 2
            if first >= 0 and player == first_owner and not (1 <= last and random_move[1]):
                a = max(alpha_min, alpha0 / (1.0 + N[first]) ** power)
                V[first] += a * (target - V[first])
                N[first] += 1
