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
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from gameai.games import budget
from gameai.games.mnk.game import as_mnk
from gameai.games.mnk.keys import U64, canonical_keys
from gameai.models import Model, ModelInfo
from gameai.trainer.learners.base import Params, require
from gameai.trainer.learners.export import (
    boards_of,
    children_of,
    expand,
    export_estimate,
    stream_rows,
    table_keys,
)
from gameai.trainer.learners.hashtable import HashTable, find, insert
from gameai.trainer.learners.schedules import annealed
from tests.trainer.reference.base import CellLearner
from tests.trainer.reference.bitboard import (
    Spec,
    below,
    child_canonical,
    completes_line,
    greedy,
    list_moves,
    place,
    play_keys,
    random_opening,
    reset_keys,
    uniform,
)

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


class TdLearner(CellLearner):
    algorithm = "td"
    params_type = TdParams
    params: TdParams

    def _new_table(self) -> HashTable:
        return HashTable({"v": (np.float64, (), 0.5), "n": (np.int64, (), 0)})

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
        _td_games(self.spec, t.keys, t.used, t.columns["v"], t.columns["n"], self.rng, games,
                  played, _BOLTZMANN if boltz else _EPSILON, schedule, alpha,
                  p.exploring_starts, stats)

    def export(self, info: ModelInfo | None = None) -> Model:
        entries = len(self.table) + 1
        budget.require(export_estimate(self.game, "a td table", entries=entries, rows=entries,
                                       held=8 + self.table.capacity // entries))
        d = self.params.draw_value

        def rows_of(keys: U64) -> np.ndarray:
            kids, found = children_of(self.game, self.table, keys, canonical=True)
            v = np.where(found >= 0, self.table.columns["v"][np.maximum(found, 0)], np.nan)
            v = np.where(kids.won, 1.0, np.where(kids.full, d, v))
            rows = np.where(v >= d, (v - d) / (1 - d), (v - d) / d)
            return np.where(kids.legal, rows, np.nan)

        keys, rows = stream_rows(table_keys(self.table), self.game.cells, rows_of)
        return self.sorted_table_model(keys, rows, info)

    def warm_start(self, model: Model) -> None:
        """Seed each known afterstate with the model's value of the move that makes it."""
        keys, values = _model_afterstates(model)
        d = self.params.draw_value
        v = np.where(values >= 0, d + values * (1 - d), d + values * d)
        self.table.reserve(len(keys))
        for key, value in zip(keys.tolist(), v.tolist(), strict=True):
            slot = insert(self.table.keys, self.table.used, np.uint64(key))
            self.table.columns["v"][slot] = value
            self.table.columns["n"][slot] = 1


def _model_afterstates(model: Model) -> tuple[U64, np.ndarray]:
    """Canonical keys of the non-terminal afterstates a model values, with those values."""
    from gameai.models import TableModel

    if not isinstance(model, TableModel):
        raise ValueError("warm start needs a table model")
    game = as_mnk(model.game)
    x, o = boards_of(game, model.keys)
    kids = expand(game, x, o)
    live = kids.legal & ~kids.terminal & ~np.isnan(model.values)
    ckeys = canonical_keys(game, kids.x[live], kids.o[live])
    unique, first = np.unique(ckeys, return_index=True)
    return unique, model.values[live][first].astype(np.float64)


@nb.njit(cache=True)
def _td_games(spec: Spec, keys: U64, used: np.ndarray, V: np.ndarray, N: np.ndarray,
              rng: U64, games: int, played: int, mode: int, schedule: np.ndarray,
              alpha: np.ndarray, starts: float, stats: np.ndarray) -> None:
    cells = spec.cells
    sym_keys = np.zeros(spec.pow3.shape[0], dtype=np.uint64)
    moves = np.empty(cells, dtype=np.int64)
    vals = np.empty(cells, dtype=np.float64)
    weights = np.empty(cells, dtype=np.float64)
    slots = np.empty(cells, dtype=np.int64)  # afterstate of each ply (-1: terminal)
    random_move = np.zeros(cells, dtype=np.bool_)
    alpha0, power, alpha_min, draw = alpha[0], alpha[1], alpha[2], alpha[3]
    for g in range(games):
        level = schedule[1] + (schedule[0] - schedule[1]) * 0.5 ** ((played + g) / schedule[2])
        reset_keys(sym_keys)
        x = np.uint64(0)
        o = np.uint64(0)
        winner = -1
        last = 0
        opening = random_opening(rng, starts, cells)
        for ply in range(cells):
            mover = ply & 1
            mine = x if mover == 0 else o
            n = list_moves(spec, x | o, moves)
            random_move[ply] = ply < opening  # an exploring start's move is not the policy's
            if ply < opening:
                pick = below(rng, n)
            else:
                best = -1.0
                for j in range(n):
                    bit = np.uint64(1) << np.uint64(moves[j])
                    if completes_line(spec, mine | bit, moves[j]):
                        vals[j] = 1.0
                    elif (x | o | bit) == spec.full:
                        vals[j] = draw
                    else:
                        s = find(keys, child_canonical(spec, sym_keys, moves[j], mover))
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
            cell = moves[pick]
            x, o = place(x, o, mover, cell)
            last = ply
            if completes_line(spec, (x if mover == 0 else o), cell):
                winner = mover
                slots[ply] = -1
                break
            if (x | o) == spec.full:
                slots[ply] = -1
                break
            slots[ply] = insert(keys, used, child_canonical(spec, sym_keys, cell, mover))
            play_keys(spec, sym_keys, cell, mover)
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
            t = last if (last & 1) == player else last - 1
            while t >= 0:
                s = slots[t]
                if s >= 0 and not (t + 2 <= last and random_move[t + 2]):
                    a = max(alpha_min, alpha0 / (1.0 + N[s]) ** power)
                    V[s] += a * (target - V[s])
                    N[s] += 1
                if s >= 0:
                    target = V[s]
                t -= 2
