"""The position-graph walker: games played along a game's state graph, in numba.

Any game small enough to enumerate (:meth:`gameai.games.Game.state_graph`: Three Men's
Morris has 5,390 positions) is played here without knowing its rules: a position is an
integer id, its moves are a slice of two flat arrays (``move_action``, ``move_child``),
and the graph says where a game has ended (``end``). Keys are ids (a position's own, or
its canonical id for afterstates shared by symmetric images), so values live in dense
arrays (:class:`~gameai.trainer.learners.stores.DenseTable`) and nothing is hashed.

The draw rule is applied as the game states it: a move to a position that has already
occurred twice in the game draws it (the third occurrence). So a game's length is
bounded (``2 * positions + 1`` plies) and the kernels size their buffers by it.

An exploring start here is a position drawn uniformly from every live one, with
probability ``random_starts`` (a parameter this walker adds to every learner's,
:func:`with_random_starts`); ``exploring_starts`` (the bitboard walker's random openings)
is not read here.

The state of a game is ``(position, ply, first move, end of its moves)``: the position's
moves are ``move_ptr[position]:move_ptr[position + 1]`` of the flat move arrays, read
once a ply. The walker's scratch arrays count the occurrences of the positions of the
game being played (``seen``) and list them (``path``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, cast

import numba as nb
import numpy as np
import numpy.typing as npt

from gameai.games import Game
from gameai.games.graph import DRAWN, LOST, StateGraph
from gameai.models import Model, ModelInfo
from gameai.trainer.learners.base import Params, require
from gameai.trainer.learners.stores import (
    Column,
    DenseTable,
    PositionStore,
    implement,
)
from gameai.trainer.walkers import interface as walk
from gameai.trainer.walkers.interface import (
    DRAW,
    GO_ON,
    WIN,
    Finish,
    Nonempty,
    RowsOf,
    Walker,
    table_model,
)
from gameai.trainer.walkers.rng import below, uniform

if TYPE_CHECKING:
    from gameai.trainer.learners.export import ExportShape

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


class GraphSpec(NamedTuple):
    """A state graph as flat arrays the kernels can read (:func:`make_graph_spec`)."""

    move_ptr: I64  # moves of position p: move_ptr[p]:move_ptr[p + 1]
    move_action: I64
    move_child: I64
    end: npt.NDArray[np.int8]  # 0 live, 1 the side to move has lost, 2 drawn
    mover: npt.NDArray[np.int8]  # 0 X, 1 O
    canon: I64  # the canonical id of each position
    cells: int  # the board's cells (tally's length weighting)
    max_moves: int
    max_plies: int


def make_graph_spec(graph: StateGraph) -> GraphSpec:
    assert (LOST, DRAWN) == (WIN, DRAW) == (1, 2)  # the kernels read these codes
    legal = graph.raw_children >= 0
    parent, action = np.nonzero(legal)  # row-major: each position's moves by action id
    counts = legal.sum(axis=1)
    ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    n = len(graph.raw_keys)
    return GraphSpec(ptr, action.astype(np.int64),
                     graph.raw_children[parent, action].astype(np.int64),
                     graph.raw_end.astype(np.int8), graph.raw_to_move.astype(np.int8),
                     graph.canon.astype(np.int64), graph.game.cells,
                     int(counts.max()) if n else 0, 2 * n + 2)


@nb.njit(cache=True)
def move_result(spec: GraphSpec, child: int, seen: npt.NDArray[np.int32]) -> int:
    """What moving to ``child`` does for the mover: ``WIN``, ``DRAW`` (a drawn end or a
    third occurrence) or ``GO_ON``."""
    if spec.end[child] == 1:
        return 1
    if spec.end[child] == 2 or seen[child] >= 2:
        return 2
    return 0


@nb.njit(cache=True)
def start(rng: npt.NDArray[np.uint64], live: I64, random_starts: float) -> int:
    """Where a game starts: the initial position, or with probability ``random_starts`` a
    live position drawn uniformly (exploring starts)."""
    if random_starts > 0.0 and uniform(rng) < random_starts:
        return live[below(rng, len(live))]
    return 0


@nb.njit(cache=True)
def forget(seen: npt.NDArray[np.int32], path: I64, length: int) -> None:
    """Clear the occurrence counts of one game's positions (``path[:length]``)."""
    for i in range(length):
        seen[path[i]] = 0


