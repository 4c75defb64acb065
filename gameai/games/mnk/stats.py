"""Seed 000's statistics ("The best opening move") for any game small enough to enumerate.

Games are complete move sequences from the empty board. Rather than playing them out
(four-in-a-row has about 1.5e13), they are counted by dynamic programming over the
canonical positions: the games below a position are the sum of the games below each of
its moves, and symmetric positions have equal counts.

A game is "stupid", as seed 000 defines it, when some move in it misses an immediate win,
or fails to stop the opponent's immediate win although it could have (a single threat; a
fork cannot be stopped, so letting it through is not stupid).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gameai.games import budget
from gameai.games.errors import TooLarge
from gameai.games.mnk import sizes
from gameai.games.mnk.board import Board, playable_masks
from gameai.games.mnk.geometry import Geometry
from gameai.games.mnk.keys import U64
from gameai.games.mnk.positions import (
    Layer,
    Positions,
    enumerate_positions,
    has_line_through,
)
from gameai.games.mnk.solver import score_layers

_U64_MAX = float(np.iinfo(np.uint64).max)
Counts = npt.NDArray[np.uint64]  # (positions, 3): x wins, o wins, draws


@dataclass(frozen=True)
class OpeningTables:
    x_wins: list[int]
    o_wins: list[int]
    draws: list[int]

    def as_dict(self) -> dict[str, list[int]]:
        return {"x_wins": self.x_wins, "o_wins": self.o_wins, "draws": self.draws}


def analyze(game: Geometry, *, limit: int | None = None) -> dict[str, Any]:
    """The statistics of every game of ``game``, in the JSON form of ``gameai analyze``.

    Raises:
        TooLarge: the game has too many positions to enumerate, or counts overflow 64 bits.
    """
    budget.require(sizes.analyze_estimate(game))
    positions = enumerate_positions(Board.empty(game), limit=limit)
    all_games = _count_games(positions, non_stupid=False)
    sensible = _count_games(positions, non_stupid=True)
    value = int(np.sign(score_layers(positions)[0][0]))
    total = all_games[0][0]
    opening_all = _by_opening(positions, all_games[1])
    opening_sensible = _by_opening(positions, sensible[1])
    return {
        "game": game.name,
        "positions": int(sum(positions.orbit_sizes(layer).sum() for layer in positions.layers)),
        "canonical_positions": positions.canonical_count,
        "games": {
            "total": int(total.sum()),
            "x_wins": int(total[0]),
            "o_wins": int(total[1]),
            "draws": int(total[2]),
        },
        "non_stupid_games": int(sensible[0][0].sum()),
        "by_opening": {"all": opening_all.as_dict(), "non_stupid": opening_sensible.as_dict()},
        "reward_table": [
            100 * xw + 10 * d - ow
            for xw, ow, d in zip(opening_all.x_wins, opening_all.o_wins, opening_all.draws,
                                 strict=True)
        ],
        "value": value,
    }


def _count_games(positions: Positions, *, non_stupid: bool) -> list[Counts]:
    """Per layer, the (x wins, o wins, draws) game counts below each canonical position."""
    game = positions.game
    counts: list[Counts] = [np.zeros((0, 3), np.uint64)] * len(positions.layers)
    for d in range(len(positions.layers) - 1, -1, -1):
        layer = positions.layers[d]
        ply = positions.root_ply + d
        c = np.zeros((len(layer), 3), dtype=np.uint64)
        winner_column = 0 if ply % 2 == 1 else 1  # X made the odd plies
        c[layer.won, winner_column] = 1
        c[layer.over & ~layer.won, 2] = 1
        live = np.flatnonzero(~layer.over)
        if len(live) and d + 1 < len(positions.layers):
            allowed = layer.children[live] >= 0
            if non_stupid:
                allowed &= ~_stupid_moves(game, layer, live, x_to_move=ply % 2 == 0)
            below = counts[d + 1]
            check = np.zeros(len(live))
            for cell in range(game.cells):
                sel = allowed[:, cell]
                if sel.any():
                    child = below[layer.children[live[sel], cell]]
                    c[live[sel]] += child
                    check[sel] += child.sum(axis=1).astype(float)
            if check.size and check.max() >= _U64_MAX / 2:
                raise TooLarge(f"{game.name} has too many games to count in 64 bits")
        counts[d] = c
    return counts


def _stupid_moves(game: Geometry, layer: Layer, live: npt.NDArray[np.intp], *,
                  x_to_move: bool) -> npt.NDArray[np.bool_]:
    """``(len(live), cells)``: True where a legal move is stupid in seed 000's sense."""
    x, o = layer.x[live], layer.o[live]
    me, opp = (x, o) if x_to_move else (o, x)
    occupied = x | o
    playable = playable_masks(game, occupied)
    my_wins = _winning_cells(game, me, playable)
    opp_wins_anywhere = _winning_cells(game, opp, np.uint64(game.full_mask) & ~occupied)
    zero = np.uint64(0)
    leaves_threat = np.zeros((len(live), game.cells), dtype=bool)
    for cell in range(game.cells):
        bit = np.uint64(1 << cell)
        above = np.uint64(1 << (cell - game.cols)) if game.gravity and cell >= game.cols else zero
        still = (playable & ~bit) | above
        leaves_threat[:, cell] = (opp_wins_anywhere & still) != zero
    legal, is_win = _cell_flags(playable, game.cells), _cell_flags(my_wins, game.cells)
    can_win = np.asarray(my_wins != zero)[:, None]
    can_stop = np.any(legal & ~leaves_threat, axis=1, keepdims=True)
    missed_win = can_win & ~is_win
    let_through = ~can_win & leaves_threat & can_stop
    return legal & (missed_win | let_through)


def _cell_flags(masks: U64, cells: int) -> npt.NDArray[np.bool_]:
    """``(len(masks), cells)`` booleans: bit ``c`` of each mask."""
    shifts = np.arange(cells, dtype=np.uint64)
    return ((masks[:, None] >> shifts) & np.uint64(1)).astype(bool)


def _winning_cells(game: Geometry, mine: U64, candidates: U64) -> U64:
    """The cells among ``candidates`` where a piece would complete one of ``mine``'s lines."""
    out = np.zeros(mine.shape, dtype=np.uint64)
    for cell in range(game.cells):
        bit = np.uint64(1 << cell)
        hit = has_line_through(game, mine | bit, cell)
        out |= np.where(hit & ((candidates & bit) != 0), bit, np.uint64(0))
    return out


def _by_opening(positions: Positions, first_layer_counts: Counts) -> OpeningTables:
    """Per opening cell (row-major), the games that open there, by result."""
    root = positions.layers[0]
    cells = positions.game.cells
    per_cell = np.zeros((cells, 3), dtype=np.uint64)
    for cell in range(cells):
        child = root.children[0, cell]
        if child >= 0:
            per_cell[cell] = first_layer_counts[child]
    return OpeningTables(*(per_cell[:, i].astype(int).tolist() for i in range(3)))
