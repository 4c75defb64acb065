"""Position keys: seed 003's base-3 integer and a canonical key under the board's symmetries.

``base3_key``: cell ``i`` contributes ``v * 3**i`` with ``v`` = 0 empty, 1 X, 2 O.
``canonical_key``: the smallest base-3 key among the board's symmetric images (8 for a
square, 4 for a rectangle, the mirror for gravity games), so all images of a position share
one key, as seed 004 shares one value among them.

Both come in a scalar form for one board and a vectorised form for numpy arrays of
bitmasks (used by the solver, the statistics and the learners). Both read precomputed
byte tables: a byte of a bitmask maps to its contribution under each symmetry.

A base-3 key fits in 64 bits up to 40 cells. Larger gravity boards (Connect Four's 42)
whose columns fit one word with a spare bit each, ``(rows + 1) * cols <= 64``, take the
**column key** instead: cell ``(row, col)`` weighs ``w = 2**(col * (rows + 1) + height)``
(height from the bottom), X counts ``w`` and O ``2 w``. Per column that sums to
``(2**h - 1) + O's bits`` for a column of height ``h``, and these ranges are disjoint for
different heights, so the key is unique, fits the column's ``rows + 1`` bits, and is still
a sum of per-cell contributions (the byte tables work unchanged). The functions named
``base3`` use it for those games. Larger non-gravity boards have no 64-bit key:
:class:`TooLarge`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

from gameai.games.errors import TooLarge
from gameai.games.mnk.geometry import Geometry

MAX_VECTOR_CELLS = 40  # 3**40 < 2**64
U64 = npt.NDArray[np.uint64]


def column_keys(game: Geometry) -> bool:
    """Whether ``game`` is keyed by columns (a gravity board past 40 cells that fits)."""
    return (game.cells > MAX_VECTOR_CELLS and game.gravity
            and (game.rows + 1) * game.cols <= 64)


def cell_weight(game: Geometry, cell: int) -> int:
    """What an X on ``cell`` adds to the key (an O adds twice as much)."""
    if column_keys(game):
        row, col = divmod(cell, game.cols)
        return 1 << (col * (game.rows + 1) + game.rows - 1 - row)
    return 3**cell


def base3_key(game: Geometry, x: int, o: int) -> int:
    """Seed 003's key of the board ``x``, ``o``: X counts 1 and O counts 2 times
    ``3**index`` (the column key on large gravity boards)."""
    if column_keys(game):
        return sum(cell_weight(game, i) * (1 if x >> i & 1 else 2)
                   for i in range(game.cells) if (x | o) >> i & 1)
    key = 0
    for i in range(game.cells - 1, -1, -1):
        key = key * 3 + (1 if x >> i & 1 else 2 if o >> i & 1 else 0)
    return key


def masks_of_key(game: Geometry, key: int) -> tuple[int, int]:
    """The bitmasks ``x, o`` whose :func:`base3_key` is ``key`` (not validated)."""
    if column_keys(game):
        xs, os_ = masks_from_base3(game, np.array([key], dtype=np.uint64))
        return int(xs[0]), int(os_[0])
    x = o = 0
    for i in range(game.cells):
        key, digit = divmod(key, 3)
        if digit == 1:
            x |= 1 << i
        elif digit == 2:
            o |= 1 << i
    return x, o


def transform_mask(game: Geometry, mask: int, sym: int) -> int:
    """The bitmask ``mask`` moved by symmetry ``sym`` (an index into ``game.symmetries``)."""
    tables = _tables(game).mask_py[sym]
    out = 0
    for chunk, table in enumerate(tables):
        out |= table[mask >> (8 * chunk) & 0xFF]
    return out


def canonical(game: Geometry, x0: int, o0: int) -> tuple[int, int]:
    """``(canonical_key, sym)`` of the board ``x0``, ``o0``: the smallest key over the
    symmetries, and the first symmetry that reaches it, so the board moved by ``sym`` is
    the canonical board and a move ``m`` on it is move ``game.symmetries[sym][m]`` there."""
    tables = _tables(game).key_py
    best_key, best_sym = -1, 0
    for sym, per_chunk in enumerate(tables):
        key = 0
        x, o = x0, o0
        for table in per_chunk:
            key += table[x & 0xFF] + 2 * table[o & 0xFF]
            x >>= 8
            o >>= 8
        if best_key < 0 or key < best_key:
            best_key, best_sym = key, sym
    return best_key, best_sym


def canonical_key(game: Geometry, x: int, o: int) -> int:
    return canonical(game, x, o)[0]


def canonical_keys(game: Geometry, x: U64, o: U64) -> U64:
    """Vectorised :func:`canonical_key` for arrays of bitmasks."""
    keys, _ = canonical_keys_and_syms(game, x, o)
    return keys


def canonical_keys_and_syms(game: Geometry, x: U64, o: U64) -> tuple[U64, npt.NDArray[np.int8]]:
    """Vectorised :func:`canonical`: the canonical keys and, per board, the symmetry used."""
    tables = _vector_tables(game)
    xb = [(x >> np.uint64(8 * c)) & np.uint64(0xFF) for c in range(tables.shape[1])]
    ob = [(o >> np.uint64(8 * c)) & np.uint64(0xFF) for c in range(tables.shape[1])]
    best = np.full(x.shape, np.iinfo(np.uint64).max, dtype=np.uint64)
    best_sym = np.zeros(x.shape, dtype=np.int8)
    for sym in range(tables.shape[0]):
        key = np.zeros(x.shape, dtype=np.uint64)
        for c in range(tables.shape[1]):
            key += tables[sym, c][xb[c]] + np.uint64(2) * tables[sym, c][ob[c]]
        better = key < best
        best = np.where(better, key, best)
        best_sym = np.where(better, np.int8(sym), best_sym)
    return best, best_sym


def symmetric_keys(game: Geometry, x: U64, o: U64) -> U64:
    """The base-3 key of every symmetric image: shape ``(len(x), len(game.symmetries))``."""
    tables = _vector_tables(game)
    out = np.zeros((len(x), tables.shape[0]), dtype=np.uint64)
    for c in range(tables.shape[1]):
        shift = np.uint64(8 * c)
        xb = ((x >> shift) & np.uint64(0xFF)).astype(np.intp)
        ob = ((o >> shift) & np.uint64(0xFF)).astype(np.intp)
        out += tables[:, c][:, xb].T + np.uint64(2) * tables[:, c][:, ob].T
    return out


def base3_keys(game: Geometry, x: U64, o: U64) -> U64:
    """Vectorised :func:`base3_key` (the identity symmetry's table)."""
    tables = _vector_tables(game)
    key = np.zeros(x.shape, dtype=np.uint64)
    for c in range(tables.shape[1]):
        shift = np.uint64(8 * c)
        key += tables[0, c][(x >> shift) & np.uint64(0xFF)]
        key += np.uint64(2) * tables[0, c][(o >> shift) & np.uint64(0xFF)]
    return key


def masks_from_base3(game: Geometry, keys: U64) -> tuple[U64, U64]:
    """Vectorised inverse of :func:`base3_keys`."""
    if column_keys(game):
        return _masks_from_column_keys(game, keys)
    keys = keys.copy()
    x = np.zeros(keys.shape, dtype=np.uint64)
    o = np.zeros(keys.shape, dtype=np.uint64)
    three = np.uint64(3)
    for i in range(game.cells):
        digit = keys % three
        keys //= three
        bit = np.uint64(1 << i)
        x |= np.where(digit == 1, bit, np.uint64(0))
        o |= np.where(digit == 2, bit, np.uint64(0))
    return x, o


def _masks_from_column_keys(game: Geometry, keys: U64) -> tuple[U64, U64]:
    """Per column, the value ``v`` is ``2**h - 1`` plus O's bits for height ``h``."""
    h = game.rows + 1
    x = np.zeros(keys.shape, dtype=np.uint64)
    o = np.zeros(keys.shape, dtype=np.uint64)
    one = np.uint64(1)
    for col in range(game.cols):
        v = (keys >> np.uint64(col * h)) & np.uint64((1 << h) - 1)
        height = np.zeros(keys.shape, dtype=np.uint64)
        for k in range(1, game.rows + 1):
            height += (v >= np.uint64((1 << k) - 1)).astype(np.uint64)
        filled = (one << height) - one
        o_bits = v - filled
        for r in range(game.rows):  # height r is row rows - 1 - r
            cell = (game.rows - 1 - r) * game.cols + col
            occupied = (filled >> np.uint64(r)) & one
            is_o = (o_bits >> np.uint64(r)) & one
            x |= (occupied & ~is_o & one) << np.uint64(cell)
            o |= (is_o & occupied) << np.uint64(cell)
    return x, o


class _Tables:
    def __init__(self, game: Geometry) -> None:
        chunks = (game.cells + 7) // 8
        self.key_py: list[list[list[int]]] = []
        self.mask_py: list[list[list[int]]] = []
        for perm in game.symmetries:
            key_chunks, mask_chunks = [], []
            for chunk in range(chunks):
                key_table, mask_table = [], []
                for byte in range(256):
                    key = mask = 0
                    for bit in range(8):
                        cell = 8 * chunk + bit
                        if byte >> bit & 1 and cell < game.cells:
                            key += cell_weight(game, perm[cell])
                            mask |= 1 << perm[cell]
                    key_table.append(key)
                    mask_table.append(mask)
                key_chunks.append(key_table)
                mask_chunks.append(mask_table)
            self.key_py.append(key_chunks)
            self.mask_py.append(mask_chunks)


@lru_cache(maxsize=64)
def _tables(game: Geometry) -> _Tables:
    return _Tables(game)


@lru_cache(maxsize=64)
def _vector_tables(game: Geometry) -> U64:
    if game.cells > MAX_VECTOR_CELLS and not column_keys(game):
        raise TooLarge(
            f"{game.name} has {game.cells} cells; position keys handle at most "
            f"{MAX_VECTOR_CELLS} (a base-3 key must fit in 64 bits), or gravity boards "
            "with (rows + 1) x cols <= 64 (a column key)"
        )
    return np.array(_tables(game).key_py, dtype=np.uint64)


def transform_masks(game: Geometry, masks: U64, syms: npt.NDArray[np.int8]) -> U64:
    """Vectorised :func:`transform_mask` with one symmetry per element."""
    tables = _vector_mask_tables(game)
    out = np.zeros(masks.shape, dtype=np.uint64)
    for c in range(tables.shape[1]):
        byte = (masks >> np.uint64(8 * c)) & np.uint64(0xFF)
        out |= tables[syms.astype(np.intp), c, byte.astype(np.intp)]
    return out


@lru_cache(maxsize=64)
def _vector_mask_tables(game: Geometry) -> U64:
    return np.array(_tables(game).mask_py, dtype=np.uint64)
