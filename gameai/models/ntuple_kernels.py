"""The n-tuple network's compiled kernels: values of afterstates, incrementally.

An n-tuple network (Lucas; Thill, Bagheri and Konen) values a board by reading a few
fixed sets of cells, the *tuples*: the states of a tuple's ``n`` cells form an index into
that tuple's weight table, and the value is ``tanh`` of the sum of the weights read. Every
tuple is read under each of the board's symmetries (the *physical* tuples here), all
images sharing their tuple's table, so symmetric positions get equal values by
construction.

A cell's state is seen from one player's side: 0 empty, 1 that player's piece, 2 the
opponent's, and for gravity games with ``states == 4``, 3 for an empty cell that can be
played now (the lowest empty cell of its column). A value is always that of an
*afterstate* from the side of the player who just moved: +1 a certain win, 0 a draw, -1 a
certain loss.

Incremental evaluation: a move changes one cell (and under gravity makes the cell above it
playable), so a candidate afterstate's value is the position's sum plus the change of the
physical tuples through those cells only (:func:`set_cell`), not a new read of the board.

Everything here takes a :class:`Net` (the geometry as flat arrays) and weight tables: one
view's kernels ``W (tuples, states ** n)``, the whole network's ``W3 (sides, tuples,
states ** n)``. With one side the tables are shared by both players (what X learns about a
shape, O knows too); with two, each player has its own (``W3[0]`` values the afterstates X
made, ``W3[1]`` those O made), so the network knows whose stone is whose: Connect Four's
threats are worth more on one player's rows than on the other's (:func:`side_table`).
``tests/models/test_ntuple.py`` checks every kernel against a plain-Python reference.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np
import numpy.typing as npt

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]
_ONE = np.uint64(1)

EMPTY, MINE, THEIRS, PLAYABLE = 0, 1, 2, 3


class Net(NamedTuple):
    """An n-tuple network's geometry on one board, as arrays the kernels read."""

    cells: int
    cols: int
    gravity: bool
    states: int  # 3, or 4 with "empty and playable now" told apart (gravity games)
    full: np.uint64
    bottom: np.uint64
    line_ptr: I64  # lines through cell c: line_masks[line_ptr[c]:line_ptr[c + 1]]
    line_masks: U64
    pt_table: I64  # (physical tuples,): the weight table each one reads
    pt_cells: I64  # (physical tuples, n): its cells, in index order
    cell_ptr: I64  # physical tuples through cell c: cell_pt[cell_ptr[c]:cell_ptr[c + 1]]
    cell_pt: I64
    cell_pow: I64  # the cell's weight in that tuple's index: states ** position
    order: I64  # the cells from the centre outwards: the order a search tries moves in


# -- rules --------------------------------------------------------------------------------

@nb.njit(cache=True)
def playable(net: Net, occupied: np.uint64) -> np.uint64:
    """Cells a move may go to: the empty ones, or under gravity the lowest of each column."""
    empty = net.full & ~occupied
    if not net.gravity:
        return empty
    return empty & ((occupied >> np.uint64(net.cols)) | net.bottom)


@nb.njit(cache=True)
def wins(net: Net, mine: np.uint64, cell: int) -> bool:
    """Whether ``mine`` (already including ``cell``) has a line through ``cell``."""
    for i in range(net.line_ptr[cell], net.line_ptr[cell + 1]):
        line = net.line_masks[i]
        if mine & line == line:
            return True
    return False


@nb.njit(cache=True)
def above(net: Net, cell: int) -> int:
    """The cell that a gravity move at ``cell`` makes playable (-1: none, or no gravity)."""
    if net.gravity and net.states == 4 and cell >= net.cols:
        return cell - net.cols
    return -1


@nb.njit(cache=True, inline="always")
def side_table(W3: npt.NDArray[np.float32], side: int) -> F32:
    """The tables that value ``side``'s afterstates (0: X's, 1: O's): its own with two
    sides, else the shared ones."""
    return W3[side % W3.shape[0]]


# -- reading the board --------------------------------------------------------------------

@nb.njit(cache=True)
def cell_states(net: Net, mine: np.uint64, theirs: np.uint64, out: I64) -> None:
    """Each cell's state seen by the owner of ``mine``."""
    play = playable(net, mine | theirs) if net.states == 4 else np.uint64(0)
    for c in range(net.cells):
        bit = _ONE << np.uint64(c)
        if mine & bit:
            out[c] = MINE
        elif theirs & bit:
            out[c] = THEIRS
        elif play & bit:
            out[c] = PLAYABLE
        else:
            out[c] = EMPTY


