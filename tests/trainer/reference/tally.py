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
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from gameai.models import Model, ModelInfo
from gameai.trainer.learners.base import Params, require
from gameai.trainer.learners.export import POOLED_SECONDS, boards_of, stream_pooled
from gameai.trainer.learners.hashtable import HashTable, insert
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


class TallyLearner(CellLearner):
    algorithm = "tally"
    params_type = TallyParams
    params: TallyParams

    def _new_table(self) -> HashTable:
        cells = self.game.cells
        return HashTable({"t": (np.float64, (cells, 3), 0.0), "n": (np.int64, (), 0)})

    @property
    def exploration(self) -> float:
        """The exploring side's random-move probability in a position met once per game
        played so far, averaged over the table (a global summary of the per-position
        schedule)."""
        n = self.table.columns["n"][self.table.slots()]
        c = self.params.explore_c
        return float(np.mean(c / (c + n))) if len(n) else 1.0

    def _run(self, games: int, played: int, stats: np.ndarray) -> None:
        p = self.params
        t = self.table
        _tally_games(self.spec, t.keys, t.used, t.columns["t"], t.columns["n"], self.rng,
                     games, played, np.array([p.length_base, p.explore_c, p.explore_min,
                                              p.partner_explore, p.swap_every,
                                              1.0 if p.credit == "greedy" else 0.0,
                                              p.exploring_starts]), stats)

    def export(self, info: ModelInfo | None = None) -> Model:
        slots = self.table.slots()
        tallies = self.table.columns["t"]

        def finish(keys: np.ndarray, pooled: np.ndarray) -> np.ndarray:
            x, o = boards_of(self.game, keys)
            x_to_move = np.bitwise_count(x) == np.bitwise_count(o)
            xw, ow, draw = pooled[..., 0], pooled[..., 1], pooled[..., 2]
            win = np.where(x_to_move[:, None], xw, ow)
            loss = np.where(x_to_move[:, None], ow, xw)
            total = win + draw + loss
            with np.errstate(invalid="ignore", divide="ignore"):
                score = (WIN * win + DRAW * draw + LOSS * loss) / total
            return np.where(total > 0, score_to_value(score), np.nan)

        keys, rows = stream_pooled(self.game, self.table.keys[slots],
                                   lambda entries: tallies[slots[entries]], finish,
                                   what="a tally table", held=16, width=3,
                                   seconds_per_entry_cell=POOLED_SECONDS["tally"],
                                   nonempty=lambda entries: np.asarray(
                                       tallies[slots[entries]].reshape(len(entries), -1)
                                       .any(axis=1), dtype=bool))
        return self.sorted_table_model(keys, rows, info)

    def warm_start(self, model: Model) -> None:
        """One game's worth of pseudo-tallies per known move, with the model's score."""
        from gameai.models import TableModel

        if not isinstance(model, TableModel):
            raise ValueError("warm start needs a table model")
        x, o = boards_of(self.game, model.keys)
        x_to_move = np.bitwise_count(x) == np.bitwise_count(o)
        v = np.nan_to_num(model.values.astype(np.float64), nan=0.0)
        known = ~np.isnan(model.values)
        win = np.where(known, np.maximum(v, 0.0), 0.0)
        loss = np.where(known, np.maximum(-v, 0.0), 0.0)
        draw = np.where(known, 1.0 - win - loss, 0.0)
        tallies = np.stack([np.where(x_to_move[:, None], win, loss),
                            np.where(x_to_move[:, None], loss, win), draw], axis=-1)
        self.table.reserve(len(model.keys))
        for key, row in zip(model.keys.tolist(), tallies, strict=True):
            slot = insert(self.table.keys, self.table.used, np.uint64(key))
            self.table.columns["t"][slot] = row
            self.table.columns["n"][slot] = 1


@nb.njit(cache=True)
def _tally_games(spec: Spec, keys: np.ndarray, used: np.ndarray, T: np.ndarray,
                 N: np.ndarray, rng: np.ndarray, games: int, played: int,
                 p: np.ndarray, stats: np.ndarray) -> None:
    cells = spec.cells
    length_base, explore_c, explore_min, partner = p[0], p[1], p[2], p[3]
    swap_every, greedy_credit = int(p[4]), p[5] > 0.5
    moves = np.empty(cells, dtype=np.int64)
    slots = np.empty(cells, dtype=np.int64)
    chosen = np.empty(cells, dtype=np.int64)
    vals = np.empty(cells, dtype=np.float64)
    for g in range(games):
        explorer = ((played + g) // swap_every) & 1
        x = np.uint64(0)
        o = np.uint64(0)
        key = np.uint64(0)
        winner = -1
        last = 0
        first_credited = 0
        opening = random_opening(rng, p[6], cells)
        for ply in range(cells):
            mover = ply & 1
            n = list_moves(spec, x | o, moves)
            s = insert(keys, used, key)
            slots[ply] = s
            level = max(explore_min, explore_c / (explore_c + N[s]))
            if mover != explorer:
                level *= partner
            if ply < opening or uniform(rng) < level:  # an exploring start, or exploration
                pick = min(int(uniform(rng) * n), n - 1)
                if greedy_credit:
                    first_credited = ply
            else:
                for j in range(n):
                    row = T[s, moves[j]]
                    total = row[0] + row[1] + row[2]
                    if total > 0:  # seed 000's relative weighted reward, mover's view
                        vals[j] = (WIN * row[mover] + DRAW * row[2] + LOSS * row[1 - mover]) \
                            / total
                    else:
                        vals[j] = DRAW
                pick = greedy(vals, n, rng)
            cell = moves[pick]
            chosen[ply] = cell
            last = ply
            x, o = place(x, o, mover, cell)
            key = child_raw(spec, key, cell, mover)
            if completes_line(spec, x if mover == 0 else o, cell):
                winner = mover
                break
            if (x | o) == spec.full:
                break
        length = last + 1
        reward = length_base ** (cells - length)
        column = winner if winner >= 0 else 2
        stats[3] += length
        stats[column] += 1
        for t in range(first_credited, length):
            T[slots[t], chosen[t], column] += reward
            N[slots[t]] += 1