# -- the compiled walker -----------------------------------------------------------------
# Inlined into the kernels and written as :mod:`gameai.trainer.walkers.bitboard` explains:
# no call on a move, no array held in a variable, one way out, so that numba's reference
# counts on the spec's arrays cancel out.

class PositionGraphSpec(NamedTuple):
    """The walker as the kernels take it: the graph's arrays and the walker's scratch."""

    move_ptr: I64
    move_child: I64
    end: npt.NDArray[np.int8]
    mover: npt.NDArray[np.int8]
    afterstate: I64  # each position's afterstate key: its canonical id (or itself)
    live: I64  # the positions an exploring start draws from
    seen: npt.NDArray[np.int32]  # scratch: occurrences in the game being played
    path: I64  # scratch: the positions of the game being played
    cells: int
    max_moves: int
    max_plies: int


def _begin_impl(spec, rng, share):
    s = start(rng, spec.live, share)  # once a game: a call is fine here
    spec.seen[s] = 1
    spec.path[0] = s
    return (s, 0, spec.move_ptr[s], spec.move_ptr[s + 1])


def _move_result_impl(spec, state, moves, j):
    """WIN where the move ends the game lost for the side to move next, DRAW where it ends
    it drawn or repeats a position for the third time, else GO_ON."""
    c = spec.move_child[state[2] + j]
    end = spec.end[c]
    seen = spec.seen[c]
    return WIN if end == 1 else DRAW if end == 2 or seen >= 2 else GO_ON


def _play_impl(spec, state, moves, j):
    c = spec.move_child[state[2] + j]
    spec.seen[c] += 1
    spec.path[state[1] + 1] = c
    return (c, state[1] + 1, spec.move_ptr[c], spec.move_ptr[c + 1])


def _finish_impl(spec, state):
    for i in range(state[1] + 1):
        spec.seen[spec.path[i]] = 0


IMPLEMENTATIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    walk.begin: _begin_impl,
    walk.exploring: lambda spec, state: False,
    walk.starts_inside: lambda spec, state: state[0] != 0,
    walk.mover: lambda spec, state: spec.mover[state[0]],
    walk.list_moves: lambda spec, state, moves: state[3] - state[2],
    walk.move_result: _move_result_impl,
    walk.afterstate_key: lambda spec, state, moves, j:
        spec.afterstate[spec.move_child[state[2] + j]],
    walk.position_afterstate_key: lambda spec, state: spec.afterstate[state[0]],
    walk.position_key: lambda spec, state: state[0],
    walk.child_key: lambda spec, state, moves, j: spec.move_child[state[2] + j],
    walk.move_row: lambda spec, state, slot, moves, j: state[2] + j,
    walk.play: _play_impl,
    walk.finish: _finish_impl,
}
for stub, impl in IMPLEMENTATIONS.items():
    implement(stub, PositionGraphSpec, impl)


# -- parameters -----------------------------------------------------------------------------

_WITH_RANDOM_STARTS: dict[type[Params], type[Params]] = {}


def with_random_starts(base: type[Params]) -> type[Params]:
    """``base`` and ``random_starts``: the share of games that start from a position drawn
    uniformly from every live position rather than from the initial one (exploring
    starts: positions that good play never reaches still get played). One class a base."""
    if base in _WITH_RANDOM_STARTS:
        return _WITH_RANDOM_STARTS[base]

    @dataclass(frozen=True)
    class WithRandomStarts(base):  # type: ignore[valid-type, misc]
        random_starts: float = 0.2

        def check(self) -> None:
            super().check()
            require(0 <= self.random_starts <= 1, "random_starts", "between 0 and 1")

    WithRandomStarts.__name__ = WithRandomStarts.__qualname__ = f"{base.__name__}WithRandomStarts"
    _WITH_RANDOM_STARTS[base] = WithRandomStarts
    return WithRandomStarts


