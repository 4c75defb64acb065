"""Vectorised helpers that turn learner tables into model rows.

A model row holds, for one canonical position, the value of every move in the canonical
orientation (see :mod:`gameai.models.model`). Learners that share values across
symmetric positions (td) read their tables at the canonical children directly; learners
that keep seed 003's raw keys (tally, qlearning) have seen each position in several
orientations, and :func:`pool_images` merges those observations into one row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gameai.games.game import MnkGame as Game
from gameai.games.keys import (
    U64,
    base3_keys,
    canonical_keys_and_syms,
    cell_weight,
    masks_from_base3,
    symmetric_keys,
)
from gameai.games.positions import has_line_through, playable_masks
from trainer.table import Table

F64 = npt.NDArray[np.float64]


@dataclass
class Children:
    """Every move of ``n`` positions: ``(n, cells)`` arrays, meaningful where ``legal``."""

    x: U64
    o: U64
    legal: npt.NDArray[np.bool_]
    won: npt.NDArray[np.bool_]  # the mover completes a line
    full: npt.NDArray[np.bool_]  # the board is full afterwards
    x_to_move: npt.NDArray[np.bool_]  # (n,)

    @property
    def terminal(self) -> npt.NDArray[np.bool_]:
        return self.won | self.full


def expand(game: Game, x: U64, o: U64) -> Children:
    """The children of the positions ``(x[i], o[i])`` (none of them finished)."""
    cells = game.cells
    bits = np.uint64(1) << np.arange(cells, dtype=np.uint64)
    x_to_move = np.bitwise_count(x) == np.bitwise_count(o)
    legal = (playable_masks(game, x | o)[:, None] & bits) != 0
    mover = np.where(x_to_move, x, o)[:, None] | bits
    won = np.zeros((len(x), cells), dtype=bool)
    for cell in range(cells):
        won[:, cell] = has_line_through(game, mover[:, cell], cell)
    cx = np.where(x_to_move[:, None], mover, x[:, None])
    co = np.where(x_to_move[:, None], o[:, None], mover)
    full = (cx | co) == np.uint64(game.full_mask)
    return Children(cx, co, legal, won & legal, full & legal, x_to_move)


def child_keys(game: Game, x: U64, o: U64, *, canonical: bool = True) -> U64:
    """``(n, cells)``: the canonical (or, with ``canonical=False``, seed 003's raw base-3)
    key after each move of each position, legal or not.

    Adds each move's digit to the parents' keys under every symmetry instead of moving
    every child board: about twenty times faster than keying the children afresh.
    """
    x_to_move = np.bitwise_count(x) == np.bitwise_count(o)
    digit = np.where(x_to_move, 1, 2).astype(np.uint64)[:, None]
    pow3 = np.array([[cell_weight(game, perm[c]) for c in range(game.cells)]
                     for perm in game.symmetries], dtype=np.uint64)
    parents = symmetric_keys(game, x, o) if canonical else base3_keys(game, x, o)[:, None]
    out = np.empty((len(x), game.cells), dtype=np.uint64)
    for cell in range(game.cells):
        out[:, cell] = (parents + digit * pow3[: parents.shape[1], cell]).min(axis=1)
    return out


def table_children(game: Game, table: Table, *, canonical: bool
                   ) -> tuple[U64, Children, npt.NDArray[np.int64]]:
    """The empty board and every position ``table`` holds (its keys, ascending), their
    children, and the slot in ``table`` of each child (-1 where it holds none); keys are
    canonical or, with ``canonical=False``, seed 003's raw base-3 keys."""
    keys = np.unique(np.concatenate([[0], table.keys[table.slots()]]).astype(np.uint64))
    x, o = boards_of(game, keys)
    kids = expand(game, x, o)
    found = table.lookup(child_keys(game, x, o, canonical=canonical).ravel())
    return keys, kids, found.reshape(kids.x.shape)


def boards_of(game: Game, keys: U64) -> tuple[U64, U64]:
    """The boards of base-3 ``keys``."""
    return masks_from_base3(game, np.asarray(keys, dtype=np.uint64))


def to_canonical(game: Game, raw_keys: U64, rows: npt.NDArray[np.generic]
                 ) -> tuple[U64, npt.NDArray[np.generic]]:
    """Each raw position's canonical key, and its per-cell ``rows`` (axis 1 is the cell)
    moved into the canonical orientation."""
    x, o = boards_of(game, raw_keys)
    ckeys, syms = canonical_keys_and_syms(game, x, o)
    inverse = np.array(game.inverse_symmetries, dtype=np.intp)[syms.astype(np.intp)]
    index = inverse.reshape(inverse.shape + (1,) * (rows.ndim - 2))
    return ckeys, np.take_along_axis(rows, index, axis=1)


def pool_images(game: Game, raw_keys: U64, sums: F64) -> tuple[U64, F64]:
    """Sum per-cell quantities ``sums`` (``(n, cells, ...)``) of raw positions over their
    symmetric images: one row per canonical position, in the canonical orientation."""
    ckeys, rows = to_canonical(game, raw_keys, sums)
    unique, inverse = np.unique(ckeys, return_inverse=True)
    pooled = np.zeros((len(unique), *rows.shape[1:]), dtype=np.float64)
    np.add.at(pooled, inverse, rows)
    return unique, pooled
