"""The exact solver: the game value of a position, every optimal move, and how far the end is.

Scores are negamax values from the side to move's view, one small integer per position:

    win in t plies   ->  BIG - t      (BIG = cells + 1, so every win scores > 0)
    draw             ->  0
    loss in t plies  ->  t - BIG

so the best move maximises the negated, one-ply-older score of its child: a faster win and
a slower loss score higher. Scores come from a backward pass over
:func:`~gameai.games.mnk.positions.enumerate_positions`. The whole-game table of a small game
(tic-tac-toe, four-in-a-row) is computed once and kept in the table cache the process
installed (:mod:`gameai.games.cache`: on disk, by :mod:`gameai.host`); other positions are
solved from their own subtree. Whether a whole-game table is built is a question of
memory, not of cells (:mod:`gameai.games.budget`): a game whose estimate fits the limit
gets one (four-in-a-row, connect-4x5-4), and any other position is solved from its own
subtree, refused before its memory is spent when that does not fit either.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

from gameai.games import budget
from gameai.games.cache import TableCache, table_cache
from gameai.games.errors import TooLarge
from gameai.games.interface import MoveOutcome, Solution
from gameai.games.mnk import sizes
from gameai.games.mnk.board import Board
from gameai.games.mnk.geometry import Geometry
from gameai.games.mnk.keys import U64, canonical_keys
from gameai.games.mnk.positions import Positions, enumerate_positions
from gameai.games.mnk.scores import back_up, big, describe_score

TABLE_FORMAT = 1
TABLE_SECONDS = 10.0  # estimated build time up to which a whole-game table is preferred


class ScoreTable:
    """Scores of a set of canonical positions, looked up by canonical key."""

    def __init__(self, game: Geometry, keys: U64, scores: npt.NDArray[np.int8]) -> None:
        order = np.argsort(keys, kind="stable")
        self.game = game
        self.keys = keys[order]
        self.scores = scores[order]

    def __len__(self) -> int:
        return len(self.keys)

    def lookup(self, keys: U64) -> npt.NDArray[np.int8]:
        """Scores for canonical ``keys``; raises ``KeyError`` if one is not in the table."""
        idx = np.searchsorted(self.keys, keys)
        idx = np.minimum(idx, len(self.keys) - 1)
        if not np.array_equal(self.keys[idx], keys):
            raise KeyError("position not in the solver table")
        return self.scores[idx]


def score_layers(positions: Positions) -> list[npt.NDArray[np.int8]]:
    """Negamax scores of every layer, by a backward pass (children are in the next layer)."""
    game = positions.game
    result: list[npt.NDArray[np.int8]] = [np.zeros(0, np.int8)] * len(positions.layers)
    for d in range(len(positions.layers) - 1, -1, -1):
        layer = positions.layers[d]
        scores = np.where(layer.won, -big(game), 0).astype(np.int16)
        live = ~layer.over
        if live.any() and d + 1 < len(positions.layers):
            child = layer.children[live]
            child_scores = result[d + 1][np.maximum(child, 0)]
            candidates = np.where(child >= 0, back_up(game, child_scores), -(2 * big(game)))
            scores[live] = candidates.max(axis=1)
        result[d] = scores.astype(np.int8)
    return result


def solve_positions(positions: Positions) -> ScoreTable:
    scores = score_layers(positions)
    keys = np.concatenate([layer.keys for layer in positions.layers])
    return ScoreTable(positions.game, keys, np.concatenate(scores))


def game_table(game: Geometry) -> ScoreTable:
    """The scores of every position of ``game``, from the table cache (:mod:`gameai.games.cache`)
    or computed (and kept there).

    Raises:
        OverBudget: the game's table would not fit the memory limit (checked first).
    """
    budget.require(sizes.solve_estimate(game))
    return _game_table(game, table_cache())


def whole_game_fits(game: Geometry) -> bool:
    """Whether the whole-game table of ``game`` fits the memory limit (and its keys fit a
    position table at all)."""
    try:
        budget.require(sizes.solve_estimate(game))
    except TooLarge:
        return False
    return True


def table_is_quick(game: Geometry) -> bool:
    """Whether ``game`` is best answered from its whole-game table: it fits the memory
    limit and builds within ``TABLE_SECONDS`` (once; it is cached on disk). Larger games
    are searched (:mod:`gameai.games.mnk.search`) where their board fits a bitboard."""
    if not whole_game_fits(game):
        return False
    return (sizes.solve_estimate(game).seconds or 0.0) <= TABLE_SECONDS


@lru_cache(maxsize=8)
def _game_table(game: Geometry, cache: TableCache | None) -> ScoreTable:
    name = f"solver-{game.name}-v{TABLE_FORMAT}"
    kept = cache.load(name) if cache is not None else None
    if kept is not None:
        keys, scores = kept.get("keys"), kept.get("scores")
        if keys is not None and scores is not None and keys.dtype == np.uint64 \
                and scores.dtype == np.int8 and keys.shape == scores.shape:
            return ScoreTable(game, keys, scores)
    table = solve_positions(enumerate_positions(Board.empty(game)))  # missing or damaged
    if cache is not None:
        cache.save(name, {"keys": table.keys, "scores": table.scores})
    return table


def table_for(board: Board, *, limit: int | None = None) -> ScoreTable:
    """A table that covers ``board`` and everything after it: the whole-game table when it
    fits the memory limit, else the board's own subtree."""
    if limit is None and whole_game_fits(board.game):
        return game_table(board.game)
    return solve_positions(enumerate_positions(board, limit=limit))


