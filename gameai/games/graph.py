"""A small game's whole state graph: every reachable position and every move's successor.

Built once through the game interface (:mod:`gameai.games.interface`), by a breadth-first
walk from the initial position, so it works for any game whose positions fit in memory;
the retrograde solver, the evaluator and the generic learners all work over it with plain
arrays, so none of them needs to know the rules.

Two views share the arrays:

* **raw**: one id per position as played (``raw_keys[i]`` is its key, id 0 the initial
  position); ``raw_children[i, a]`` is the id reached by action ``a``, -1 where ``a`` is
  illegal or the game is over. Self-play walks these, so repetitions are of positions as
  played, not of their symmetric images.
* **canonical**: one id per position up to symmetry (``keys`` sorted); ``canon[i]`` and
  ``sym[i]`` map raw id ``i`` to its canonical id and the symmetry that moves it there;
  ``rep[c]`` is the raw id of the canonical orientation itself, and ``children[c, a]``
  the canonical id after action ``a`` on it. Models store values on these.

``end`` (both views) is 0 for a live position, :data:`LOST` when the side to move has lost
(the opponent completed a line, or it cannot move) and :data:`DRAWN` when the game ended
drawn (a full m,n,k board). Repetition draws are not positions: they are the draw rule,
applied by whoever plays along the graph.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gameai.games.errors import TooLarge
from gameai.games.interface import U64, Game, State

DEFAULT_GRAPH_LIMIT = 2_000_000  # positions; about 1 GB of arrays for 90 actions
LIVE, LOST, DRAWN = 0, 1, 2
I32 = npt.NDArray[np.int32]
I8 = npt.NDArray[np.int8]


@dataclass(frozen=True)
class StateGraph:
    game: Game
    raw_keys: U64
    raw_children: I32  # (raw positions, actions)
    raw_to_move: I8  # 0 X, 1 O
    raw_end: I8
    canon: I32  # raw id -> canonical id
    sym: I8  # raw id -> the symmetry moving it onto its canonical orientation
    keys: U64  # canonical keys, ascending
    rep: I32  # canonical id -> the raw id of the canonical orientation
    children: I32  # (canonical positions, actions)
    to_move: I8
    end: I8

    @property
    def root(self) -> int:
        """The raw id of the initial position (its canonical id is ``canon[0]``)."""
        return 0

    def __len__(self) -> int:
        return len(self.keys)

    def find(self, keys: U64) -> npt.NDArray[np.intp]:
        """Canonical ids of canonical ``keys``; -1 where a key is not in the graph."""
        idx = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        return np.where(self.keys[idx] == keys, idx, -1)

    def canonical_id(self, state: State) -> int:
        """The canonical id of ``state``, or -1 if it is not reachable."""
        key, _ = state.canonical()
        return int(self.find(np.array([key], dtype=np.uint64))[0])


def build_graph(game: Game, *, limit: int = DEFAULT_GRAPH_LIMIT) -> StateGraph:
    """The state graph of ``game`` from its initial position.

    Raises:
        TooLarge: more than ``limit`` positions are reachable.
    """
    root = game.initial()
    states: list[State] = [root]
    index = {root.key: 0}
    edges: list[tuple[int, int, int]] = []
    queue = deque([0])
    while queue:
        i = queue.popleft()
        for action in states[i].legal_actions():
            child = states[i].play(action)
            key = child.key
            j = index.get(key)
            if j is None:
                j = index[key] = len(states)
                if j >= limit:
                    raise TooLarge(f"more than {limit:,} {game.name} positions are reachable; "
                                   "too many for a state graph")
                states.append(child)
                queue.append(j)
            edges.append((i, action, j))
    return graph_from_edges(game, states, edges)


def graph_from_edges(game: Game, states: list[State],
                     edges: list[tuple[int, int, int]]) -> StateGraph:
    """The graph of ``states`` (the initial position first) and its ``edges``
    ``(parent, action, child)`` between their indices."""
    n = len(states)
    raw_children = np.full((n, game.num_actions), -1, dtype=np.int32)
    if edges:
        e = np.array(edges, dtype=np.int64)
        raw_children[e[:, 0], e[:, 1]] = e[:, 2]
    ckeys, syms = game.canonical_many(states)
    return assemble(game, np.fromiter((s.key for s in states), dtype=np.uint64, count=n),
                    raw_children,
                    np.fromiter((s.to_move == "O" for s in states), dtype=np.int8, count=n),
                    np.fromiter((_end(s) for s in states), dtype=np.int8, count=n),
                    ckeys, syms)


def assemble(game: Game, raw_keys: U64, raw_children: I32, raw_to_move: I8, raw_end: I8,
             canonical_keys: U64, syms: I8) -> StateGraph:
    """The graph from per-position arrays in any order (the initial position first):
    raw ids are renumbered in key order, the initial position staying 0, so every way of
    building a game's graph gives the same arrays."""
    order = np.concatenate([[0], 1 + np.argsort(raw_keys[1:], kind="stable")])
    renumber = np.empty(len(order), dtype=np.int32)
    renumber[order] = np.arange(len(order), dtype=np.int32)
    raw_keys, raw_to_move, raw_end = raw_keys[order], raw_to_move[order], raw_end[order]
    kids = raw_children[order]
    raw_children = np.where(kids >= 0, renumber[np.maximum(kids, 0)], -1).astype(np.int32)
    canonical_keys, syms = canonical_keys[order], syms[order]
    keys, inverse = np.unique(canonical_keys, return_inverse=True)
    canon = inverse.astype(np.int32).ravel()
    position = {int(k): i for i, k in enumerate(raw_keys.tolist())}
    try:
        rep = np.array([position[int(k)] for k in keys.tolist()], dtype=np.int32)
    except KeyError as e:  # a rule that is not symmetric, or a root that is not
        raise ValueError(f"{game.name}: a canonical image of a reachable position is not "
                         "reachable; the game's symmetries do not hold") from e
    rep_children = raw_children[rep]
    children = np.where(rep_children >= 0, canon[np.maximum(rep_children, 0)], -1)
    return StateGraph(game, raw_keys, raw_children, raw_to_move, raw_end, canon,
                      syms.astype(np.int8), keys, rep, children.astype(np.int32),
                      raw_to_move[rep], raw_end[rep])


def _end(state: State) -> int:
    if state.winner() is not None:
        return LOST  # the winner moved last: the side to move has lost
    return DRAWN if not state.legal_actions() else LIVE
