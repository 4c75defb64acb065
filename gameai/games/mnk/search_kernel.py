"""Numba kernels of the alpha-beta solver (:mod:`gameai.games.mnk.search`).

Positions are Pons-style bitboards: column ``c``, height ``h`` (0 at the bottom) is bit
``c * H + h`` with ``H = rows + 1``, so every column carries one empty sentinel bit on top
and a line test by shifts never wraps from one column into the next. A position is
``(cur, mask)``: the side to move's stones and all stones. Under gravity the playable
cells are ``(mask + bottom) & board``; without it, every empty cell.

Scores inside the kernels are *absolute*: a game won by the stone played at ply ``e``
(1-based: the first stone is ply 1) scores ``BIG - e`` for the winner and ``e - BIG`` for
the loser, a draw 0, so a child's score is exactly the negation of its parent's
(:func:`gameai.games.mnk.search.to_external` turns them into the ``BIG - t`` convention, ``t``
plies from the position). Every search from a node keeps the invariant of Pons's solver:
the side to move cannot win at once (its parent only plays moves that leave no immediate
win), so bounds are tight before any child is searched.

The transposition table keeps, per slot, the exact position (two words, canonical under
the left-right mirror) and a lower and an upper bound and the ply packed in a third word;
slots come in buckets of two, the first keeping the position nearest the root (the larger
subtree) and the second always replaced. Search is always to the end, so a bound never
goes stale. A search stops when ``stats[NODES]`` passes ``stats[BUDGET]``:
it sets ``stats[ABORTED]`` and unwinds without storing anything, so the caller can resume
with the table it filled (pause and resume by time budget).
"""

from __future__ import annotations

import numba as nb
import numpy as np

NODES, BUDGET, ABORTED = 0, 1, 2
# params: H, COLS, ROWS, K, GRAVITY, CELLS, MIRROR (table keys are canonical under the
# mirror below this ply), ETC (enhanced transposition cutoffs below this ply)
P_H, P_COLS, P_ROWS, P_K, P_GRAVITY, P_CELLS, P_MIRROR, P_ETC = range(8)
NO_LOWER, NO_UPPER = -127, 127
EMPTY_BOUNDS = (NO_LOWER + 128) | (NO_UPPER + 128) << 8  # a slot's bounds word when unknown
EMPTY_PLY = 255  # an empty slot's ply: every position replaces it
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_MIX1 = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xC2B2AE3D27D4EB4F)