@nb.njit(cache=True)
def tuple_indices(net: Net, states: I64, idx: I64) -> None:
    """Every physical tuple's index into its table, read from the cells' ``states``."""
    n = net.pt_cells.shape[1]
    for p in range(net.pt_cells.shape[0]):
        s = 0
        m = 1
        for j in range(n):
            s += states[net.pt_cells[p, j]] * m
            m *= net.states
        idx[p] = s


@nb.njit(cache=True)
def total(net: Net, W: F32, idx: I64) -> float:
    """The sum of the weights the physical tuples read (the value before ``tanh``)."""
    s = 0.0
    for p in range(idx.shape[0]):
        s += W[net.pt_table[p], idx[p]]
    return s


@nb.njit(cache=True)
def set_cell(net: Net, W: F32, idx: I64, states: I64, cell: int, state: int) -> float:
    """Set ``cell`` to ``state``, updating the indices of the tuples through it only;
    returns the change of :func:`total`."""
    change = state - states[cell]
    if change == 0:
        return 0.0
    d = 0.0
    for i in range(net.cell_ptr[cell], net.cell_ptr[cell + 1]):
        p = net.cell_pt[i]
        t = net.pt_table[p]
        old = W[t, idx[p]]
        idx[p] += change * net.cell_pow[i]
        d += W[t, idx[p]] - old
    states[cell] = state
    return d


@nb.njit(cache=True)
def set_index(net: Net, idx: I64, states: I64, cell: int, state: int) -> None:
    """:func:`set_cell` without reading a weight: for taking a change back, whose effect on
    the total is already known."""
    change = state - states[cell]
    for i in range(net.cell_ptr[cell], net.cell_ptr[cell + 1]):
        idx[net.cell_pt[i]] += change * net.cell_pow[i]
    states[cell] = state


@nb.njit(cache=True)
def afterstate_sum(net: Net, W: F32, idx: I64, states: I64, base: float, cell: int) -> float:
    """:func:`total` after the owner of ``states`` plays ``cell`` (``base``: the total
    now); ``idx`` and ``states`` are left as they were."""
    old = states[cell]
    up = above(net, cell)
    d = set_cell(net, W, idx, states, cell, MINE)
    if up >= 0:
        d += set_cell(net, W, idx, states, up, PLAYABLE)
        set_index(net, idx, states, up, EMPTY)
    set_index(net, idx, states, cell, old)
    return base + d


# -- the learner's hot path: each physical tuple's current weight kept beside its index ----

@nb.njit(cache=True)
def read_weights(net: Net, W: F32, idx: I64, cur: F32) -> float:
    """``cur[p]``: the weight physical tuple ``p`` reads now; returns their sum
    (:func:`total`)."""
    s = 0.0
    for p in range(idx.shape[0]):
        cur[p] = W[net.pt_table[p], idx[p]]
        s += cur[p]
    return s


@nb.njit(cache=True)
def set_cell_cur(net: Net, W: F32, idx: I64, cur: F32, states: I64, cell: int,
                 state: int) -> float:
    """:func:`set_cell` that keeps ``cur`` (:func:`read_weights`) up to date, so a changed
    tuple costs one read of the table (its new weight), not two."""
    change = state - states[cell]
    if change == 0:
        return 0.0
    d = 0.0
    for i in range(net.cell_ptr[cell], net.cell_ptr[cell + 1]):
        p = net.cell_pt[i]
        idx[p] += change * net.cell_pow[i]
        w = W[net.pt_table[p], idx[p]]
        d += w - cur[p]
        cur[p] = w
    states[cell] = state
    return d


@nb.njit(cache=True)
def afterstate_delta(net: Net, W: F32, idx: I64, cur: F32, states: I64, cell: int,
                     pend: I64, touched: I64) -> float:
    """The change of :func:`total` if the owner of ``states`` played ``cell`` (and, under
    gravity, the cell above became playable), nothing modified: each physical tuple through
    those cells is read once, at its new index (``pend``: zeros of one per physical tuple,
    left zero; ``touched``: scratch of the same size)."""
    nt = 0
    change = MINE - states[cell]
    for i in range(net.cell_ptr[cell], net.cell_ptr[cell + 1]):
        p = net.cell_pt[i]
        touched[nt] = p
        nt += 1
        pend[p] = change * net.cell_pow[i]
    up = above(net, cell)
    if up >= 0:
        change = PLAYABLE - states[up]
        if change != 0:
            for i in range(net.cell_ptr[up], net.cell_ptr[up + 1]):
                p = net.cell_pt[i]
                if pend[p] == 0:
                    touched[nt] = p
                    nt += 1
                pend[p] += change * net.cell_pow[i]
    d = 0.0
    for k in range(nt):
        p = touched[k]
        d += W[net.pt_table[p], idx[p] + pend[p]] - cur[p]
        pend[p] = 0
    return d


