"""The morris state graph, built by a compiled walk: milliseconds instead of the generic
walk's half second (:func:`gameai.games.graph.build_graph`, which ``tests/games`` holds it
equal to on every variant).

A position is ``(x, o, side)`` with its key ``base3(x, o) + side * 3**9``, so the walk
indexes a dense array of ``2 * 3**9`` slots by key instead of hashing.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from gameai.games.graph import LIVE, LOST
from gameai.games.morris.geometry import Geometry

_CELLS = 9
_SLOTS = 2 * 3 ** _CELLS
_MOST = 8192  # positions with at most three pieces a side: 5,706 (of which 5,400-odd reachable)


@nb.njit(cache=True)
def _key(x: int, o: int, side: int) -> int:
    key = 0
    p = 1
    for i in range(_CELLS):
        if x >> i & 1:
            key += p
        elif o >> i & 1:
            key += 2 * p
        p *= 3
    return key + side * 19683


@nb.njit(cache=True)
def _walk(lines: np.ndarray, neighbours: np.ndarray, centre_opening: bool
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    full = (1 << _CELLS) - 1
    slot = np.full(_SLOTS, -1, dtype=np.int64)
    xs = np.empty(_MOST, dtype=np.int64)
    os = np.empty(_MOST, dtype=np.int64)
    sides = np.empty(_MOST, dtype=np.int8)
    ends = np.zeros(_MOST, dtype=np.int8)
    children = np.full((_MOST, _CELLS + _CELLS * _CELLS), -1, dtype=np.int64)
    xs[0], os[0], sides[0] = 0, 0, 0
    slot[0] = 0
    n = 1
    head = 0
    while head < n:
        x, o, side = xs[head], os[head], sides[head]
        mine = x if side == 0 else o
        done = False
        for line in lines:
            if x & line == line or o & line == line:
                done = True
        placing = _count(mine) < 3
        empty = full & ~(x | o)
        if not done:
            moves = 0
            for a in range(_CELLS + _CELLS * _CELLS):
                if a < _CELLS:
                    if not placing or not empty >> a & 1:
                        continue
                    if a == 4 and not centre_opening and x | o == 0:
                        continue
                    after = mine | 1 << a
                else:
                    frm, to = divmod(a - _CELLS, _CELLS)
                    if placing or not mine >> frm & 1 or not (neighbours[frm] & empty) >> to & 1:
                        continue
                    after = (mine & ~(1 << frm)) | 1 << to
                cx, co = (after, o) if side == 0 else (x, after)
                key = _key(cx, co, 1 - side)
                if slot[key] < 0:
                    slot[key] = n
                    xs[n], os[n], sides[n] = cx, co, 1 - side
                    n += 1
                children[head, a] = slot[key]
                moves += 1
            if moves == 0:
                done = True  # the side to move cannot move: it has lost
        ends[head] = 1 if done else 0
        head += 1
    keys = np.empty(n, dtype=np.int64)
    for i in range(n):
        keys[i] = _key(xs[i], os[i], sides[i])
    return keys, children[:n], xs[:n], os[:n], sides[:n], ends[:n]


@nb.njit(cache=True)
def _count(mask: int) -> int:
    n = 0
    while mask:
        mask &= mask - 1
        n += 1
    return n


def walk(game: Geometry) -> tuple[np.ndarray, ...]:
    """The arrays of ``game``'s state graph for :func:`gameai.games.graph.assemble` (the
    same graph as the generic walk's): raw keys, children, sides, ends, canonical keys and
    symmetries."""
    lines = np.array(game.lines, dtype=np.int64)
    neighbours = np.array(game.neighbours, dtype=np.int64)
    keys, children, xs, os_, sides, ends = _walk(lines, neighbours, game.centre_opening)
    assert LOST == 1 and LIVE == 0  # the kernel writes these values
    ckeys, syms = _canonical(game, xs, os_, sides)
    return (keys.astype(np.uint64), children.astype(np.int32), sides.astype(np.int8),
            ends.astype(np.int8), ckeys, syms)


def _canonical(game: Geometry, xs: np.ndarray, os_: np.ndarray, sides: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Each position's smallest key over the symmetries, and the first symmetry reaching it."""
    bits = np.arange(_CELLS)
    xb = (xs[:, None] >> bits) & 1
    ob = (os_[:, None] >> bits) & 1
    pow3 = np.array([[3 ** perm[c] for c in range(_CELLS)] for perm in game.symmetries],
                    dtype=np.int64)  # (symmetries, cells)
    images = xb @ pow3.T + 2 * (ob @ pow3.T) + (sides.astype(np.int64) * 3 ** _CELLS)[:, None]
    syms = np.argmin(images, axis=1)
    return images[np.arange(len(xs)), syms].astype(np.uint64), syms.astype(np.int8)