# -- the Python half ----------------------------------------------------------------------

@dataclass
class GraphMoves:
    """:class:`gameai.trainer.walkers.interface.Moves` of a state graph, given the child
    of every move (-1: no move); ``afterstate`` and ``child`` are looked up when read."""

    store: PositionStore
    children: I64
    result: npt.NDArray[np.int8]
    mover: npt.NDArray[np.intp]
    row: I64  # -1: moves of canonical positions, which have no per-move rows

    @property
    def legal(self) -> npt.NDArray[np.bool_]:
        return self.children >= 0

    @property
    def afterstate(self) -> I64:
        return self.store.lookup(np.maximum(self.children, 0))

    @property
    def child(self) -> I64:
        return self.store.lookup(np.maximum(self.children, 0))


class PositionGraphWalker(Walker):
    """The position-graph walker's Python half; its stores are dense tables by id."""

    method = "position_graph"

    def __init__(self, game: Game, *, symmetric: bool) -> None:
        super().__init__(game, symmetric=symmetric)
        try:
            self.graph = game.state_graph()
        except (ValueError, MemoryError) as e:
            raise ValueError(f"{game.name}: the learners need its state graph: {e}") from e
        graph = self.graph
        self.graph_spec = g = make_graph_spec(graph)
        positions = len(graph.raw_keys)
        self.perms = np.array(game.action_symmetries, dtype=np.intp)
        self.parent = np.repeat(np.arange(positions), np.diff(g.move_ptr))  # of each move
        self.spec = PositionGraphSpec(
            g.move_ptr, g.move_child, g.end, g.mover,
            g.canon if symmetric else np.arange(positions, dtype=np.int64),
            np.flatnonzero(graph.raw_end == 0).astype(np.int64),
            np.zeros(positions, dtype=np.int32), np.zeros(g.max_plies, dtype=np.int64),
            g.cells, g.max_moves, g.max_plies)

    @classmethod
    def params_type(cls, base: type[Params]) -> type[Params]:
        return with_random_starts(base)

    def start_share(self, params: Any) -> float:
        return float(params.random_starts)

    def new_store(self, columns: dict[str, Column], *, keys: Literal["afterstates", "positions"],
                  visits: str, per_move: dict[str, Column] | None = None) -> DenseTable:
        """A dense table over canonical ids (afterstates of a symmetric walker) or over
        positions; a per-move column has a row for every move of every position."""
        size = len(self.graph) if keys == "afterstates" and self.symmetric \
            else len(self.graph.raw_keys)
        moves = len(self.graph_spec.move_child)
        return DenseTable(size, columns, visits=visits,
                          per_move={name: (dtype, shape, initial, moves)
                                    for name, (dtype, shape, initial) in
                                    (per_move or {}).items()})

    def reserve(self, store: PositionStore, games: int,
                export: ExportShape | None = None) -> None:
        """Nothing to do: a dense table has every row (and its export's room was
        checked when it was made)."""

    def afterstate_model(self, store: PositionStore, rows_of: RowsOf, *, what: str,
                         info: ModelInfo) -> Model:
        """The rows of every live canonical position (a symmetric walker's store)."""
        graph = self.graph
        kids = graph.children.astype(np.int64)
        movers = np.broadcast_to(graph.to_move.astype(np.intp)[:, None], kids.shape)
        no_rows = np.full(kids.shape, -1, dtype=np.int64)  # no per-move store here
        moves = GraphMoves(store, kids, graph.end[np.maximum(kids, 0)], movers, no_rows)
        return self._model(rows_of(moves), info)

    def pooled_model(self, store: PositionStore, sums_of: RowsOf, finish: Finish, *,
                     what: str, width: int, held: int, seconds: float, start: bool,
                     info: ModelInfo, nonempty: Nonempty | None = None) -> Model:
        """The sums of every move of every position (one flat list), added up over the
        images of the positions the store holds (and of the initial one, with
        ``start``)."""
        spec = self.graph_spec
        moves = GraphMoves(store, spec.move_child, spec.end[spec.move_child],
                           spec.mover[self.parent].astype(np.intp),
                           np.arange(len(spec.move_child)))
        visited = np.zeros(len(self.graph.raw_keys), dtype=bool)
        visited[store.held()] = True
        if start:
            visited[0] = True
        pooled = self.pooled_rows(sums_of(moves), visited)
        return self._model(finish(self.graph.to_move == 0, pooled), info)

    def pooled_rows(self, sums: F64, visited: npt.NDArray[np.bool_]) -> F64:
        """Per-move quantities of raw positions (``sums``: ``(moves, k)`` aligned with the
        graph spec's moves), summed over each canonical position's images in its canonical
        orientation: ``(canonical positions, num_actions, k)``. Only ``visited`` raw
        positions contribute."""
        spec, graph = self.graph_spec, self.graph
        keep = visited[self.parent] & (spec.end[self.parent] == 0)
        parent, action, rows = self.parent[keep], spec.move_action[keep], sums[keep]
        slot = self.perms[graph.sym[parent].astype(np.intp), action]
        out = np.zeros((len(graph), self.game.num_actions, sums.shape[1]), dtype=np.float64)
        np.add.at(out, (graph.canon[parent], slot), rows)
        return out

    def model_afterstates(self, model: Model, store: PositionStore) -> tuple[I64, F64]:
        """Every (canonical position, move) the model values that leads to a live
        afterstate: an afterstate reached by several takes the value of the last."""
        rows = self._model_rows(model)
        kids = self.graph.children
        known = (kids >= 0) & ~np.isnan(rows) & (self.graph.end[np.maximum(kids, 0)] == 0)
        return store.claim(kids[known]), rows[known]

    def model_successors(self, model: Model, store: PositionStore
                         ) -> tuple[I64, I64, npt.NDArray[np.intp], F64]:
        """Every raw position (each orientation) and its known moves to live positions."""
        graph = self.graph
        values = self._raw_rows(model)
        kids = graph.raw_children
        known = (kids >= 0) & ~np.isnan(values)
        known &= graph.raw_end[np.maximum(kids, 0)] == 0
        parent, action = np.nonzero(known)
        children = kids[parent, action].astype(np.int64)
        movers = graph.raw_to_move[parent].astype(np.intp)
        return store.claim(parent), children, movers, values[parent, action]

    def model_moves(self, model: Model, store: PositionStore
                    ) -> tuple[I64, I64, npt.NDArray[np.intp], F64]:
        """The known moves of live raw positions (each orientation), as one flat list."""
        spec, graph = self.graph_spec, self.graph
        rows = self._model_rows(model)
        slot = self.perms[graph.sym[self.parent].astype(np.intp), spec.move_action]
        v = rows[graph.canon[self.parent], slot]
        known = np.flatnonzero(~np.isnan(v) & (spec.end[self.parent] == 0))
        parent = self.parent[known]
        return store.claim(parent), known, spec.mover[parent].astype(np.intp), v[known]

    def _model(self, rows: F64, info: ModelInfo) -> Model:
        """A table model of rows over the graph's canonical positions (all-NaN rows and
        finished positions dropped)."""
        live = self.graph.end == 0
        return table_model(self.game, info, self.graph.keys[live], rows[live])

    def _model_rows(self, model: Model) -> F64:
        """``model``'s values on the graph's canonical positions, ``(positions, actions)``
        (NaN where it has none)."""
        return cast(F64, self.table(model).canonical_values(self.graph.keys)
                    .astype(np.float64))

    def _raw_rows(self, model: Model) -> F64:
        """``model``'s values on every raw position, in that position's orientation."""
        graph = self.graph
        perms = self.perms[graph.sym.astype(np.intp)]
        return cast(F64, np.take_along_axis(self._model_rows(model)[graph.canon], perms, axis=1))