@nb.njit(cache=True, inline="always")
def popcount(x: np.uint64) -> np.int64:
    x = x - ((x >> _ONE) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@nb.njit(cache=True)
def winning_cells(b: np.uint64, board: np.uint64, k: np.int64, shifts: np.ndarray) -> np.uint64:
    """Cells (empty or not) that would complete a line of ``k`` for the stones ``b``."""
    r = _ZERO
    if k == 4:  # the common case, unrolled (Pons's formula, both ways in every direction)
        for d in range(4):
            s = np.uint64(shifts[d])
            l1 = b << s
            l2 = l1 & (b << (s + s))
            r1 = b >> s
            r2 = r1 & (b >> (s + s))
            r |= (l2 & (b << (s + s + s))) | (l2 & r1) | (l1 & r2) | (r2 & (b >> (s + s + s)))
        return r & board
    for d in range(4):
        s = shifts[d]
        for j in range(k):  # the cell is the j-th of the line
            t = board
            for i in range(-j, k - j):
                if i > 0:
                    t &= b >> np.uint64(i * s)
                elif i < 0:
                    t &= b << np.uint64(-i * s)
            r |= t
    return r & board


@nb.njit(cache=True)
def has_line(b: np.uint64, k: np.int64, shifts: np.ndarray) -> bool:
    for d in range(4):
        s = np.uint64(shifts[d])
        t = b
        for _ in range(k - 1):
            t &= t >> s
        if t != _ZERO:
            return True
    return False


@nb.njit(cache=True, inline="always")
def playable(mask: np.uint64, board: np.uint64, bottom: np.uint64, gravity: bool) -> np.uint64:
    if gravity:
        return (mask + bottom) & board
    return board & ~mask


@nb.njit(cache=True)
def non_losing_moves(cur: np.uint64, mask: np.uint64, board: np.uint64, bottom: np.uint64,
                     gravity: bool, k: np.int64, shifts: np.ndarray) -> np.uint64:
    """The moves after which the opponent cannot win at once: the only block when the
    opponent threatens one cell, none when it threatens two, and under gravity never the
    cell below an opponent's winning cell."""
    possible = playable(mask, board, bottom, gravity)
    opp_win = winning_cells(cur ^ mask, board, k, shifts) & ~mask
    forced = possible & opp_win
    if forced != _ZERO:
        if forced & (forced - _ONE) != _ZERO:
            return _ZERO
        possible = forced
    if gravity:
        return possible & ~(opp_win >> _ONE)
    return possible


@nb.njit(cache=True)
def mirror(b: np.uint64, params: np.ndarray) -> np.uint64:
    h = params[P_H]
    cols = params[P_COLS]
    col = (_ONE << np.uint64(h)) - _ONE
    out = _ZERO
    for c in range(cols):
        bits = (b >> np.uint64(c * h)) & col
        out |= bits << np.uint64((cols - 1 - c) * h)
    return out


@nb.njit(cache=True, inline="always")
def _slot(a: np.uint64, b: np.uint64, size_mask: np.uint64) -> np.int64:
    """The first slot of the position's bucket of two (an even index)."""
    h = a * _MIX1 ^ (b * _MIX2)
    h ^= h >> np.uint64(29)
    return np.int64(h & size_mask & ~_ONE)


@nb.njit(cache=True)
def table_key(cur: np.uint64, mask: np.uint64, ply: np.int64, params: np.ndarray
              ) -> tuple[np.uint64, np.uint64]:
    if ply >= params[P_MIRROR]:
        return cur, mask
    mc, mm = mirror(cur, params), mirror(mask, params)
    if mm < mask or (mm == mask and mc < cur):
        return mc, mm
    return cur, mask


@nb.njit(cache=True, inline="always")
def _unpack(word: np.uint64) -> tuple[np.int64, np.int64]:
    return (np.int64(word & np.uint64(0xFF)) - 128,
            np.int64((word >> np.uint64(8)) & np.uint64(0xFF)) - 128)


@nb.njit(cache=True, inline="always")
def _pack(lo: np.int64, hi: np.int64, ply: np.int64) -> np.uint64:
    return (np.uint64(lo + 128) | (np.uint64(hi + 128) << np.uint64(8))
            | (np.uint64(EMPTY_PLY - ply) << np.uint64(16)))


@nb.njit(cache=True, inline="always")
def _ply(word: np.uint64) -> np.int64:
    """The ply a slot's position was stored at (:data:`EMPTY_PLY` when the slot is empty)."""
    return EMPTY_PLY - np.int64((word >> np.uint64(16)) & np.uint64(0xFF))


@nb.njit(cache=True)
def probe(tt: np.ndarray, a: np.uint64, b: np.uint64) -> tuple[np.int64, np.int64]:
    """``(lower, upper)`` bounds the table holds for the position ``(a, b)``."""
    i = _slot(a, b, np.uint64(len(tt) - 1))
    for j in range(i, i + 2):
        if tt[j, 0] == a and tt[j, 1] == b:
            return _unpack(tt[j, 2])
    return np.int64(NO_LOWER), np.int64(NO_UPPER)


@nb.njit(cache=True)
def store(tt: np.ndarray, a: np.uint64, b: np.uint64, lo: np.int64, hi: np.int64,
          ply: np.int64) -> None:
    """Keep bounds for ``(a, b)`` found at ``ply``: narrowed with its own slot's if the
    bucket holds the position; else in the bucket's first slot if the position is at most
    as deep as the one there (nearer the root: a larger subtree saved), which moves to the
    second slot, else in the second slot (always replaced)."""
    i = _slot(a, b, np.uint64(len(tt) - 1))
    for j in range(i, i + 2):
        if tt[j, 0] == a and tt[j, 1] == b:
            old_lo, old_hi = _unpack(tt[j, 2])
            tt[j, 2] = _pack(max(lo, old_lo), min(hi, old_hi), ply)
            return
    if ply <= _ply(tt[i, 2]):
        tt[i + 1, 0] = tt[i, 0]
        tt[i + 1, 1] = tt[i, 1]
        tt[i + 1, 2] = tt[i, 2]
    else:
        i += 1
    tt[i, 0] = a
    tt[i, 1] = b
    tt[i, 2] = _pack(lo, hi, ply)


@nb.njit(cache=True)
def negamax(cur: np.uint64, mask: np.uint64, ply: np.int64, alpha: np.int64, beta: np.int64,
            params: np.ndarray, board: np.uint64, bottom: np.uint64, shifts: np.ndarray,
            order: np.ndarray, tt: np.ndarray, moves: np.ndarray, scores: np.ndarray,
            stats: np.ndarray) -> np.int64:
    """The absolute score of a node whose side to move cannot win at once, fail-soft:
    ``<= alpha`` is an upper bound, ``>= beta`` a lower bound, between them exact."""
    stats[NODES] += 1
    if stats[NODES] > stats[BUDGET]:
        stats[ABORTED] = 1
        return np.int64(0)
    k = params[P_K]
    gravity = params[P_GRAVITY] != 0
    big = params[P_CELLS] + 1
    nxt = non_losing_moves(cur, mask, board, bottom, gravity, k, shifts)
    if nxt == _ZERO:
        return -(big - ply - 2)
    if ply >= params[P_CELLS] - 2:
        return np.int64(0)
    lo = -(big - ply - 4)
    hi = big - ply - 3
    ka, kb = table_key(cur, mask, ply, params)
    t_lo, t_hi = probe(tt, ka, kb)
    lo = max(lo, t_lo)
    hi = min(hi, t_hi)
    if lo >= hi or lo >= beta:
        return lo
    if hi <= alpha:
        return hi
    a = max(alpha, lo)
    b = min(beta, hi)
    # moves by threats created (descending), then by the centre-first order
    n = 0
    opp = cur ^ mask
    for i in range(len(order)):
        m = nxt & order[i]
        if m == _ZERO:
            continue
        after = cur | m
        score = popcount(winning_cells(after, board, k, shifts) & ~(mask | m))
        j = n
        while j > 0 and scores[ply, j - 1] < score:
            moves[ply, j] = moves[ply, j - 1]
            scores[ply, j] = scores[ply, j - 1]
            j -= 1
        moves[ply, j] = m
        scores[ply, j] = score
        n += 1
    # enhanced transposition cutoff: a child already known to be bad enough for the opponent
    for j in range(n if ply < params[P_ETC] else 0):
        m = moves[ply, j]
        ca, cb = table_key(opp, mask | m, ply + 1, params)
        _, c_hi = probe(tt, ca, cb)
        if c_hi != NO_UPPER and -c_hi >= b:
            store(tt, ka, kb, -c_hi, np.int64(NO_UPPER), ply)
            return -c_hi
    best = np.int64(-NO_UPPER)
    for j in range(n):
        m = moves[ply, j]
        v = -negamax(opp, mask | m, ply + 1, -b, -a, params, board, bottom, shifts, order,
                     tt, moves, scores, stats)
        if stats[ABORTED] != 0:
            return np.int64(0)
        if v > best:
            best = v
        if v > a:
            a = v
        if a >= b:
            break
    a0 = max(alpha, lo)
    if best <= a0:
        store(tt, ka, kb, np.int64(NO_LOWER), best, ply)
    elif best >= b:
        store(tt, ka, kb, best, np.int64(NO_UPPER), ply)
    else:
        store(tt, ka, kb, best, best, ply)
    return best


@nb.njit(cache=True)
def quick_score(cur: np.uint64, mask: np.uint64, ply: np.int64, params: np.ndarray,
                board: np.uint64, bottom: np.uint64, shifts: np.ndarray) -> tuple[bool, np.int64]:
    """``(True, score)`` when a position's score needs no search: the side to move wins at
    once, the board is full, every move loses at once, or two plies are left. Assumes the
    game is not over."""
    k = params[P_K]
    big = params[P_CELLS] + 1
    cells = params[P_CELLS]
    if ply >= cells:
        return True, np.int64(0)
    gravity = params[P_GRAVITY] != 0
    possible = playable(mask, board, bottom, gravity)
    if winning_cells(cur, board, k, shifts) & possible != _ZERO:
        return True, big - ply - 1
    if non_losing_moves(cur, mask, board, bottom, gravity, k, shifts) == _ZERO:
        return True, -(big - ply - 2)
    if ply >= cells - 2:
        return True, np.int64(0)
    return False, np.int64(0)


@nb.njit(cache=True)
def solve_bounds(cur: np.uint64, mask: np.uint64, ply: np.int64, lo: np.int64, hi: np.int64,
                 params: np.ndarray, board: np.uint64, bottom: np.uint64, shifts: np.ndarray,
                 order: np.ndarray, tt: np.ndarray, moves: np.ndarray, scores: np.ndarray,
                 stats: np.ndarray
                 ) -> tuple[np.int64, np.int64]:
    """Narrow ``[lo, hi]`` around the exact score by null-window searches (Pons's
    iteration: first probe whether the position is a win or a loss at all, then halve);
    returns the bounds reached, equal once exact, or where the budget ran out."""
    quick, score = quick_score(cur, mask, ply, params, board, bottom, shifts)
    if quick:
        return score, score
    big = params[P_CELLS] + 1
    lo = max(lo, -(big - ply - 4))
    hi = min(hi, big - ply - 3)
    while lo < hi:
        med = lo + (hi - lo) // 2
        if med <= 0 and lo // 2 < med:
            med = lo // 2
        elif med >= 0 and hi // 2 > med:
            med = hi // 2
        r = negamax(cur, mask, ply, med, med + 1, params, board, bottom, shifts, order,
                    tt, moves, scores, stats)
        if stats[ABORTED] != 0:
            break
        if r <= med:
            hi = r
        else:
            lo = r
    return lo, hi


@nb.njit(cache=True)
def solve_many(curs: np.ndarray, masks: np.ndarray, plies: np.ndarray, params: np.ndarray,
               board: np.uint64, bottom: np.uint64, shifts: np.ndarray, order: np.ndarray,
               tt: np.ndarray,
               moves: np.ndarray, scores: np.ndarray, stats: np.ndarray, out: np.ndarray) -> None:
    """The exact absolute score of many live positions (``out[i]``), one after another,
    sharing the table. For tests and benchmarks: no budget (``stats[NODES]`` counts)."""
    big = params[P_CELLS] + 1
    stats[BUDGET] = np.int64(1) << np.int64(62)
    stats[ABORTED] = 0
    for i in range(len(curs)):
        lo, _ = solve_bounds(curs[i], masks[i], plies[i], -big, big, params, board, bottom,
                              shifts, order, tt, moves, scores, stats)
        out[i] = lo
