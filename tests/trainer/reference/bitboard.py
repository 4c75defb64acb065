"""The self-play engine: m,n,k rules, position keys and a seeded generator, in numba.

Every learner's inner loop plays whole games in compiled code, so one core plays over a
hundred thousand tic-tac-toe games a second with the learning updates included. Numba
rather than vectorised numpy because self-play is sequential: each move depends on the
values the previous games just changed, so there is no wide array to vectorise over,
while a compiled loop over one game at a time costs a few hundred nanoseconds a move.

A position is two bitmasks (``x``, ``o``) as in :mod:`gameai.games`. Alongside them the
kernels keep the base-3 key of the board under every symmetry (seed 003's key is the
identity's), updated by one addition per symmetry per move; the smallest is the canonical
key of :func:`gameai.games.mnk.keys.canonical_key` (seed 004's sharing of symmetric values).

Randomness is a splitmix64 generator whose whole state is one ``uint64`` held by the
caller, so a learner is reproducible from its seed and can be paused and resumed.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np
import numpy.typing as npt

from gameai.games.mnk.game import MnkGame as Game
from gameai.games.mnk.keys import MAX_VECTOR_CELLS, cell_weight, column_keys

U64 = npt.NDArray[np.uint64]
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53


class Spec(NamedTuple):
    """A game as flat arrays the kernels can read (build it with :func:`make_spec`)."""

    cells: int
    cols: int
    gravity: bool
    full: np.uint64  # every cell
    bottom: np.uint64  # the bottom row (gravity games)
    line_ptr: npt.NDArray[np.int64]  # lines through cell c: line_masks[line_ptr[c]:line_ptr[c+1]]
    line_masks: U64
    pow3: U64  # (symmetries, cells): 3**perm[s][c] (or the column key's weight), a cell's
    # weight in image s's key
    digits: U64  # (2,): the base-3 digit of X and of O


def make_spec(game: Game) -> Spec:
    """The kernel-side description of ``game``.

    Raises:
        ValueError: the board has no 64-bit position key (:mod:`gameai.games.mnk.keys`: more
            than 40 cells, unless a gravity board's columns fit one word).
    """
    if game.cells > MAX_VECTOR_CELLS and not column_keys(game):
        raise ValueError(f"{game.name} has {game.cells} cells; the table learners (tally, "
                         f"td, qlearning) handle boards of at most {MAX_VECTOR_CELLS} (a base-3 "
                         "position key must fit in 64 bits), or gravity boards with "
                         "(rows + 1) x cols <= 64")
    ptr = [0]
    masks: list[int] = []
    for cell in range(game.cells):
        masks.extend(game.lines_through[cell])
        ptr.append(len(masks))
    pow3 = np.array([[cell_weight(game, perm[c]) for c in range(game.cells)]
                     for perm in game.symmetries], dtype=np.uint64)
    return Spec(game.cells, game.cols, game.gravity, np.uint64(game.full_mask),
                np.uint64(game.bottom_row), np.array(ptr, dtype=np.int64),
                np.array(masks, dtype=np.uint64), pow3, np.array([1, 2], dtype=np.uint64))


# -- random numbers ---------------------------------------------------------------------

@nb.njit(cache=True)
def next_u64(rng: U64) -> np.uint64:
    """splitmix64: advance ``rng[0]`` and return the next 64 random bits."""
    rng[0] += _GOLDEN
    z = rng[0]
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True)
def uniform(rng: U64) -> float:
    """A float in [0, 1)."""
    return float(next_u64(rng) >> np.uint64(11)) * _INV53


@nb.njit(cache=True)
def below(rng: U64, n: int) -> int:
    """An integer in [0, n)."""
    return min(int(uniform(rng) * n), n - 1)


@nb.njit(cache=True)
def random_opening(rng: U64, share: float, cells: int) -> int:
    """Exploring starts: with probability ``share`` a game opens with a uniformly random
    number (0 to ``cells - 2``) of uniformly random moves, so that every reachable position
    is met now and then, not only those the learners' own play leads to (the positions
    after an opponent's blunder, say); else 0. No random number is drawn when ``share`` is
    0, so a learner without exploring starts plays the games it always played."""
    if share > 0.0 and uniform(rng) < share:
        return below(rng, cells - 1)
    return 0


def seed_state(seed: int) -> U64:
    """A generator state for ``seed`` (any integer; equal seeds give equal streams)."""
    return np.array([np.uint64(seed % (1 << 64))], dtype=np.uint64)


# -- rules ------------------------------------------------------------------------------

@nb.njit(cache=True)
def playable(spec: Spec, occupied: np.uint64) -> np.uint64:
    """Cells a move may go to: the empty ones, or under gravity the lowest of each column."""
    empty = spec.full & ~occupied
    if not spec.gravity:
        return empty
    return empty & ((occupied >> np.uint64(spec.cols)) | spec.bottom)


@nb.njit(cache=True)
def completes_line(spec: Spec, mine: np.uint64, cell: int) -> bool:
    """Whether ``mine`` (already including ``cell``) has a line through ``cell``."""
    for i in range(spec.line_ptr[cell], spec.line_ptr[cell + 1]):
        line = spec.line_masks[i]
        if mine & line == line:
            return True
    return False


@nb.njit(cache=True)
def list_moves(spec: Spec, occupied: np.uint64, out: npt.NDArray[np.int64]) -> int:
    """Write the playable cells, ascending, into ``out``; return how many."""
    mask = playable(spec, occupied)
    n = 0
    for cell in range(spec.cells):
        if mask >> np.uint64(cell) & _ONE:
            out[n] = cell
            n += 1
    return n


# -- keys -------------------------------------------------------------------------------

@nb.njit(cache=True)
def reset_keys(keys: U64) -> None:
    for s in range(keys.shape[0]):
        keys[s] = _ZERO


@nb.njit(cache=True)
def play_keys(spec: Spec, keys: U64, cell: int, mover: int) -> None:
    """Update every image's key for ``mover`` (0 X, 1 O) playing ``cell``."""
    digit = spec.digits[mover]
    for s in range(keys.shape[0]):
        keys[s] += digit * spec.pow3[s, cell]


@nb.njit(cache=True)
def child_canonical(spec: Spec, keys: U64, cell: int, mover: int) -> np.uint64:
    """The canonical key after ``mover`` plays ``cell``, without changing ``keys``."""
    digit = spec.digits[mover]
    best = keys[0] + digit * spec.pow3[0, cell]
    for s in range(1, keys.shape[0]):
        k = keys[s] + digit * spec.pow3[s, cell]
        if k < best:
            best = k
    return best


@nb.njit(cache=True)
def child_raw(spec: Spec, key: np.uint64, cell: int, mover: int) -> np.uint64:
    """Seed 003's base-3 key after ``mover`` plays ``cell`` on the board of ``key``."""
    return key + spec.digits[mover] * spec.pow3[0, cell]


@nb.njit(cache=True)
def greedy(vals: npt.NDArray[np.float64], n: int, rng: U64) -> int:
    """The index of the largest of ``vals[:n]``, ties broken uniformly at random."""
    pick, ties = 0, 0
    best = -np.inf
    for j in range(n):
        if vals[j] > best:
            best, pick, ties = vals[j], j, 1
        elif vals[j] == best:
            ties += 1
            if uniform(rng) * ties < 1.0:
                pick = j
    return pick


@nb.njit(cache=True)
def place(x: np.uint64, o: np.uint64, mover: int, cell: int) -> tuple[np.uint64, np.uint64]:
    """The bitmasks after ``mover`` (0 X, 1 O) plays ``cell``."""
    bit = _ONE << np.uint64(cell)
    if mover == 0:
        return x | bit, o
    return x, o | bit
