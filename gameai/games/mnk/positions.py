"""Every position reachable from a root, one layer per move, up to symmetry.

Layer ``d`` holds the canonical positions ``d`` moves after the root, sorted by canonical
key, with the bitmasks of a representative board and whether the game is over there. For
each position of a layer, ``children[p, cell]`` is the index in the next layer of the
position reached by playing ``cell`` (-1 where the move is illegal or the game is over).

The work is vectorised over whole layers with numpy: all of four-in-a-row's 1,217,977
canonical positions take seconds, where a recursive search in Python would take hours.

Memory is a budget (:mod:`gameai.games.budget`): from the empty board the whole game's
estimate (:mod:`gameai.games.mnk.sizes`) is checked before anything is allocated, and before
each layer is expanded the layers held plus what the expansion needs are checked again,
so a tree that outgrows the limit is refused before the memory is spent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gameai.games import budget
from gameai.games.errors import TooLarge
from gameai.games.mnk import sizes
from gameai.games.mnk.board import Board, playable_masks
from gameai.games.mnk.geometry import Geometry, geometry_of
from gameai.games.mnk.keys import U64, canonical_keys_and_syms, symmetric_keys, transform_masks


@dataclass
class Layer:
    keys: U64  # sorted canonical keys
    x: U64  # representative boards, aligned with keys
    o: U64
    won: npt.NDArray[np.bool_]  # the player who just moved has a line
    over: npt.NDArray[np.bool_]  # won, or the board is full
    children: npt.NDArray[np.int32]  # (positions, cells) index into the next layer, or -1

    def __len__(self) -> int:
        return len(self.keys)


@dataclass
class Positions:
    game: Geometry
    root_ply: int
    layers: list[Layer]

    @property
    def canonical_count(self) -> int:
        return sum(len(layer) for layer in self.layers)

    def orbit_sizes(self, layer: Layer) -> npt.NDArray[np.int64]:
        """How many distinct boards each canonical position stands for (8 / its stabiliser)."""
        images = np.sort(symmetric_keys(self.game, layer.x, layer.o), axis=1)
        return (1 + (images[:, 1:] != images[:, :-1]).sum(axis=1)).astype(np.int64)


def enumerate_positions(root: Board, *, limit: int | None = None,
                        memory: budget.Limit | None = None) -> Positions:
    """All positions reachable from ``root``, by layers.

    Args:
        root: a valid board (finished boards give one layer).
        limit: the most canonical positions to hold (default: as many as ``memory`` allows).
        memory: the memory limit (default: :func:`gameai.games.budget.memory_limit`).
    Raises:
        TooLarge: the game has more than 40 cells or the tree exceeds ``limit``.
        OverBudget: the tree would not fit in ``memory`` (checked before each layer, and for
            the whole game before anything, from the empty board).
    """
    game = root.game
    memory = memory or budget.memory_limit()
    if root.ply == 0:
        budget.require(sizes.solve_estimate(game), memory)
    one = np.array([root.x], dtype=np.uint64), np.array([root.o], dtype=np.uint64)
    keys, syms = canonical_keys_and_syms(game, *one)
    x, o = transform_masks(game, one[0], syms), transform_masks(game, one[1], syms)
    won = np.array([root.winner() is not None])
    layers: list[Layer] = []
    total = 0
    ply = root.ply
    while len(keys):
        total += len(keys)
        if limit is not None and total > limit:
            raise TooLarge(
                f"more than {limit:,} canonical positions follow this {game.name} board; "
                "too many to solve exactly"
            )
        over = won | ((x | o) == np.uint64(game.full_mask))
        _require_expansion(game, total, x[~over] | o[~over], memory)
        layer = Layer(keys, x, o, won, over, np.full((len(keys), game.cells), -1, np.int32))
        layers.append(layer)
        keys, x, o, won = _expand(game, layer, x_to_move=ply % 2 == 0)
        ply += 1
    return Positions(game, root.ply, layers)


def _require_expansion(game: Geometry, held: int, occupied: U64, memory: budget.Limit) -> None:
    """Refuse the next expansion if the layers held and its children would not fit."""
    children = int(np.bitwise_count(playable_masks(game, occupied)).sum())
    need = held * sizes.held_bytes(game) + children * sizes.candidate_bytes(game)
    if need > memory.bytes:
        budget.require(budget.Estimate(f"solving this {game.name} position", need,
                                       positions=held + children), memory)


def live_boards(game: object, *, limit: int | None = None) -> list[str]:
    """The board text of every canonical position of ``game`` (an m,n,k game) that is legal
    and not over, fewest pieces first (up to ``limit`` of them): real queries for
    benchmarks and load.

    Tic-tac-toe has 627 (765 canonical positions, 138 of them finished).
    """
    game = geometry_of(game)
    out: list[str] = []
    for layer in enumerate_positions(Board.empty(game)).layers:
        for x, o, over in zip(layer.x.tolist(), layer.o.tolist(), layer.over.tolist(),
                              strict=True):
            if not over:
                out.append(str(Board(game, x, o)))
                if limit is not None and len(out) >= limit:
                    return out
    return out


def _expand(
    game: Geometry, layer: Layer, *, x_to_move: bool
) -> tuple[U64, U64, U64, npt.NDArray[np.bool_]]:
    """The next layer, filling ``layer.children`` on the way."""
    live = np.flatnonzero(~layer.over)
    px, po = layer.x[live], layer.o[live]
    playable = playable_masks(game, px | po)
    parts_x, parts_o, parts_won, parts_parent, parts_cell = [], [], [], [], []
    for cell in range(game.cells):
        bit = np.uint64(1 << cell)
        sel = (playable & bit) != 0
        if not sel.any():
            continue
        cx, co = px[sel], po[sel]
        mover = (cx | bit) if x_to_move else (co | bit)
        won = has_line_through(game, mover, cell)
        parts_x.append(mover if x_to_move else cx)
        parts_o.append(co if x_to_move else mover)
        parts_won.append(won)
        parts_parent.append(live[sel])
        parts_cell.append(np.full(len(cx), cell, dtype=np.int32))
    if not parts_x:
        empty = np.zeros(0, dtype=np.uint64)
        return empty, empty, empty, np.zeros(0, dtype=bool)
    cx, co = np.concatenate(parts_x), np.concatenate(parts_o)
    keys, syms = canonical_keys_and_syms(game, cx, co)
    unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    layer.children[np.concatenate(parts_parent), np.concatenate(parts_cell)] = inverse
    rep_syms = syms[first]
    return (
        unique,
        transform_masks(game, cx[first], rep_syms),
        transform_masks(game, co[first], rep_syms),
        np.concatenate(parts_won)[first],
    )


def has_line_through(game: Geometry, masks: U64, cell: int) -> npt.NDArray[np.bool_]:
    """Whether each of ``masks`` holds a line through ``cell``: vectorised, the test of
    whether a move there has just won."""
    hit = np.zeros(masks.shape, dtype=bool)
    for line in game.lines_through[cell]:
        m = np.uint64(line)
        hit |= (masks & m) == m
    return hit
