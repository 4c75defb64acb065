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
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from gameai.games.mnk.keys import base3_keys
from gameai.models import Model, ModelInfo
from gameai.trainer.learners.base import Params, require
from gameai.trainer.learners.export import (
    POOLED_SECONDS,
    boards_of,
    children_of,
    expand,
    stream_pooled,
    table_keys,
)
from gameai.trainer.learners.hashtable import HashTable, find, insert
from gameai.trainer.learners.schedules import annealed
from tests.trainer.reference.base import CellLearner
from tests.trainer.reference.bitboard import (
    Spec,
    child_raw,
    completes_line,
    greedy,
    list_moves,
    place,
    random_opening,
    uniform,
)


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


class QLearner(CellLearner):
    algorithm = "qlearning"
    params_type = QParams
    params: QParams

    def _new_table(self) -> HashTable:
        return HashTable({"v": (np.float64, (2,), 0.0), "n": (np.int64, (), 0)})

    @property
    def exploration(self) -> float:
        p = self.params
        return annealed(p.epsilon_start, p.epsilon_end, p.epsilon_halflife, self.games_played)

    def _run(self, games: int, played: int, stats: np.ndarray) -> None:
        p = self.params
        rewards = np.array([p.win, p.draw, p.loss, p.step, p.gamma, p.epsilon_start,
                            p.epsilon_end, p.epsilon_halflife,
                            1.0 if p.opponent == "random" else 0.0, p.exploring_starts])
        t = self.table
        _q_games(self.spec, t.keys, t.used, t.columns["v"], t.columns["n"], self.rng, games,
                 played, rewards, stats)

    def export(self, info: ModelInfo | None = None) -> Model:
        p = self.params
        raw = table_keys(self.table)

        def sums_of(entries: np.ndarray) -> np.ndarray:
            kids, found = children_of(self.game, self.table, raw[entries], canonical=False)
            mover = np.where(kids.x_to_move, 0, 1)[:, None]
            stored = self.table.columns["v"][np.maximum(found, 0)]
            v = np.take_along_axis(stored, np.broadcast_to(mover, found.shape)[..., None],
                                   axis=2)[..., 0]
            weight = np.where(found >= 0, self.table.columns["n"][np.maximum(found, 0)], 0)
            v = np.where(kids.won, p.win, np.where(kids.full, p.draw, v))
            weight = np.where(kids.terminal, 1, weight) * kids.legal
            return np.stack([np.where(weight > 0, v * weight, 0.0), weight],
                            axis=-1).astype(np.float64)

        def finish(keys: np.ndarray, sums: np.ndarray) -> np.ndarray:
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = sums[..., 0] / sums[..., 1]
            return np.where(sums[..., 1] > 0, p.to_value(mean), np.nan)

        keys, rows = stream_pooled(self.game, raw, sums_of, finish, what="a qlearning table",
                                   held=8, width=2,
                                   seconds_per_entry_cell=POOLED_SECONDS["qlearning"])
        return self.sorted_table_model(keys, rows, info)

    def warm_start(self, model: Model) -> None:
        """Each state a model's move leads to (from the position in its canonical
        orientation, whose raw key is its canonical key) gets the model's value for its
        mover and the negated value for the other side, with one visit."""
        from gameai.models import TableModel

        if not isinstance(model, TableModel):
            raise ValueError("warm start needs a table model")
        x, o = boards_of(self.game, model.keys)
        kids = expand(self.game, x, o)
        live = kids.legal & ~kids.terminal & ~np.isnan(model.values)
        keys = base3_keys(self.game, kids.x[live], kids.o[live])
        value = model.values[live].astype(np.float64)
        mover = np.broadcast_to(np.where(kids.x_to_move, 0, 1)[:, None], live.shape)[live]
        self.table.reserve(len(keys) + len(model.keys))
        for key in model.keys.tolist():  # the positions themselves, so export finds them
            insert(self.table.keys, self.table.used, np.uint64(key))
        p = self.params
        for key, val, side in zip(keys.tolist(), value.tolist(), mover.tolist(), strict=True):
            slot = insert(self.table.keys, self.table.used, np.uint64(key))
            self.table.columns["v"][slot, side] = p.from_value(np.array(val))
            self.table.columns["v"][slot, 1 - side] = p.from_value(np.array(-val))
            self.table.columns["n"][slot] = 1


@nb.njit(cache=True)
def _q_games(spec: Spec, keys: np.ndarray, used: np.ndarray, V: np.ndarray, N: np.ndarray,
             rng: np.ndarray, games: int, played: int, p: np.ndarray,
             stats: np.ndarray) -> None:
    cells = spec.cells
    win, draw, loss, step, gamma = p[0], p[1], p[2], p[3], p[4]
    random_opponent = p[8] > 0.5
    moves = np.empty(cells, dtype=np.int64)
    vals = np.empty(cells, dtype=np.float64)
    for g in range(games):
        epsilon = p[6] + (p[5] - p[6]) * 0.5 ** ((played + g) / p[7])
        agent = (played + g) & 1  # with a random opponent: the side that learns to play
        x = np.uint64(0)
        o = np.uint64(0)
        key = np.uint64(0)
        s = insert(keys, used, key)
        opening = random_opening(rng, p[9], cells)
        for ply in range(cells):
            mover = ply & 1
            mine = x if mover == 0 else o
            n = list_moves(spec, x | o, moves)
            if ply < opening or (random_opponent and mover != agent) or uniform(rng) < epsilon:
                pick = min(int(uniform(rng) * n), n - 1)
            else:
                for j in range(n):
                    bit = np.uint64(1) << np.uint64(moves[j])
                    if completes_line(spec, mine | bit, moves[j]):
                        vals[j] = win
                    elif (x | o | bit) == spec.full:
                        vals[j] = draw
                    else:
                        t = find(keys, child_raw(spec, key, moves[j], mover))
                        vals[j] = V[t, mover] if t >= 0 else 0.0
                pick = greedy(vals, n, rng)
            cell = moves[pick]
            x, o = place(x, o, mover, cell)
            key = child_raw(spec, key, cell, mover)
            N[s] += 1
            alpha = 1.0 / N[s]
            if completes_line(spec, x if mover == 0 else o, cell):
                V[s, mover] += alpha * (win - V[s, mover])
                V[s, 1 - mover] += alpha * (loss - V[s, 1 - mover])
                stats[mover] += 1
                stats[3] += ply + 1
                break
            if (x | o) == spec.full:
                V[s, 0] += alpha * (draw - V[s, 0])
                V[s, 1] += alpha * (draw - V[s, 1])
                stats[2] += 1
                stats[3] += ply + 1
                break
            t = insert(keys, used, key)
            for side in range(2):
                V[s, side] += alpha * (step + gamma * V[t, side] - V[s, side])
            s = t