@nb.njit(cache=True)
def move_values(net: Net, W3: npt.NDArray[np.float32], x: U64, o: U64, out: F32) -> None:
    """Each legal move's afterstate value for the side to move in positions ``(x, o)``
    (NaN where illegal): 1 for a move that wins, 0 for one that fills the board, else the
    network's value. The positions must be valid and unfinished."""
    states = np.empty(net.cells, dtype=np.int64)
    idx = np.empty(net.pt_cells.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        xi, oi = x[i], o[i]
        x_moves = _popcount(xi) == _popcount(oi)
        mine = xi if x_moves else oi
        theirs = oi if x_moves else xi
        W = side_table(W3, 0 if x_moves else 1)
        cell_states(net, mine, theirs, states)
        tuple_indices(net, states, idx)
        base = total(net, W, idx)
        legal = playable(net, xi | oi)
        for c in range(net.cells):
            bit = _ONE << np.uint64(c)
            if not legal & bit:
                out[i, c] = np.nan
            elif wins(net, mine | bit, c):
                out[i, c] = 1.0
            elif (xi | oi | bit) == net.full:
                out[i, c] = 0.0
            else:
                out[i, c] = np.tanh(afterstate_sum(net, W, idx, states, base, c))


@nb.njit(cache=True)
def _popcount(v: np.uint64) -> int:
    n = 0
    while v:
        v &= v - _ONE
        n += 1
    return n


# -- search over the learned values ----------------------------------------------------------

NET_SCALE = 0.95  # the network's values in a search: below every proven win or loss
WIN_STEP = 1e-3  # a proven win at ply p (the root's move is ply 1) is worth 1 - (p - 1) / 1000
TIE = 1e-6  # best_only: a move within this of the best is searched exactly (float32 ties)


@nb.njit(cache=True)
def _winning_cells(net: Net, theirs: np.uint64, occupied: np.uint64) -> np.uint64:
    """The playable cells where the owner of ``theirs`` would win at once."""
    legal = playable(net, occupied)
    found = np.uint64(0)
    for c in range(net.cells):
        bit = _ONE << np.uint64(c)
        if legal & bit and wins(net, theirs | bit, c):
            found |= bit
    return found


@nb.njit(cache=True)
def _threatened(net: Net, theirs: np.uint64, threats: np.uint64, cell: int) -> bool:
    """Whether the owner of ``theirs`` wins at once after the other side plays ``cell``,
    given ``threats``, its winning cells before that move (:func:`_winning_cells`): the
    move takes one of them away and, under gravity, makes the cell above playable."""
    if threats & ~(_ONE << np.uint64(cell)):
        return True
    if net.gravity and cell >= net.cols:
        up = cell - net.cols
        return wins(net, theirs | (_ONE << np.uint64(up)), up)
    return False


@nb.njit(cache=True)
def _play(net: Net, W3: npt.NDArray[np.float32], states: I64, idx: I64,
          base: npt.NDArray[np.float64], m: int, cell: int) -> None:
    """Play ``m``'s piece at ``cell`` in both sides' views, ``base`` following the totals."""
    up = above(net, cell)
    for side in range(2):
        st, ix = states[side], idx[side]
        W = side_table(W3, side)
        base[side] += set_cell(net, W, ix, st, cell, MINE if side == m else THEIRS)
        if up >= 0:
            base[side] += set_cell(net, W, ix, st, up, PLAYABLE)


@nb.njit(cache=True)
def _take_back(net: Net, states: I64, idx: I64, cell: int) -> None:
    """Undo :func:`_play` at ``cell`` in both views without reading a weight: the caller
    kept the totals from before the move and restores them."""
    up = above(net, cell)
    for side in range(2):
        if up >= 0:
            set_index(net, idx[side], states[side], up, EMPTY)
        set_index(net, idx[side], states[side], cell, PLAYABLE if net.states == 4 else EMPTY)


@nb.njit(cache=True)
def _leaf(net: Net, W3: npt.NDArray[np.float32], states: I64, idx: I64,
          base: npt.NDArray[np.float64], m: int, theirs: np.uint64, threats: np.uint64,
          cell: int, ply: int) -> float:
    """The value for ``m`` of playing ``cell`` (not a win, not the last cell) at the search's
    horizon: a loss if the opponent then wins at once (``threats``: its winning cells
    before the move), else the network's value."""
    if _threatened(net, theirs, threats, cell):
        return -(1.0 - WIN_STEP * ply)
    W = side_table(W3, m)
    return NET_SCALE * np.tanh(afterstate_sum(net, W, idx[m], states[m], base[m], cell))


@nb.njit(cache=True)
def _ordered(net: Net, W3: npt.NDArray[np.float32], states: I64, idx: I64,
             base: npt.NDArray[np.float64], m: int, legal: np.uint64, by_value: bool,
             out: I64, score: npt.NDArray[np.float64]) -> int:
    """The legal moves of ``m`` into ``out`` in the order to search them, and how many:
    centre first, or with ``by_value`` (the subtree is deep enough to repay it) the
    network's best afterstate first, so that alpha-beta cuts off sooner."""
    k = 0
    for i in range(net.cells):
        c = net.order[i]
        if legal & (_ONE << np.uint64(c)):
            if by_value:
                v = afterstate_sum(net, side_table(W3, m), idx[m], states[m], base[m], c)
                j = k  # insertion sort, stable: ties keep the centre order
                while j > 0 and score[j - 1] < v:
                    score[j] = score[j - 1]
                    out[j] = out[j - 1]
                    j -= 1
                score[j] = v
                out[j] = c
            else:
                out[k] = c
            k += 1
    return k


@nb.njit(cache=True)
def _negamax(net: Net, W3: npt.NDArray[np.float32], states: I64, idx: I64,
             base: npt.NDArray[np.float64],
             x: np.uint64, o: np.uint64, m: int, depth: int, alpha: float, beta: float,
             ply: int, counter: I64) -> float:
    """The value for ``m``, to move at ``(x, o)`` (unfinished), of searching ``depth`` more
    plies after its move (``ply``: this move's distance from the root, 1 for the root's):
    alpha-beta negamax, iterative (an explicit stack of frames, so that numba caches it;
    it cannot cache a recursive function). ``counter`` is ``[nodes, limit]``: each position
    entered and each horizon move valued counts a node; past a positive limit the search
    stops at once (the caller discards its value and the arrays it left half-played)."""
    n = depth + 1
    fx = np.empty(n, dtype=np.uint64)
    fo = np.empty(n, dtype=np.uint64)
    legal = np.empty(n, dtype=np.uint64)
    fa = np.empty(n)
    fb = np.empty(n)
    best = np.empty(n)
    order = np.empty((n, net.cells), dtype=np.int64)  # each frame's moves, in search order
    count = np.empty(n, dtype=np.int64)
    score = np.empty(net.cells)
    nxt = np.empty(n, dtype=np.int64)  # the next index into order[sp] to try
    move = np.empty(n, dtype=np.int64)  # the move being searched below
    kept = np.empty((n, 2))  # each frame's totals, restored when its move is taken back
    threats = np.zeros(n, dtype=np.uint64)  # at the horizon: the opponent's winning cells
    sp = 0
    fx[0], fo[0], fa[0], fb[0] = x, o, alpha, beta
    entering = True
    ret = 0.0
    while True:
        side = (m + sp) & 1
        mine = fx[sp] if side == 0 else fo[sp]
        theirs = fo[sp] if side == 0 else fx[sp]
        occupied = fx[sp] | fo[sp]
        done = False
        if entering:
            entering = False
            counter[0] += 1
            if counter[1] > 0 and counter[0] > counter[1]:
                return 0.0  # over the node budget: abandoned
            legal[sp] = playable(net, occupied)
            best[sp] = -2.0
            nxt[sp] = 0
            for c in range(net.cells):
                bit = _ONE << np.uint64(c)
                if legal[sp] & bit and wins(net, mine | bit, c):
                    best[sp] = 1.0 - WIN_STEP * (ply + sp - 1)
                    done = True
                    break
            if not done:
                count[sp] = _ordered(net, W3, states, idx, base, side, legal[sp],
                                     depth - sp >= 2, order[sp], score)
                if sp == depth:
                    threats[sp] = _winning_cells(net, theirs, occupied)
        else:  # a child's value has come back
            _take_back(net, states, idx, move[sp])
            base[0], base[1] = kept[sp, 0], kept[sp, 1]
            v = -ret
            if v > best[sp]:
                best[sp] = v
            if best[sp] > fa[sp]:
                fa[sp] = best[sp]
            done = fa[sp] >= fb[sp]
        while not done and nxt[sp] < count[sp]:
            c = order[sp, nxt[sp]]
            nxt[sp] += 1
            bit = _ONE << np.uint64(c)
            if (occupied | bit) == net.full:
                v = 0.0
            elif sp == depth:
                counter[0] += 1
                v = _leaf(net, W3, states, idx, base, side, theirs, threats[sp], c, ply + sp)
            else:
                kept[sp, 0], kept[sp, 1] = base[0], base[1]
                _play(net, W3, states, idx, base, side, c)
                move[sp] = c
                fx[sp + 1] = fx[sp] | bit if side == 0 else fx[sp]
                fo[sp + 1] = fo[sp] | bit if side == 1 else fo[sp]
                fa[sp + 1] = -fb[sp]
                fb[sp + 1] = -fa[sp]
                sp += 1
                entering = True
                break
            if v > best[sp]:
                best[sp] = v
            if best[sp] > fa[sp]:
                fa[sp] = best[sp]
            done = fa[sp] >= fb[sp]
        if entering:
            continue
        ret = best[sp]  # every move tried, or a cut-off
        if sp == 0:
            return ret
        sp -= 1


@nb.njit(cache=True)
def search_values(net: Net, W3: npt.NDArray[np.float32], x: np.uint64, o: np.uint64,
                  depth: int, out: F32, best_only: bool, counter: I64) -> None:
    """Each legal move's value for the side to move at ``(x, o)`` (valid, unfinished) by
    alpha-beta ``depth`` plies beyond it over the network's values (NaN where illegal).

    A win is worth ``1 - (p - 1) / 1000`` at ply ``p`` (so a faster win is better), a loss
    the opposite, the network's values are scaled by ``NET_SCALE`` to stay below any
    proven result, and at the horizon a move after which the opponent wins at once is a
    loss: so even ``depth`` 0 takes a win in one and blocks a loss in one.

    With ``best_only`` only the best moves' values are exact: the root's moves are
    searched best afterstate first, each in the window above the best value found so far
    less ``TIE``, so a move that cannot reach it stops early and gets an upper bound below
    it. The best value, and every move that has it, come out as in the full search.

    ``counter`` (``[nodes, limit]``) counts the nodes searched; a positive limit stops the
    search once passed, leaving ``counter[0] > counter[1]`` and ``out`` to be discarded."""
    m = 0 if _popcount(x) == _popcount(o) else 1
    states = np.empty((2, net.cells), dtype=np.int64)
    idx = np.empty((2, net.pt_cells.shape[0]), dtype=np.int64)
    base = np.zeros(2)
    for side in range(2):
        mine, theirs = (x, o) if side == 0 else (o, x)
        cell_states(net, mine, theirs, states[side])
        tuple_indices(net, states[side], idx[side])
        base[side] = total(net, side_table(W3, side), idx[side])
    mine = x if m == 0 else o
    theirs = o if m == 0 else x
    legal = playable(net, x | o)
    threats = _winning_cells(net, theirs, x | o) if depth == 0 else np.uint64(0)
    order = np.empty(net.cells, dtype=np.int64)
    score = np.empty(net.cells)
    count = _ordered(net, W3, states, idx, base, m, legal, best_only and depth >= 1, order,
                     score)
    for c in range(net.cells):
        out[c] = np.nan
    alpha = -2.0
    for i in range(count):
        c = order[i]
        bit = _ONE << np.uint64(c)
        if wins(net, mine | bit, c):
            out[c] = 1.0
        elif (x | o | bit) == net.full:
            out[c] = 0.0
        elif depth == 0:
            counter[0] += 1
            out[c] = _leaf(net, W3, states, idx, base, m, theirs, threats, c, 1)
        else:
            kept = base.copy()
            _play(net, W3, states, idx, base, m, c)
            nx, no = (x | bit, o) if m == 0 else (x, o | bit)
            out[c] = -_negamax(net, W3, states, idx, base, nx, no, 1 - m, depth - 1, -2.0,
                               -alpha, 2, counter)
            if counter[1] > 0 and counter[0] > counter[1]:
                return  # over the node budget: the caller discards ``out``
            _take_back(net, states, idx, c)
            base[:] = kept
        if best_only and out[c] - TIE > alpha:
            alpha = out[c] - TIE


@nb.njit(cache=True)
def search_many(net: Net, W3: npt.NDArray[np.float32], x: U64, o: U64, depth: int,
                out: F32) -> None:
    """:func:`search_values` of each position ``(x[i], o[i])`` into ``out[i]``."""
    counter = np.zeros(2, dtype=np.int64)  # nodes, unlimited
    for i in range(x.shape[0]):
        search_values(net, W3, x[i], o[i], depth, out[i], False, counter)
