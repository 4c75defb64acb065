"""How big a layered enumeration of an m,n,k game will be, estimated before it starts.

The number of boards with ``d`` pieces and the right counts is exact combinatorics
(``C(cells, d) * C(d, ceil(d/2))``, or the column heights that sum to ``d`` under gravity);
the share of them a game actually reaches (nobody has won before the last move) is
measured on a seeded sample of such boards, layer by layer. Divided by the number of
symmetries this is the number of canonical positions within a few percent
(``tests/games/test_budget.py`` holds it against the enumeration), in milliseconds, for a
game whose enumeration would take hours.

The memory model is measured (``tracemalloc``) on the enumeration of
:mod:`gameai.games.mnk.positions` and the backward pass of :mod:`gameai.games.mnk.solver`: each
layer holds ``HELD + 4 * cells`` bytes a position (keys, boards, flags, the children
index), an expansion briefly needs :func:`candidate_bytes` for each child it generates,
and the whole-game table adds ``TABLE_EXTRA`` a position while it is sorted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from gameai.games.budget import Estimate
from gameai.games.errors import TooLarge
from gameai.games.mnk.geometry import Geometry

SAMPLES = 4096  # boards sampled per layer
HELD = 26  # bytes a held position takes beyond its children index (keys, x, o, won, over)
TABLE_EXTRA = 46  # bytes a position while the whole-game table is concatenated and sorted
ANALYZE_EXTRA = 64  # bytes a position for gameai analyze's game counts (measured: 33-62)
SECONDS_PER_POSITION = (0.4e-6, 0.2e-6)  # a + b * symmetries, one core, measured unloaded


@dataclass(frozen=True)
class Layers:
    """Estimated canonical positions per layer (plies from the empty board), how many of
    them are live (not over), and the legal moves of a live one on average."""

    positions: npt.NDArray[np.float64]
    live: npt.NDArray[np.float64]
    moves: npt.NDArray[np.float64]

    @property
    def total(self) -> int:
        return round(float(self.positions.sum()))


def held_bytes(game: Geometry) -> int:
    """Bytes a position of a held layer takes."""
    return HELD + 4 * game.cells


def candidate_bytes(game: Geometry) -> int:
    """Bytes an expansion needs for each child it generates, while it runs (measured:
    122 for boards of two bytes a mask, 143 for three)."""
    return 80 + 21 * ((game.cells + 7) // 8)


def solve_estimate(game: Geometry) -> Estimate:
    """Memory and time of enumerating and solving the whole of ``game``.

    Raises:
        TooLarge: the board has more than 40 cells: no position table can hold its keys,
            whatever the memory.
    """
    from gameai.games.mnk.keys import MAX_VECTOR_CELLS

    if game.cells > MAX_VECTOR_CELLS:
        raise TooLarge(f"{game.name} has {game.cells} cells; position tables handle at most "
                       f"{MAX_VECTOR_CELLS} (a base-3 key must fit in 64 bits), whatever "
                       "the memory")
    layers = estimate_layers(game)
    held = held_bytes(game)
    peak, kept = 0.0, 0.0
    for d in range(len(layers.positions)):
        kept += layers.positions[d] * held
        expansion = layers.live[d] * layers.moves[d] * candidate_bytes(game)
        peak = max(peak, kept + expansion)
    peak = max(peak, kept + layers.total * TABLE_EXTRA)
    a, b = SECONDS_PER_POSITION
    seconds = layers.total * (a + b * len(game.symmetries))
    return Estimate(f"solving the whole of {game.name}", int(peak), seconds, layers.total)


def analyze_estimate(game: Geometry) -> Estimate:
    """Memory and time of ``gameai analyze``: the solve and the game counts of every
    position (all games, and those without stupid moves)."""
    solve = solve_estimate(game)
    positions = solve.positions or 0
    return Estimate(f"analysing the whole of {game.name}",
                    solve.bytes + positions * ANALYZE_EXTRA, (solve.seconds or 0.0) * 3,
                    positions)


@lru_cache(maxsize=32)
def estimate_layers(game: Geometry, *, samples: int = SAMPLES, seed: int = 0) -> Layers:
    """:class:`Layers` of ``game`` from a seeded sample of boards per layer."""
    rng = np.random.default_rng(seed)
    occupied = _occupied_sets(game)
    syms = len(game.symmetries)
    lines = np.array(game.lines, dtype=np.uint64)
    positions = np.zeros(game.cells + 1)
    live = np.zeros(game.cells + 1)
    moves = np.zeros(game.cells + 1)
    for d in range(game.cells + 1):
        boards = occupied[d] * math.comb(d, (d + 1) // 2)
        x, o = _sample(game, d, samples, rng)
        mover, other = (x, o) if d % 2 else (o, x)  # who placed the last piece
        reachable = ~_has_line(other, lines)
        won = _has_line(mover, lines)
        reachable &= ~won | _one_piece_made_it(game, mover, x | o, lines)
        full = d == game.cells
        going = reachable & ~won & (not full)
        share = reachable.mean()
        positions[d] = max(boards * share / syms, 1.0 if share > 0 else 0.0)
        live[d] = positions[d] * (going.sum() / max(reachable.sum(), 1))
        if going.any():
            from gameai.games.mnk.board import playable_masks

            playable = playable_masks(game, (x | o)[going])
            moves[d] = float(np.bitwise_count(playable).mean())
    return Layers(positions, live, moves)


def _occupied_sets(game: Geometry) -> list[int]:
    """How many sets of ``d`` occupied cells a position can have, for each ``d``."""
    if not game.gravity:
        return [math.comb(game.cells, d) for d in range(game.cells + 1)]
    return _height_ways(game)[0]


def _height_ways(game: Geometry) -> list[list[int]]:
    """``ways[c][s]``: column heights for columns ``c..`` that sum to ``s``."""
    ways = [[0] * (game.cells + 1) for _ in range(game.cols + 1)]
    ways[game.cols][0] = 1
    for c in range(game.cols - 1, -1, -1):
        for s in range(game.cells + 1):
            ways[c][s] = sum(ways[c + 1][s - h] for h in range(min(game.rows, s) + 1))
    return ways


def _sample(game: Geometry, d: int, n: int, rng: np.random.Generator
            ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """``n`` boards with ``d`` pieces (X has ``ceil(d/2)``), uniform over such boards."""
    cells = game.cells
    if game.gravity:
        occupied = _sample_heights(game, d, n, rng)
    else:
        order = np.argsort(rng.random((n, cells)), axis=1)
        occupied = np.zeros((n, cells), dtype=bool)
        np.put_along_axis(occupied, order[:, :d], True, axis=1)
    keys = np.where(occupied, rng.random((n, cells)), np.inf)
    rank = np.argsort(np.argsort(keys, axis=1), axis=1)
    is_x = occupied & (rank < (d + 1) // 2)
    is_o = occupied & ~is_x
    bits = np.uint64(1) << np.arange(cells, dtype=np.uint64)
    return (np.where(is_x, bits, np.uint64(0)).sum(axis=1, dtype=np.uint64),
            np.where(is_o, bits, np.uint64(0)).sum(axis=1, dtype=np.uint64))


def _sample_heights(game: Geometry, d: int, n: int, rng: np.random.Generator
                    ) -> npt.NDArray[np.bool_]:
    """Occupied cells of ``n`` gravity boards with ``d`` pieces, uniform over heights."""
    ways = np.array(_height_ways(game), dtype=np.float64)
    left = np.full(n, d)
    occupied = np.zeros((n, game.cells), dtype=bool)
    heights = np.arange(game.rows + 1)
    for c in range(game.cols):
        rest = left[:, None] - heights[None, :]
        weight = np.where(rest >= 0, ways[c + 1][np.maximum(rest, 0)], 0.0)
        cum = np.cumsum(weight, axis=1)
        pick = (cum < rng.random(n)[:, None] * cum[:, -1:]).sum(axis=1)
        for r in range(game.rows):  # the bottom ``pick`` cells of column c
            occupied[:, (game.rows - 1 - r) * game.cols + c] = r < pick
        left = left - pick
    return occupied


def _has_line(masks: npt.NDArray[np.uint64], lines: npt.NDArray[np.uint64]
              ) -> npt.NDArray[np.bool_]:
    if not len(lines):
        return np.zeros(masks.shape, dtype=bool)
    return ((masks[:, None] & lines[None, :]) == lines[None, :]).any(axis=1)


def _one_piece_made_it(game: Geometry, mover: npt.NDArray[np.uint64],
                       occupied: npt.NDArray[np.uint64], lines: npt.NDArray[np.uint64]
                       ) -> npt.NDArray[np.bool_]:
    """Whether some piece of ``mover`` (one that could have been placed last: under
    gravity, the top of its column) leaves no line when taken away."""
    ok = np.zeros(mover.shape, dtype=bool)
    for cell in range(game.cells):
        bit = np.uint64(1 << cell)
        has = (mover & bit) != 0
        if game.gravity and cell >= game.cols:
            has &= (occupied & np.uint64(1 << (cell - game.cols))) == 0
        ok |= has & ~_has_line(mover & ~bit, lines)
    return ok
