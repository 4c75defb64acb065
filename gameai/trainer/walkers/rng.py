"""The self-play kernels' random numbers and greedy choice, in numba.

Randomness is a splitmix64 generator whose whole state is one ``uint64`` held by the
caller, so a learner is reproducible from its seed and can be paused and resumed. Every
walker and every learner draws from it in the same way, so the same seed plays the same
games whichever engine runs them.
"""

from __future__ import annotations

import numba as nb
import numpy as np
import numpy.typing as npt

U64 = npt.NDArray[np.uint64]
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53


def seed_state(seed: int) -> U64:
    """A generator state for ``seed`` (any integer; equal seeds give equal streams)."""
    return np.array([np.uint64(seed % (1 << 64))], dtype=np.uint64)


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
