"""The honest evaluator: how a model plays, judged by exhaustive search and the exact solver.

Figures (the JSON of ``gameai evaluate``):

* ``losses_as_x`` / ``losses_as_o``: seed 003's infallibility test. The model plays its
  best move; the opponent tries every legal reply at every position the model reaches;
  the figure counts the opponent's winning lines (move sequences). 0 means unbeatable.
* ``optimal_move_rate``: the share of every reachable non-terminal position (every board
  any play reaches, each orientation counted: ``optimal_move_positions``, 4,520 for
  tic-tac-toe) where the model's move keeps the game value by the exact solver.
* ``vs_random``: wins, draws and losses in N seeded games against uniformly random moves,
  as X and as O.
* ``checks``: seed 000's five questions (tic-tac-toe only).
* ``model_bytes``: the size of the stored artifact.
* ``draws_as_x`` / ``draws_as_o``: the lines of the same trees that end in a draw.
* ``game_value``: ``x_wins``, ``draw`` or ``o_wins`` with perfect play. In a won game the
  loser loses lines whatever it does, so "unbeatable" means keeping the game's value: no
  losing line in a drawn game, every line won by the winner of a won one
  (:func:`unbeatable`).
* ``served``: for a model that searches at serve time (an n-tuple network), the exhaustive
  opponent's figures against the policy a server plays (the network with its game's
  default search depth, ``policy``: "depth 2"); "unbeatable" is then that policy's, the
  one people meet, not the network's alone (issue 28).
* ``unbeatable`` and ``perfect``: the verdicts of :func:`unbeatable` and :func:`perfect`
  on these figures. ``gameai train --until-unbeatable`` / ``--until-perfect`` stop on
  exactly these functions of a checkpoint's report, so a run that says it stopped
  unbeatable has a final report that says ``"unbeatable": true`` (issue 28).
* ``omitted``: figures left out, each with the reason (a game too large for the solver or
  for the exhaustive opponent).

Everything is vectorised over whole layers of positions through ``Model.move_values``;
a tic-tac-toe model is evaluated in a few milliseconds. This is the evaluator of games
with the m,n,k kernels; any other game (morris, whose positions repeat) is evaluated along
its state graph by :mod:`gameai.trainer.evaluation.graph`, with the same report and the same
meaning of "unbeatable", and :func:`evaluate` sends it there.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from gameai.games import TooLarge, budget
from gameai.games.mnk import sizes
from gameai.games.mnk.board import Board
from gameai.games.mnk.game import MnkGame as Game
from gameai.games.mnk.game import as_mnk
from gameai.games.mnk.keys import U64, symmetric_keys
from gameai.games.mnk.positions import Positions, enumerate_positions
from gameai.games.mnk.scores import back_up
from gameai.games.mnk.solver import score_layers
from gameai.models import Model, NtupleModel
from gameai.trainer.learners.export import Children, expand

CHUNK = 65536  # positions per vectorised step (bounds the memory)
TREE_LIMIT = 2_000_000  # positions the exhaustive opponent may hold in one layer
# boards past this many cells do not try the exhaustive opponent: Connect Four's tree
# passed TREE_LIMIT only after 45 s (as X) and 19 s (as O), measured on a quiet machine
TREE_CELLS = 40
# boards past this many cells do not try the exhaustive opponent against the served policy
# (the network's search at every position of the trees): four-in-a-row's 16 cost 28 s of
# CPU for both sides (a network of 50,000 games), mnk-4x5-4's 20 cells 67 s as X alone
SERVED_TREE_CELLS = 16
# the served policy's trees against the network's own, in CPU time: 28.5 s against the 1.1 s
# the estimate gives the network's trees on four-in-a-row (a network of 50,000 games, 2026-11-26)
SERVED_TREE_FACTOR = 26
RANDOM_GAMES = 1000
# the exhaustive opponent's peak per position of its largest layer and cell (measured with
# tracemalloc: 51-59 on four-in-a-row and connect-4x5-4)
TREE_BYTES_PER_CELL = 60
# CPU seconds of the evaluation's parts on one core, measured with process_time on td,
# qlearning and tally models of four-in-a-row and connect-4x5-4 (docs/trainer.md, "Memory
# is a budget"): the optimal-move count a canonical position (a + b * symmetries: 1.1-2.1
# us for four-in-a-row's 8 symmetries, 0.8-1.0 for connect-4x5-4's 2); the exhaustive
# opponent a position of its trees (1.2-1.7 us), whose two trees held 0.49-0.71 of the
# game's canonical positions for four-in-a-row models (0.02-0.04 for connect-4x5-4: an
# upper bound there); a random game a cell (1.0-1.2 us); the model's packing (zlib) a byte
# of its arrays (11-43 ns)
OPTIMAL_SECONDS = (0.6e-6, 0.1e-6)
TREE_SECONDS_PER_POSITION = 1.5e-6
TREE_SHARE = 0.6
RANDOM_SECONDS_PER_CELL = 1.2e-6
PACK_SECONDS_PER_BYTE = 40e-9


def policy_moves(model: Model, x: U64, o: U64) -> npt.NDArray[np.intp]:
    """The model's move in each live position ``(x[i], o[i])``: the best value, ties to the
    lowest cell, exactly as :meth:`Model.best_move` and :meth:`Model.move_values` choose.

    Uses :meth:`Model.move_values_of_masks`: the positions come from the rules here, so the
    per-board validation that costs ``move_values`` a few microseconds a board (most of the
    time on four-in-a-row's millions) is skipped. ``tests/trainer/test_evaluate.py`` checks
    that both choose the same moves.
    """
    out = np.empty(len(x), dtype=np.intp)
    for start in range(0, len(x), CHUNK):
        values = model.move_values_of_masks(x[start:start + CHUNK], o[start:start + CHUNK])
        out[start:start + CHUNK] = np.argmax(np.where(np.isnan(values), -np.inf, values), axis=1)
    return out


def losses(model: Model, *, side: str, limit: int = TREE_LIMIT) -> int:
    """Opponent's winning lines against the model playing ``side`` ("X" or "O").

    Raises:
        TooLarge: a layer of the tree holds more than ``limit`` positions.
    """
    return line_outcomes(model, side=side, limit=limit)[0]


def line_outcomes(model: Model, *, side: str, limit: int = TREE_LIMIT) -> tuple[int, int]:
    """``(lost, drawn)``: the lines of the exhaustive opponent's tree that the model loses,
    and those that end in a draw, playing ``side``.

    Raises:
        TooLarge: a layer of the tree holds more than ``limit`` positions.
    """
    lost = drawn = 0
    for layer in _tree(model, side, limit):
        ends = layer.chosen & layer.kids.full & ~layer.kids.won
        drawn += int((layer.count[:, None] * ends).sum())
        if not layer.mine:
            lost += int((layer.count[:, None] * (layer.chosen & layer.kids.won)).sum())
    return lost, drawn


def policy_positions(model: Model, *, side: str, limit: int = TREE_LIMIT) -> tuple[U64, U64]:
    """Every position where the model moves when it plays ``side`` against every reply."""
    xs, os_ = [], []
    for layer in _tree(model, side, limit):
        if layer.mine:
            xs.append(layer.x)
            os_.append(layer.o)
    return np.concatenate(xs), np.concatenate(os_)


@dataclass
class _Layer:
    x: U64
    o: U64
    count: npt.NDArray[np.int64]  # lines reaching each position
    kids: Children
    chosen: npt.NDArray[np.bool_]  # (positions, cells): the moves followed
    mine: bool  # the model moves in this layer


def _tree(model: Model, side: str, limit: int) -> Iterator[_Layer]:
    """The layers of the game tree where the model plays its best move and the opponent
    every legal reply; identical positions reached by different orders are merged."""
    game = as_mnk(model.game)
    x = np.zeros(1, dtype=np.uint64)
    o = np.zeros(1, dtype=np.uint64)
    count = np.ones(1, dtype=np.int64)
    ply = 0
    while len(x):
        if len(x) > limit:
            raise TooLarge(f"the exhaustive opponent would hold more than {limit:,} "
                           f"{game.name} positions")
        budget.require(budget.Estimate(
            f"the exhaustive opponent's layer of {len(x):,} {game.name} positions",
            len(x) * TREE_BYTES_PER_CELL * game.cells, positions=len(x)))
        kids = expand(game, x, o)
        mine = (ply % 2 == 0) == (side == "X")
        if mine:
            chosen = np.zeros_like(kids.legal)
            chosen[np.arange(len(x)), policy_moves(model, x, o)] = True
        else:
            chosen = kids.legal
        yield _Layer(x, o, count, kids, chosen, mine)
        rows, cells = np.nonzero(chosen & ~kids.terminal)
        x, o, count = _merge(kids.x[rows, cells], kids.o[rows, cells], count[rows])
        ply += 1


def _merge(x: U64, o: U64, count: npt.NDArray[np.int64]) -> tuple[U64, U64, Any]:
    """Identical positions reached by different move orders, once, with summed counts."""
    if len(x) == 0:
        return x, o, count
    # A lexicographic sort of the (x, o) pairs, then one row per run of equal pairs. Not
    # np.unique(axis=0): it compares rows as structured arrays, which failed under the
    # trainer's threads ("Cannot compare structured arrays unless they have a common
    # dtype", numpy 2.4), and this is faster.
    order = np.lexsort((o, x))
    xs, os_, counts = x[order], o[order], count[order]
    first = np.ones(len(xs), dtype=bool)
    first[1:] = (xs[1:] != xs[:-1]) | (os_[1:] != os_[:-1])
    starts = np.flatnonzero(first)
    return xs[starts], os_[starts], np.add.reduceat(counts, starts)


def require_solver(game: Game) -> None:
    """Refuse, before any memory is spent, a game whose solver table would not fit.

    Raises:
        OverBudget: it would not; the message gives the estimate and the limit.
    """
    estimate = sizes.solve_estimate(game)
    budget.require(budget.Estimate(f"the exact solver's table of {game.name}", estimate.bytes,
                                   estimate.seconds, estimate.positions))


def evaluation_estimate(model: Model, *, random_games: int = RANDOM_GAMES
                        ) -> budget.Estimate:
    """The memory and time :func:`evaluate` will take, estimated before it starts: the exact
    solver's table where it fits the memory limit (its one-off enumeration included), the
    optimal-move count over it, the exhaustive opponent's trees, the random games and the
    model's packing. The memory is the solver table's (the trees' layers are checked one
    by one as they come); a game the solver cannot take costs none, its figures omitted."""
    game = model.game
    what = f"evaluating a {game.name} model"
    if not game.cell_kernels:  # morris: along its state graph, a few thousand positions
        return budget.Estimate(what, 0, 0.1 * random_games / RANDOM_GAMES)
    mnk = as_mnk(game)
    seconds = 2 * random_games * mnk.cells * RANDOM_SECONDS_PER_CELL
    keys = getattr(model, "keys", None)
    if keys is not None:
        seconds += len(keys) * (8 + 4 * mnk.cells) * PACK_SECONDS_PER_BYTE
    need, positions = 0, None
    try:
        solve = sizes.solve_estimate(mnk)
    except TooLarge:
        return budget.Estimate(what, need, seconds)
    positions = solve.positions or 0
    # each tree holds at most TREE_LIMIT positions a layer (beyond, it is omitted)
    trees = min(positions * TREE_SHARE, 2 * TREE_LIMIT * mnk.cells) * TREE_SECONDS_PER_POSITION
    seconds += trees
    if isinstance(model, NtupleModel) and model.policy_depth is None \
            and mnk.cells <= SERVED_TREE_CELLS:
        seconds += SERVED_TREE_FACTOR * trees  # the served policy's trees (issue 28)
    if solve.bytes <= budget.memory_limit().bytes:
        a, b = OPTIMAL_SECONDS
        need = solve.bytes
        seconds += (solve.seconds or 0.0) + positions * (a + b * len(mnk.symmetries))
    return budget.Estimate(what, need, seconds, positions)


@lru_cache(maxsize=4)
def _solved(game: Game) -> tuple[Positions, list[npt.NDArray[np.int8]]]:
    positions = enumerate_positions(Board.empty(game))
    return positions, score_layers(positions)


def optimal_move_rate(model: Model) -> float:
    """Share of every reachable non-terminal position (each orientation of a board counted
    as the board it is) where the model's move keeps the solver's game value.

    Raises:
        TooLarge: the game is too large for a whole-game solver table.
    """
    kept, total = optimal_moves(model)
    return kept / total if total else 1.0


def optimal_moves(model: Model) -> tuple[int, int]:
    """``(kept, positions)``: how many of the reachable non-terminal positions there are
    (4,520 for tic-tac-toe: every board any sequence of legal moves reaches, not one per
    symmetry class) and in how many the model's move keeps the solver's game value.

    Every board is judged as the model answers it, ties to the lowest cell of that board's
    own orientation, so a tie between a winning and a losing move counts wherever the
    orientation makes the model pick the loser. The work stays on the canonical positions:
    the model answers a board from its canonical row permuted by the first symmetry that
    reaches the canonical key (:func:`gameai.games.mnk.keys.canonical`), so each image's answer
    is a permutation of one row, and only distinct images are counted.
    ``tests/trainer/test_evaluate.py`` checks the figures against a board-by-board count.

    Raises:
        TooLarge: the game is too large for a whole-game solver table.
    """
    game = as_mnk(model.game)
    require_solver(game)
    positions, scores = _solved(game)
    perm = np.array(game.symmetries, dtype=np.intp)
    inverse = np.array(game.inverse_symmetries, dtype=np.intp)
    compose = _compositions(perm)
    kept = total = 0
    for d, layer in enumerate(positions.layers[:-1]):
        live = np.flatnonzero(~layer.over)
        for start in range(0, len(live), CHUNK):
            rows = live[start:start + CHUNK]
            child = layer.children[rows]
            value = np.sign(scores[d][rows])
            after = np.sign(back_up(game, scores[d + 1][np.maximum(child, 0)]))
            good = (child >= 0) & (after == value[:, None])
            k, t = _kept_over_images(model, layer.x[rows], layer.o[rows], good, perm,
                                     inverse, compose)
            kept += k
            total += t
    return kept, total


def _compositions(perm: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
    """``compose[s, t]``: the symmetry that moves a cell as ``t`` then ``s`` do."""
    index = {tuple(p): i for i, p in enumerate(perm.tolist())}
    return np.array([[index[tuple(perm[s][perm[t]].tolist())] for t in range(len(perm))]
                     for s in range(len(perm))], dtype=np.intp)


def _kept_over_images(model: Model, x: U64, o: U64, good: npt.NDArray[np.bool_],
                      perm: npt.NDArray[np.intp], inverse: npt.NDArray[np.intp],
                      compose: npt.NDArray[np.intp]) -> tuple[int, int]:
    """Over every distinct image of the canonical boards ``(x, o)``: how many the model
    answers with a move marked in ``good`` (canonical orientation), and how many images."""
    images = symmetric_keys(as_mnk(model.game), x, o)  # (n, syms): the board moved by t
    distinct = [(images[:, :t] != images[:, [t]]).all(axis=1) for t in range(len(perm))]
    values = model.move_values_of_masks(x, o)
    values = np.where(np.isnan(values), -np.inf, values)
    first = np.argmax(values, axis=1)  # ties to the lowest cell, as the model does
    at = np.arange(len(x))
    # One best move: every image plays its image (or a symmetric equal), so the canonical
    # board's answer holds for the whole orbit.
    single = (values == values[at, first][:, None]).sum(axis=1) == 1
    orbit = np.sum(distinct, axis=0)
    kept = int((orbit * (good[at, first] & single)).sum())
    tied = np.flatnonzero(~single)
    if len(tied):
        images, values, good = images[tied], values[tied], good[tied]
        at = np.arange(len(tied))
        key = images.min(axis=1)
        own = np.argmax(images == key[:, None], axis=1)  # the symmetry the model used
        raw = np.empty_like(values)  # the row in the canonical orientation
        np.put_along_axis(raw, perm[own], values, axis=1)
        for t in range(len(perm)):
            # the image moved by t is canonicalised by the first s with key(s after t) == key
            used = np.argmax(images[:, compose[:, t]] == key[:, None], axis=1)
            seen = np.take_along_axis(raw, perm[used], axis=1)  # its values, its orientation
            move = np.argmax(seen, axis=1)
            kept += int((good[at, inverse[t][move]] & distinct[t][tied]).sum())
    return kept, int(orbit.sum())


def game_value(game: Game) -> str:
    """``x_wins``, ``draw`` or ``o_wins`` with perfect play (the solver's value)."""
    require_solver(game)
    _, scores = _solved(game)
    return {1: "x_wins", 0: "draw", -1: "o_wins"}[int(np.sign(scores[0][0]))]


def vs_random(model: Model, *, games: int = RANDOM_GAMES, seed: int = 0) -> dict[str, Any]:
    """Results of ``games`` games against a uniformly random player, as X and as O."""
    rng = np.random.default_rng(seed)
    out = {}
    for side in ("X", "O"):
        result = _play_random(model, side, games, rng)
        out[f"as_{side.lower()}"] = result
    return out


def _play_random(model: Model, side: str, games: int, rng: np.random.Generator
                 ) -> dict[str, int]:
    game = as_mnk(model.game)
    x = np.zeros(games, dtype=np.uint64)
    o = np.zeros(games, dtype=np.uint64)
    outcome = np.zeros(games, dtype=np.int8)  # 1 model won, -1 lost, 0 draw or running
    live = np.ones(games, dtype=bool)
    for ply in range(game.cells):
        idx = np.flatnonzero(live)
        if not len(idx):
            break
        kids = expand(game, x[idx], o[idx])
        mine = (ply % 2 == 0) == (side == "X")
        if mine:
            move = policy_moves(model, x[idx], o[idx])
        else:  # a uniformly random legal move: the largest random key among legal cells
            move = np.argmax(np.where(kids.legal, rng.random(kids.legal.shape), -1.0), axis=1)
        pick = np.arange(len(idx)), move
        x[idx], o[idx] = kids.x[pick], kids.o[pick]
        won = kids.won[pick]
        outcome[idx[won]] = 1 if mine else -1
        live[idx[kids.terminal[pick]]] = False
    return {"win": int((outcome == 1).sum()), "draw": int((outcome == 0).sum()),
            "loss": int((outcome == -1).sum())}


CHECKS = (
    # seed 000's five questions: (name, board, the moves that answer "yes")
    ("opens_in_centre", ["---|---|---"], {4}),
    ("answers_centre_with_corner", ["---|-X-|---"], {0, 2, 6, 8}),
    ("takes_immediate_win", ["OX-|-X-|O--"], {7}),
    ("blocks_single_threat", ["XO-|-O-|--X"], {7}),
    ("answers_corner_with_centre", ["X--|---|---", "--X|---|---", "---|---|X--",
                                    "---|---|--X"], {4}),
)


def checks(model: Model) -> dict[str, bool]:
    """Seed 000's five questions, each true when the model's move answers it (every corner
    opening must be answered with the centre, where the seed's player missed one)."""
    game = as_mnk(model.game)
    result = {}
    for name, patterns, good in CHECKS:
        boards = [Board.parse(game, p) for p in patterns]
        result[name] = all(model.best_move(b).index in good for b in boards)
    return result


def evaluate(model: Model, *, random_games: int = RANDOM_GAMES, seed: int = 0,
             tree_limit: int = TREE_LIMIT) -> dict[str, Any]:
    """Every figure of the report (see the module docstring); omitted ones say why."""
    if not model.game.cell_kernels:
        from gameai.trainer.evaluation.graph import evaluate_graph

        return evaluate_graph(model, random_games=random_games, seed=seed)
    report: dict[str, Any] = {}
    omitted: dict[str, str] = {}
    for side in ("x", "o"):
        if model.game.cells > TREE_CELLS:
            omitted[f"losses_as_{side}"] = omitted[f"draws_as_{side}"] = (
                f"the exhaustive opponent is not tried on boards of more than {TREE_CELLS} "
                f"cells: its tree outgrows {tree_limit:,} positions a layer (Connect Four: "
                "found out after 64 s)")
            continue
        try:
            lost, drawn = line_outcomes(model, side=side.upper(), limit=tree_limit)
            report[f"losses_as_{side}"], report[f"draws_as_{side}"] = lost, drawn
        except TooLarge as e:
            omitted[f"losses_as_{side}"] = omitted[f"draws_as_{side}"] = str(e)
    try:
        kept, positions = optimal_moves(model)
        # rounded down: 1.0 means every position, never 9,999,999 of 10 million
        report["optimal_move_rate"] = math.floor(kept / positions * 1e6) / 1e6 \
            if positions else 1.0
        report["optimal_move_positions"] = positions
        report["game_value"] = game_value(as_mnk(model.game))
    except TooLarge as e:
        omitted["optimal_move_rate"] = omitted["optimal_move_positions"] = str(e)
        omitted["game_value"] = str(e)
    served = served_figures(model, omitted, limit=tree_limit)
    if served is not None:
        report["served"] = served
    report["vs_random"] = vs_random(model, games=random_games, seed=seed)
    if model.game.name == "tictactoe":
        report["checks"] = checks(model)
    else:
        omitted["checks"] = "seed 000's five questions are about the 3x3 board"
    report["model_bytes"] = len(model.to_bytes())
    report["omitted"] = omitted
    return with_verdict(report)


def with_random_games(model: Model, report: dict[str, Any], *, games: int = RANDOM_GAMES,
                      seed: int = 0) -> dict[str, Any]:
    """``report`` (the evaluation of ``model``) with its games against random play played
    again, ``games`` of them: the figures a full :func:`evaluate` gives, without computing
    the exhaustive and solver figures a second time (``judged`` is left out: it is the
    judge's to add)."""
    if model.game.cell_kernels:
        played = vs_random(model, games=games, seed=seed)
    else:
        from gameai.trainer.evaluation.graph import vs_random as graph_vs_random

        played = graph_vs_random(model, games=games, seed=seed)
    out = {k: v for k, v in report.items() if k != "judged"}
    out["vs_random"] = played
    return with_verdict(out)


def served_policy(model: Model) -> tuple[Model, str]:
    """The policy a server plays with ``model`` and its name: a model that searches (an
    n-tuple network) at its game's default depth (or the depth it was given by
    ``with_search``), any other model as it is (``"table"``)."""
    if not isinstance(model, NtupleModel):
        return model, "table"
    if model.policy_depth is not None:
        return model, f"depth {model.policy_depth}"
    return model.with_search(model.default_depth), f"depth {model.default_depth}"


def served_figures(model: Model, omitted: dict[str, str], *, limit: int = TREE_LIMIT
                   ) -> dict[str, Any] | None:
    """The exhaustive opponent's lines lost and drawn against the policy a server plays, as
    X and as O, for a model whose served policy is not its own values (an n-tuple network
    searches at serve time); None for any other model. Where the model's own tree was
    ``omitted``, so is the served one (the search only makes each position dearer)."""
    policy, name = served_policy(model)
    if policy is model:
        return None
    served: dict[str, Any] = {"policy": name}
    if model.game.cells > SERVED_TREE_CELLS:
        served["omitted"] = (
            f"the served policy's exhaustive opponent is not tried on boards of more than "
            f"{SERVED_TREE_CELLS} cells: a search at every position of its trees takes "
            "minutes there (mnk-4x5-4: 67 s of CPU as X alone for a network of 2,000 games)")
        return served
    for side in ("x", "o"):
        if f"losses_as_{side}" in omitted:
            served["omitted"] = omitted[f"losses_as_{side}"]
            return served
    try:
        for side in ("x", "o"):
            served[f"losses_as_{side}"], served[f"draws_as_{side}"] = line_outcomes(
                policy, side=side.upper(), limit=limit)
    except TooLarge as e:
        served = {"policy": name, "omitted": str(e)}
    return served


def with_verdict(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` with its ``unbeatable`` and ``perfect`` verdicts: what the stop rules of
    training read, so the stop and the report it leaves always agree."""
    report["unbeatable"] = unbeatable(report)
    report["perfect"] = perfect(report)
    return report


def must_not_lose(report: dict[str, Any]) -> tuple[str, ...]:
    """The sides that can avoid losing with perfect play: both in a drawn game (or one the
    solver could not settle), only the winner in a won one (in mnk-3x4-3 X wins, so every
    O loses some lines against the exhaustive opponent)."""
    value = report.get("game_value")
    return tuple(side for side in ("X", "O")
                 if value != {"X": "o_wins", "O": "x_wins"}[side])


def unbeatable(report: dict[str, Any]) -> bool:
    """The model keeps the game's value against every reply: no losing line in a drawn
    game; in a won game, the winner wins every line (no loss, no draw) and the loser is
    asked nothing (Three Men's Morris is won by X: an O that loses 4 positions is as good as
    any O). For a model that searches at serve time, the figures are those of the served
    policy (``report["served"]``). False when a needed figure was omitted."""
    value = report.get("game_value")
    figures = report.get("served", report)
    for side in must_not_lose(report):
        if figures.get(f"losses_as_{side.lower()}") != 0:
            return False
        if value in ("x_wins", "o_wins") and figures.get(f"draws_as_{side.lower()}") != 0:
            return False
    return True


def perfect(report: dict[str, Any] | None) -> bool:
    """Proven perfect by the solver: unbeatable, and every move optimal over every reachable
    position. Nothing can be better, so a trainer facing such a model has nothing to do."""
    return bool(report) and unbeatable(report or {}) \
        and (report or {}).get("optimal_move_rate") == 1.0
