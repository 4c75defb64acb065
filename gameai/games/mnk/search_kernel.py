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

Every constant of a game (masks, sizes, the move order, the cell bits) is in one array,
``geo``, read once per call into locals. :func:`negamax` is iterative: one loop with the
search's frames in two small arrays indexed by ply, so a node costs no function call and
no reference counting of the arrays it uses (the recursive kernel before it spent about
a third of its time passing seven arrays to itself).

The transposition table has two words a slot (three for non-gravity boards wider than
32 padded bits): the position's key and a word with its lower and upper bound, the ply
it was stored at and the table's *epoch*. The key is unique: under gravity
``cur + mask + bottom`` (Pons's key: each column's stones plus one bit above them);
without gravity ``cur | mask << W`` (``W`` the padded bits), or ``cur`` in the first word
and ``mask`` in the third. Clearing the table only advances the epoch: a slot of an older
epoch reads as empty, so a search "from an empty table" costs nothing to prepare and does
not push everything else out of the caches. Slots come in buckets of two (16 bytes each: a
bucket is one aligned half cache line), the first keeping the position nearest the root
(the larger subtree) and the second always replaced. Below ``MIRROR`` plies keys are
canonical under the left-right mirror. Search is always to the end, so a bound never goes
stale. A search stops when ``stats[NODES]`` passes ``stats[BUDGET]``: it sets
``stats[ABORTED]`` and unwinds without storing anything, so the caller can resume with
the table it filled (pause and resume by time budget).

