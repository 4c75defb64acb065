"""The generic self-play engine: games played along a game's state graph, in numba.

Any game small enough to enumerate (:meth:`gameai.games.Game.state_graph`: Three Men's
Morris has 5,390 positions) is played here without knowing its rules: a position is an
integer id, its moves are a slice of two flat arrays (``move_action``, ``move_child``),
and the graph says where a game has ended (``end``). Values live in dense arrays indexed
by position id, so there is no hashing either.

The draw rule is applied as the game states it: a move to a position that has already
occurred twice in the game draws it (the third occurrence). So a game's length is
bounded (``2 * positions + 1`` plies) and the kernels size their buffers by it.

:class:`GraphLearner` is the base of the three graph learners
(:mod:`tests.trainer.reference.td_graph`,
:mod:`tests.trainer.reference.qlearning_graph`, :mod:`tests.trainer.reference.tally_graph`).
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np
import numpy.typing as npt

from gameai.games import Game
from gameai.games.graph import DRAWN, LOST, StateGraph
from gameai.models import Model, ModelInfo, TableModel
from gameai.trainer.learners.base import Params, require
from tests.trainer.reference.base import Learner  # with the table-model helpers it had
from tests.trainer.reference.bitboard import below, uniform

F64 = npt.NDArray[np.float64]
GO_ON, WIN, DRAW = 0, 1, 2  # what a move does for its mover


class GraphSpec(NamedTuple):
    """A state graph as flat arrays the kernels can read (:func:`make_graph_spec`)."""

    move_ptr: npt.NDArray[np.int64]  # moves of position p: move_ptr[p]:move_ptr[p + 1]
    move_action: npt.NDArray[np.int64]
    move_child: npt.NDArray[np.int64]
    end: npt.NDArray[np.int8]  # 0 live, 1 the side to move has lost, 2 drawn
    mover: npt.NDArray[np.int8]  # 0 X, 1 O
    canon: npt.NDArray[np.int64]  # the canonical id of each position
    cells: int  # the board's cells (tally's length weighting)
    max_moves: int
    max_plies: int


def make_graph_spec(graph: StateGraph) -> GraphSpec:
    assert (LOST, DRAWN) == (1, 2)  # the kernels read these codes
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
    """What moving to ``child`` does for the mover: :data:`WIN`, :data:`DRAW` (a drawn end
    or a third occurrence) or :data:`GO_ON`."""
    if spec.end[child] == 1:
        return 1
    if spec.end[child] == 2 or seen[child] >= 2:
        return 2
    return 0


@nb.njit(cache=True)
def start(rng: npt.NDArray[np.uint64], live: npt.NDArray[np.int64], random_starts: float) -> int:
    """Where a game starts: the initial position, or with probability ``random_starts`` a
    live position drawn uniformly (exploring starts)."""
    if random_starts > 0.0 and uniform(rng) < random_starts:
        return live[below(rng, len(live))]
    return 0


@nb.njit(cache=True)
def forget(seen: npt.NDArray[np.int32], path: npt.NDArray[np.int64], length: int) -> None:
    """Clear the occurrence counts of one game's positions (``path[:length]``)."""
    for i in range(length):
        seen[path[i]] = 0


def check_random_starts(value: float) -> None:
    require(0 <= value <= 1, "random_starts", "between 0 and 1")


class GraphLearner(Learner):
    """A learner that plays along the game's state graph (any game small enough to
    enumerate); values are kept in dense arrays by position id.

    Each graph learner's parameters add ``random_starts`` to its algorithm's: the share of
    games that start from a live position drawn uniformly rather than from the initial
    one (exploring starts), so that positions good play never reaches get played too.
    """

    def __init__(self, game: Game, *, seed: int = 0, params: Params | None = None) -> None:
        super().__init__(game, seed=seed, params=params)
        try:
            self.graph = game.state_graph()
        except (ValueError, MemoryError) as e:
            raise ValueError(f"{game.name}: the learners need its state graph: {e}") from e
        self.spec = make_graph_spec(self.graph)
        self.seen = np.zeros(len(self.graph.raw_keys), dtype=np.int32)
        self.path = np.zeros(self.spec.max_plies, dtype=np.int64)
        self.perms = np.array(game.action_symmetries, dtype=np.intp)
        self.live = np.flatnonzero(self.graph.raw_end == 0).astype(np.int64)

    def pooled_rows(self, sums: F64, visited: npt.NDArray[np.bool_]) -> F64:
        """Per-move quantities of raw positions (``sums``: ``(moves, k)`` aligned with the
        graph spec's moves), summed over each canonical position's images in its canonical
        orientation: ``(canonical positions, num_actions, k)``. Only ``visited`` raw
        positions contribute."""
        spec, graph = self.spec, self.graph
        parent = np.repeat(np.arange(len(spec.move_ptr) - 1), np.diff(spec.move_ptr))
        keep = visited[parent] & (spec.end[parent] == 0)
        parent, action, rows = parent[keep], spec.move_action[keep], sums[keep]
        slot = self.perms[graph.sym[parent].astype(np.intp), action]
        out = np.zeros((len(graph), self.game.num_actions, sums.shape[1]), dtype=np.float64)
        np.add.at(out, (graph.canon[parent], slot), rows)
        return out

    def graph_model(self, rows: F64, info: ModelInfo | None) -> Model:
        """A table model of rows over the graph's canonical positions (all-NaN rows and
        finished positions dropped)."""
        live = self.graph.end == 0
        return self.table_model(self.graph.keys[live], rows[live], info)

    def model_rows(self, model: Model) -> F64:
        """``model``'s values on the graph's canonical positions, ``(positions, actions)``
        (NaN where it has none)."""
        if not isinstance(model, TableModel):
            raise ValueError("warm start needs a table model")
        if model.game is not self.game:
            raise ValueError(f"the model plays {model.game.name}, not {self.game.name}")
        return model.canonical_values(self.graph.keys).astype(np.float64)