def solve(board: Board, *, limit: int | None = None, time_limit: float | None = None
          ) -> Solution:
    """The value, the outcome of every legal move (best first) and the distance to the end.

    One entry point, two solvers: a game whose whole-game table is quick to build
    (:func:`table_is_quick`: four-in-a-row, connect-4x5-4) answers from it (built once,
    cached on disk); larger boards are searched (:mod:`gameai.games.mnk.search`: alpha-beta
    on bitboards) when their bitboard fits, and only otherwise enumerate the board's
    subtree. Giving ``limit`` asks for the subtree table.

    Args:
        limit: the most canonical positions a subtree enumeration may hold.
        time_limit: seconds the search may take (``None``: until solved).
    Raises:
        GameOver: the board is finished.
        SearchTimeout: (a ``TooLarge``) the search ran out of time; it carries the
            bounds proved for each move.
        TooLarge: more than ``limit`` canonical positions follow the board.
        OverBudget: they would not fit the memory limit (refused before it is spent).
    """
    from gameai.games.mnk import search

    board.require_playable()
    if search.supports(board.game) and not (limit is None and table_is_quick(board.game)):
        return search.searcher(board.game).solve(board, time_limit=time_limit)
    table = table_for(board, limit=limit)
    return solution_from_table(board, table)


def searches(game: object) -> bool:
    """Whether :func:`solve` answers ``game``'s positions by search (an m,n,k game whose
    bitboard fits and whose whole-game table is not quick to build), not from a table."""
    from gameai.games.mnk import search

    return isinstance(game, Geometry) and search.supports(game) and not table_is_quick(game)


def solution_from_table(board: Board, table: ScoreTable) -> Solution:
    game = board.game
    moves = board.legal_moves()
    children = [board.play(m) for m in moves]
    xs = np.array([c.x for c in children], dtype=np.uint64)
    os_ = np.array([c.o for c in children], dtype=np.uint64)
    child_scores = table.lookup(canonical_keys(game, xs, os_))
    scores = back_up(game, child_scores)
    best = int(scores.max())
    outcomes = [
        MoveOutcome(m, m // game.cols, m % game.cols, *describe_score(game, int(s), board),
                    int(s), int(s) == best)
        for m, s in zip(moves, scores, strict=True)
    ]
    outcomes.sort(key=lambda mo: (-mo.score, mo.move))
    outcome, distance = describe_score(game, best, board)
    return Solution(board, int(np.sign(best)), outcome, distance, tuple(outcomes))