The entry points called from Python release the GIL (``nogil``): a search in one thread
(the server's background prover, with a searcher and table of its own) does not stop the
others; each :class:`~gameai.games.mnk.search.Searcher` runs one search at a time (its lock).
"""

from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

NODES, BUDGET, ABORTED, EPOCH = 0, 1, 2, 3
STATS = 4  # the stats array's length
# geo: the game's constants (uint64)
(G_BOARD, G_BOTTOM, G_H, G_COLS, G_ROWS, G_K, G_GRAVITY, G_CELLS, G_MIRROR, G_ETC, G_W,
 G_WIDE, G_NORDER, G_CELLBITS) = range(14)
G_ORDER = 16  # the move order's masks from here, then the row-major cells' bits
NO_LOWER, NO_UPPER = -127, 127
EMPTY_PLY = 255  # an empty slot's ply: every position replaces it
EPOCH_SHIFT = 24  # the info word: lower + 128, upper + 128 << 8, 255 - ply << 16, epoch << 24
# frames: uint64 fields, then the ordered moves; int64 fields, then the moves' scores
F_CUR, F_MASK, F_KA, F_KB, F_MOVES = range(5)
F_A, F_B, F_A0, F_BEST, F_N, F_J, F_SCORES = range(7)
# board_bounds's and columns_position's status
LIVE, X_WON, O_WON, FULL, OUT_OF_RANGE, COLUMN_FULL = range(6)

_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)
_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_MIX1 = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xC2B2AE3D27D4EB4F)
_BYTE = np.uint64(0xFF)
Score = int | np.int64  # a score as Python passes it in, or numba hands it back


@intrinsic
def prefetch(typingctx: object, table: types.Array, index: types.Integer) -> object:
    """Ask the CPU to bring ``table``'s flat element ``index`` into the caches, without
    waiting (LLVM's ``prefetch``): a child's table slot is fetched while its siblings are
    ordered, so the probe on entering it does not stall on memory."""
    if not isinstance(table, types.Array) or table.layout != "C":
        return None
    sig = types.void(table, index)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = builder.module.declare_intrinsic(
            "llvm.prefetch", [i8p], ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]))
        # a read, kept in every cache level, into the data cache
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3),
                          ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@nb.njit(cache=True, inline="always")
def popcount(x: np.uint64) -> np.int64:
    x = x - ((x >> _ONE) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return np.int64((x * _H01) >> np.uint64(56))


@nb.njit(cache=True, inline="always")
def _four(b: np.uint64, s: np.uint64) -> np.uint64:
    """Cells completing a line of four for ``b`` in one direction (Pons's formula)."""
    l1 = b << s
    l2 = l1 & (b << (s + s))
    r1 = b >> s
    r2 = r1 & (b >> (s + s))
    return (l2 & (b << (s + s + s))) | (l2 & r1) | (l1 & r2) | (r2 & (b >> (s + s + s)))


@nb.njit(cache=True)
def _k_line(b: np.uint64, board: np.uint64, k: np.int64, s: Score) -> np.uint64:
    """Cells completing a line of ``k`` for ``b`` along shift ``s`` (any ``k``)."""
    r = _ZERO
    for j in range(k):  # the cell is the j-th of the line
        t = board
        for i in range(-j, k - j):
            if i > 0:
                t &= b >> np.uint64(i * s)
            elif i < 0:
                t &= b << np.uint64(-i * s)
        r |= t
    return r


@nb.njit(cache=True, inline="always")
def _wins(b: np.uint64, board: np.uint64, k: np.int64, h: np.uint64) -> np.uint64:
    """Cells (empty or not) that would complete a line of ``k`` for the stones ``b``; the
    four directions are shifts by 1 (vertical), ``h``, ``h + 1`` and ``h - 1``."""
    if k == 4:
        return (_four(b, _ONE) | _four(b, h) | _four(b, h + _ONE) | _four(b, h - _ONE)) & board
    hi = np.int64(h)
    return (_k_line(b, board, k, 1) | _k_line(b, board, k, hi) | _k_line(b, board, k, hi + 1)
            | _k_line(b, board, k, hi - 1)) & board


@nb.njit(cache=True)
def winning_cells(b: np.uint64, board: np.uint64, k: np.int64, shifts: np.ndarray) -> np.uint64:
    """Cells (empty or not) that would complete a line of ``k`` for the stones ``b``
    (``shifts``: ``1, H, H + 1, H - 1``)."""
    return _wins(b, board, k, np.uint64(shifts[1]))


@nb.njit(cache=True, inline="always")
def _has_line(b: np.uint64, k: np.int64, h: np.uint64) -> bool:
    for s in (_ONE, h, h + _ONE, h - _ONE):
        t = b
        for _ in range(k - 1):
            t &= t >> s
        if t != _ZERO:
            return True
    return False


@nb.njit(cache=True)
def has_line(b: np.uint64, k: np.int64, shifts: np.ndarray) -> bool:
    return _has_line(b, k, np.uint64(shifts[1]))


@nb.njit(cache=True, inline="always")
def _playable(mask: np.uint64, board: np.uint64, bottom: np.uint64, gravity: bool) -> np.uint64:
    if gravity:
        return (mask + bottom) & board
    return board & ~mask


@nb.njit(cache=True, inline="always")
def _non_losing(cur: np.uint64, mask: np.uint64, board: np.uint64, bottom: np.uint64,
                gravity: bool, k: np.int64, h: np.uint64) -> np.uint64:
    """The moves after which the opponent cannot win at once: the only block when the
    opponent threatens one cell, none when it threatens two, and under gravity never the
    cell below an opponent's winning cell."""
    possible = _playable(mask, board, bottom, gravity)
    opp_win = _wins(cur ^ mask, board, k, h) & ~mask
    forced = possible & opp_win
    if forced != _ZERO:
        if forced & (forced - _ONE) != _ZERO:
            return _ZERO
        possible = forced
    if gravity:
        return possible & ~(opp_win >> _ONE)
    return possible


@nb.njit(cache=True)
def mirror(b: np.uint64, h: np.int64, cols: np.int64) -> np.uint64:
    """``b`` with its columns in the reverse order."""
    col = (_ONE << np.uint64(h)) - _ONE
    out = _ZERO
    for c in range(cols):
        bits = (b >> np.uint64(c * h)) & col
        out |= bits << np.uint64((cols - 1 - c) * h)
    return out


@nb.njit(cache=True, inline="always")
def _key(cur: np.uint64, mask: np.uint64, geo: np.ndarray) -> tuple[np.uint64, np.uint64]:
    """The table key ``(first word, third word)`` of a position, unique (see above)."""
    if geo[G_GRAVITY] != _ZERO:
        return cur + mask + geo[G_BOTTOM], _ZERO
    if geo[G_WIDE] != _ZERO:
        return cur, mask
    return cur | (mask << geo[G_W]), _ZERO


@nb.njit(cache=True)
def table_key(cur: np.uint64, mask: np.uint64, ply: np.int64, geo: np.ndarray
              ) -> tuple[np.uint64, np.uint64]:
    """:func:`_key`, canonical under the mirror below ``geo[G_MIRROR]`` plies."""
    ka, kb = _key(cur, mask, geo)
    if ply >= np.int64(geo[G_MIRROR]):
        return ka, kb
    h, cols = np.int64(geo[G_H]), np.int64(geo[G_COLS])
    ma, mb = _key(mirror(cur, h, cols), mirror(mask, h, cols), geo)
    if mb < kb or (mb == kb and ma < ka):
        return ma, mb
    return ka, kb


@nb.njit(cache=True, inline="always")
def _slot(a: np.uint64, b: np.uint64, size_mask: np.uint64) -> np.int64:
    """The first slot of the position's bucket of two (an even index)."""
    h = a * _MIX1 ^ (b * _MIX2)
    h ^= h >> np.uint64(29)
    return np.int64(h & size_mask & ~_ONE)


@nb.njit(cache=True, inline="always")
def _pack(lo: np.int64, hi: np.int64, ply: np.int64, epoch: np.uint64) -> np.uint64:
    return (np.uint64(lo + 128) | (np.uint64(hi + 128) << np.uint64(8))
            | (np.uint64(EMPTY_PLY - ply) << np.uint64(16)) | (epoch << np.uint64(EPOCH_SHIFT)))


@nb.njit(cache=True, inline="always")
def _holds(tt: np.ndarray, j: int, a: np.uint64, b: np.uint64, epoch: np.uint64) -> bool:
    """Whether slot ``j`` holds the position keyed ``(a, b)`` in this epoch."""
    if tt[j, 0] != a or (tt[j, 1] >> np.uint64(EPOCH_SHIFT)) != epoch:
        return False
    return tt.shape[1] == 2 or tt[j, 2] == b


@nb.njit(cache=True, inline="always")
def _bounds_of(word: np.uint64) -> tuple[np.int64, np.int64]:
    return (np.int64(word & _BYTE) - 128, np.int64((word >> np.uint64(8)) & _BYTE) - 128)


@nb.njit(cache=True, inline="always")
def _ply_of(word: np.uint64, epoch: np.uint64) -> np.int64:
    """The ply a slot's position was stored at (:data:`EMPTY_PLY`: empty or older)."""
    if (word >> np.uint64(EPOCH_SHIFT)) != epoch:
        return np.int64(EMPTY_PLY)
    return EMPTY_PLY - np.int64((word >> np.uint64(16)) & _BYTE)


@nb.njit(cache=True)
def probe(tt: np.ndarray, a: np.uint64, b: np.uint64, epoch: np.uint64
          ) -> tuple[np.int64, np.int64]:
    """``(lower, upper)`` bounds the table holds for the position keyed ``(a, b)``."""
    i = _slot(a, b, np.uint64(len(tt) - 1))
    for j in range(i, i + 2):
        if _holds(tt, j, a, b, epoch):
            return _bounds_of(tt[j, 1])
    return np.int64(NO_LOWER), np.int64(NO_UPPER)


@nb.njit(cache=True)
def store(tt: np.ndarray, a: np.uint64, b: np.uint64, lo: np.int64, hi: np.int64,
          ply: np.int64, epoch: np.uint64) -> None:
    """Keep bounds for the position keyed ``(a, b)`` found at ``ply``: narrowed with its own
    slot's if the bucket holds the position; else in the bucket's first slot if the
    position is at most as deep as the one there (nearer the root: a larger subtree
    saved), which moves to the second slot, else in the second slot (always replaced)."""
    i = _slot(a, b, np.uint64(len(tt) - 1))
    for j in range(i, i + 2):
        if _holds(tt, j, a, b, epoch):
            old_lo, old_hi = _bounds_of(tt[j, 1])
            tt[j, 1] = _pack(max(lo, old_lo), min(hi, old_hi), ply, epoch)
            return
    if ply <= _ply_of(tt[i, 1], epoch):
        for w in range(tt.shape[1]):
            tt[i + 1, w] = tt[i, w]
    else:
        i += 1
    tt[i, 0] = a
    tt[i, 1] = _pack(lo, hi, ply, epoch)
    if tt.shape[1] > 2:
        tt[i, 2] = b


@nb.njit(cache=True)
def negamax(cur: np.uint64, mask: np.uint64, ply: np.int64, alpha: Score, beta: Score,
            geo: np.ndarray, tt: np.ndarray, fu: np.ndarray, fi: np.ndarray,
            stats: np.ndarray) -> np.int64:
    """The absolute score of a node whose side to move cannot win at once, fail-soft:
    ``<= alpha`` is an upper bound, ``>= beta`` a lower bound, between them exact.

    Iterative: a node's frame (its position, key, window, best so far and ordered moves)
    is row ``ply`` of ``fu`` (words) and ``fi`` (integers); descending into a child and
    returning from it are steps of one loop."""
    board, bottom, h = geo[G_BOARD], geo[G_BOTTOM], geo[G_H]
    k = np.int64(geo[G_K])
    gravity = geo[G_GRAVITY] != _ZERO
    cells = np.int64(geo[G_CELLS])
    big = cells + 1
    mirror_below = np.int64(geo[G_MIRROR])
    etc_below = np.int64(geo[G_ETC])
    norder = np.int64(geo[G_NORDER])
    size_mask = np.uint64(len(tt) - 1)
    words = tt.shape[1]
    epoch = np.uint64(stats[EPOCH])
    nodes, budget = stats[NODES], stats[BUDGET]
    root = ply
    value = np.int64(0)
    entering = True
    while True:
        if entering:  # a new node (cur, mask, ply) with the window (alpha, beta)
            nodes += 1
            if nodes > budget:
                stats[NODES] = nodes
                stats[ABORTED] = 1
                return np.int64(0)
            nxt = _non_losing(cur, mask, board, bottom, gravity, k, h)
            if nxt == _ZERO:
                value = -(big - ply - 2)
            elif ply >= cells - 2:
                value = np.int64(0)
            else:
                lo = -(big - ply - 4)
                hi = big - ply - 3
                if ply < mirror_below:
                    ka, kb = table_key(cur, mask, ply, geo)
                else:
                    ka, kb = _key(cur, mask, geo)
                i = _slot(ka, kb, size_mask)
                for j in range(i, i + 2):
                    if _holds(tt, j, ka, kb, epoch):
                        t_lo, t_hi = _bounds_of(tt[j, 1])
                        lo = max(lo, t_lo)
                        hi = min(hi, t_hi)
                        break
                if lo >= hi or lo >= beta:
                    value = lo
                elif hi <= alpha:
                    value = hi
                else:
                    a = max(alpha, lo)
                    b = min(beta, hi)
                    # moves by threats created (descending), then by the centre-first order;
                    # each child's slot is fetched meanwhile (where its key needs no mirror)
                    opp = cur ^ mask
                    direct = ply + 1 >= mirror_below
                    n = 0
                    for o in range(norder):
                        m = nxt & geo[G_ORDER + o]
                        if m == _ZERO:
                            continue
                        if direct:
                            ca, cb = _key(opp, mask | m, geo)
                            prefetch(tt, _slot(ca, cb, size_mask) * words)  # type: ignore[call-arg]
                        score = popcount(_wins(cur | m, board, k, h) & ~(mask | m))
                        j = n
                        while j > 0 and fi[ply, F_SCORES + j - 1] < score:
                            fu[ply, F_MOVES + j] = fu[ply, F_MOVES + j - 1]
                            fi[ply, F_SCORES + j] = fi[ply, F_SCORES + j - 1]
                            j -= 1
                        fu[ply, F_MOVES + j] = m
                        fi[ply, F_SCORES + j] = score
                        n += 1
                    cut = False
                    if ply < etc_below:  # a child already known to be bad enough for the opponent
                        for j in range(n):
                            ca, cb = table_key(opp, mask | fu[ply, F_MOVES + j], ply + 1, geo)
                            _, c_hi = probe(tt, ca, cb, epoch)
                            if c_hi != NO_UPPER and -c_hi >= b:
                                store(tt, ka, kb, -c_hi, np.int64(NO_UPPER), ply, epoch)
                                value = -c_hi
                                cut = True
                                break
                    if not cut:
                        fu[ply, F_CUR] = cur
                        fu[ply, F_MASK] = mask
                        fu[ply, F_KA] = ka
                        fu[ply, F_KB] = kb
                        fi[ply, F_A] = a
                        fi[ply, F_B] = b
                        fi[ply, F_A0] = a
                        fi[ply, F_BEST] = -NO_UPPER
                        fi[ply, F_N] = n
                        fi[ply, F_J] = 0
                        mask = mask | fu[ply, F_MOVES]
                        cur = opp
                        alpha, beta = -b, -a
                        ply += 1
                        continue
            entering = False
        # ``value`` is the score of the node at ``ply``: hand it to its parent
        if ply == root:
            stats[NODES] = nodes
            return value
        ply -= 1
        v = -value
        best = max(fi[ply, F_BEST], v)
        a = max(fi[ply, F_A], v)
        b = fi[ply, F_B]
        j = fi[ply, F_J] + 1
        if a >= b or j >= fi[ply, F_N]:
            ka, kb = fu[ply, F_KA], fu[ply, F_KB]
            if best <= fi[ply, F_A0]:
                store(tt, ka, kb, np.int64(NO_LOWER), best, ply, epoch)
            elif best >= b:
                store(tt, ka, kb, best, np.int64(NO_UPPER), ply, epoch)
            else:
                store(tt, ka, kb, best, best, ply, epoch)
            value = best
            continue
        fi[ply, F_BEST] = best
        fi[ply, F_A] = a
        fi[ply, F_J] = j
        mask = fu[ply, F_MASK]
        cur = fu[ply, F_CUR] ^ mask
        mask |= fu[ply, F_MOVES + j]
        alpha, beta = -b, -a
        ply += 1
        entering = True


@nb.njit(cache=True)
def quick_score(cur: np.uint64, mask: np.uint64, ply: np.int64, geo: np.ndarray
                ) -> tuple[bool, np.int64]:
    """``(True, score)`` when a position's score needs no search: the side to move wins at
    once, the board is full, every move loses at once, or two plies are left. Assumes the
    game is not over."""
    board, bottom, h = geo[G_BOARD], geo[G_BOTTOM], geo[G_H]
    k = np.int64(geo[G_K])
    gravity = geo[G_GRAVITY] != _ZERO
    cells = np.int64(geo[G_CELLS])
    big = cells + 1
    if ply >= cells:
        return True, np.int64(0)
    if _wins(cur, board, k, h) & _playable(mask, board, bottom, gravity) != _ZERO:
        return True, big - ply - 1
    if _non_losing(cur, mask, board, bottom, gravity, k, h) == _ZERO:
        return True, -(big - ply - 2)
    if ply >= cells - 2:
        return True, np.int64(0)
    return False, np.int64(0)


@nb.njit(cache=True)
def frames(geo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Empty frames for :func:`negamax`: one row a ply."""
    rows = np.int64(geo[G_CELLS]) + 2
    width = np.int64(geo[G_NORDER])
    return (np.empty((rows, F_MOVES + width), dtype=np.uint64),
            np.empty((rows, F_SCORES + width), dtype=np.int64))


@nb.njit(cache=True, nogil=True)
def solve_bounds(cur: np.uint64, mask: np.uint64, ply: np.int64, lo: Score, hi: Score,
                 geo: np.ndarray, tt: np.ndarray, stats: np.ndarray
                 ) -> tuple[Score, Score]:
    """Narrow ``[lo, hi]`` around the exact score by null-window searches (Pons's
    iteration: first probe whether the position is a win or a loss at all, then halve);
    returns the bounds reached, equal once exact, or where the budget ran out."""
    fu, fi = frames(geo)
    return narrow(cur, mask, ply, lo, hi, geo, tt, stats, fu, fi)


@nb.njit(cache=True)
def narrow(cur: np.uint64, mask: np.uint64, ply: np.int64, lo: Score, hi: Score,
           geo: np.ndarray, tt: np.ndarray, stats: np.ndarray, fu: np.ndarray, fi: np.ndarray
           ) -> tuple[Score, Score]:
    """:func:`solve_bounds` with the frames given."""
    quick, score = quick_score(cur, mask, ply, geo)
    if quick:
        return score, score
    big = np.int64(geo[G_CELLS]) + 1
    lo = max(lo, -(big - ply - 4))
    hi = min(hi, big - ply - 3)
    while lo < hi:
        med = lo + (hi - lo) // 2
        if med <= 0 and lo // 2 < med:
            med = lo // 2
        elif med >= 0 and hi // 2 > med:
            med = hi // 2
        r = negamax(cur, mask, ply, med, med + 1, geo, tt, fu, fi, stats)
        if stats[ABORTED] != 0:
            break
        if r <= med:
            hi = r
        else:
            lo = r
    return lo, hi


@nb.njit(cache=True)
def encode(x: np.uint64, o: np.uint64, geo: np.ndarray
           ) -> tuple[np.int64, np.uint64, np.uint64, np.int64]:
    """``(status, cur, mask, ply)`` of a board given by its row-major cells ``x`` and ``o``:
    :data:`LIVE`, :data:`X_WON`, :data:`O_WON` or :data:`FULL` (a draw)."""
    cells = np.int64(geo[G_CELLS])
    base = np.int64(geo[G_CELLBITS])
    bx = bo = _ZERO
    for i in range(cells):
        bit = geo[base + i]
        if (x >> np.uint64(i)) & _ONE:
            bx |= bit
        elif (o >> np.uint64(i)) & _ONE:
            bo |= bit
    k, h = np.int64(geo[G_K]), geo[G_H]
    mask = bx | bo
    ply = popcount(mask)
    cur = bx if popcount(bx) == popcount(bo) else bo
    if _has_line(bx, k, h):
        return np.int64(X_WON), cur, mask, ply
    if _has_line(bo, k, h):
        return np.int64(O_WON), cur, mask, ply
    if ply == cells:
        return np.int64(FULL), cur, mask, ply
    return np.int64(LIVE), cur, mask, ply


@nb.njit(cache=True, nogil=True)
def board_bounds(x: np.uint64, o: np.uint64, lo: Score, hi: Score, geo: np.ndarray,
                 tt: np.ndarray, stats: np.ndarray
                 ) -> tuple[np.int64, np.int64, Score, Score]:
    """``(status, ply, lower, upper)``: :func:`solve_bounds` of a board given by its
    row-major cells without a node budget (the counters reset here), in one call; a
    finished board is only classified (``status``)."""
    stats[NODES] = 0
    stats[BUDGET] = np.int64(0x7FFFFFFFFFFFFFFF)
    stats[ABORTED] = 0
    status, cur, mask, ply = encode(x, o, geo)
    if status != LIVE:
        return status, ply, np.int64(0), np.int64(0)
    lo, hi = solve_bounds(cur, mask, ply, lo, hi, geo, tt, stats)
    return status, ply, lo, hi


@nb.njit(cache=True, nogil=True)
def columns_position(columns: np.ndarray | bytes, geo: np.ndarray
                     ) -> tuple[np.int64, np.int64, np.uint64, np.uint64]:
    """``(status, move, cur, mask)`` after playing ``columns`` (from 0) from the empty
    board of a gravity game. ``status`` is :data:`LIVE`, or what stopped the moves at move
    number ``move`` (from 1): :data:`OUT_OF_RANGE`, :data:`COLUMN_FULL`, or the game was
    already over (:data:`X_WON`, :data:`O_WON`, :data:`FULL`); a finished game with no move
    after it is :data:`X_WON`, :data:`O_WON` or :data:`FULL` with ``move`` past the last."""
    board, bottom, h = geo[G_BOARD], geo[G_BOTTOM], geo[G_H]
    k = np.int64(geo[G_K])
    cols = np.int64(geo[G_COLS])
    cells = np.int64(geo[G_CELLS])
    cur = mask = _ZERO
    over = np.int64(LIVE)
    for i in range(len(columns)):
        c = np.int64(columns[i])
        if c < 0 or c >= cols:
            return np.int64(OUT_OF_RANGE), np.int64(i + 1), cur, mask
        if over != LIVE:
            return over, np.int64(i + 1), cur, mask
        column = board & (((_ONE << h) - _ONE) << np.uint64(c * np.int64(h)))
        m = (mask + bottom) & column
        if m == _ZERO:
            return np.int64(COLUMN_FULL), np.int64(i + 1), cur, mask
        mover = cur | m
        mask |= m
        if _has_line(mover, k, h):
            over = np.int64(X_WON if i % 2 == 0 else O_WON)
        elif i + 1 == cells:
            over = np.int64(FULL)
        cur = mover ^ mask  # the other side is to move
    return over, np.int64(len(columns) + 1), cur, mask


@nb.njit(cache=True, nogil=True)
def columns_bounds(columns: np.ndarray | bytes, lo: Score, hi: Score, geo: np.ndarray,
                   tt: np.ndarray, stats: np.ndarray
                   ) -> tuple[np.int64, np.int64, np.uint64, np.uint64, Score, Score]:
    """``(status, move, cur, mask, lower, upper)``: :func:`columns_position`, then, for a
    live position, :func:`solve_bounds` without a node budget (the counters reset here),
    in one call. ``columns`` may be ``bytes`` (no array to make)."""
    stats[NODES] = 0
    stats[BUDGET] = np.int64(0x7FFFFFFFFFFFFFFF)
    stats[ABORTED] = 0
    status, move, cur, mask = columns_position(columns, geo)
    if status != LIVE:
        return status, move, cur, mask, np.int64(0), np.int64(0)
    lo, hi = solve_bounds(cur, mask, np.int64(len(columns)), lo, hi, geo, tt, stats)
    return status, move, cur, mask, lo, hi


@nb.njit(cache=True, nogil=True)
def columns_best(columns: np.ndarray | bytes, geo: np.ndarray, tt: np.ndarray,
                 stats: np.ndarray) -> tuple[np.int64, np.int64, np.uint64, np.uint64, Score,
                                             np.int64]:
    """``(status, move, cur, mask, score, best)``: :func:`columns_bounds` without a budget,
    then the optimal moves of a live position as a bit per column in ``best`` (a move is
    optimal when its child's score is at most minus the position's: one null-window
    search a move), in one call."""
    stats[NODES] = 0
    stats[BUDGET] = np.int64(0x7FFFFFFFFFFFFFFF)
    stats[ABORTED] = 0
    status, move, cur, mask = columns_position(columns, geo)
    if status != LIVE:
        return status, move, cur, mask, np.int64(0), np.int64(0)
    fu, fi = frames(geo)
    ply = np.int64(len(columns))
    big = np.int64(geo[G_CELLS]) + 1
    score, _ = narrow(cur, mask, ply, -big, big, geo, tt, stats, fu, fi)
    outcomes = np.empty(np.int64(geo[G_COLS]), dtype=np.int64)
    child_outcomes(cur, mask, ply, geo, outcomes)
    h = np.int64(geo[G_H])
    column = (_ONE << np.uint64(h - 1)) - _ONE
    best = np.int64(0)
    for c in range(len(outcomes)):
        outcome = outcomes[c]
        if outcome == -2:
            continue
        if outcome >= 0:  # a win at once, or the last cell's draw
            if (big - ply - 1 if outcome == 1 else 0) == score:
                best |= np.int64(1) << c
            continue
        m = (mask + geo[G_BOTTOM]) & (column << np.uint64(c * h))
        _, chi = narrow(cur ^ mask, mask | m, ply + 1, -score, -score + 1, geo, tt, stats,
                        fu, fi)
        if chi <= -score:
            best |= np.int64(1) << c
    return status, move, cur, mask, score, best


@nb.njit(cache=True, nogil=True)
def child_outcomes(cur: np.uint64, mask: np.uint64, ply: np.int64, geo: np.ndarray,
                   out: np.ndarray) -> None:
    """Each column's move in a live gravity position (``out[c]``): -2 the column is full, 1
    the move wins at once, 0 it fills the board (a draw), -1 its score needs a search."""
    board, bottom, h = geo[G_BOARD], geo[G_BOTTOM], geo[G_H]
    k = np.int64(geo[G_K])
    cells = np.int64(geo[G_CELLS])
    column = (_ONE << (h - _ONE)) - _ONE
    for c in range(np.int64(geo[G_COLS])):
        m = (mask + bottom) & board & (column << np.uint64(c * np.int64(h)))
        if m == _ZERO:
            out[c] = -2
        elif _has_line(cur | m, k, h):
            out[c] = 1
        elif ply + 1 == cells:
            out[c] = 0
        else:
            out[c] = -1


@nb.njit(cache=True, nogil=True)
def solve_many(curs: np.ndarray, masks: np.ndarray, plies: np.ndarray, geo: np.ndarray,
               tt: np.ndarray, stats: np.ndarray, out: np.ndarray) -> None:
    """The exact absolute score of many live positions (``out[i]``), one after another,
    sharing the table. For tests and benchmarks: no budget (``stats[NODES]`` counts)."""
    big = np.int64(geo[G_CELLS]) + 1
    stats[BUDGET] = np.int64(1) << np.int64(62)
    stats[ABORTED] = 0
    for i in range(len(curs)):
        lo, _ = solve_bounds(curs[i], masks[i], plies[i], -big, big, geo, tt, stats)
        out[i] = lo
