"""Whole-game review: every ply of a game with the model's value of the position before
the move and of the move played, the model's best move, and a judgment of the move.

**Judgments by the loss in value.** A move's loss is the model's value of the position for
its mover (its best move's value) less its value of the move played: 0 for the best move,
up to 2 for a move from a sure win to a sure loss. Values lie in [-1, 1] as Lichess's
winning chances do, and the thresholds are Lichess's game review's on those (an
inaccuracy from 0.1, a mistake from 0.2, a blunder from 0.3):

============  ==========================
judgment      loss
============  ==========================
best          0 (the best move, or one the model values as high)
good          below 0.1
inaccuracy    0.1 to below 0.2
mistake       0.2 to below 0.3
blunder       0.3 or more
============  ==========================

**Judgments the solver proves.** Where the game's exact solver proves the position within
the review's budget (``solve_ms``, shared by all plies), a move that turns a forced win
into a draw or a loss *throws away a forced win*, and one that turns a draw into a forced
loss *walks into a forced loss*: these replace the judgment by value, since the solver's
word is exact and the model's values are estimates. A move the solver finds keeps the
outcome keeps its judgment by value (a slower win the model values lower stays an
inaccuracy: the model's view of it). The solver works from the last ply back: late
positions are proved fastest, and a search's table then helps the earlier ones.

**Input.** A game with a move notation gives ``moves`` (Connect Four's columns ``"4453"``,
morris's ``"5 1 9 3"``); any game may give ``actions`` instead, the action ids from the
start (a placement on cell ``c`` is ``c``; a movement from ``f`` to ``t`` is
``cells + f * cells + t``), each checked against the rules as it is replayed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from gameai.games import Game, GameError, IllegalMove, State
from gameai.games.interface import Solution
from gameai.models import Evaluation, MoveValue, SearchReport
from gameai.service import core
from gameai.service.analysis import SOLUTIONS
from gameai.service.errors import InvalidRequest, RequestTooLarge
from gameai.service.exact import ExactPlay
from gameai.service.registry import Registry
from gameai.service.search import (
    MAX_DEPTH,
    MAX_NODES,
    MAX_TIME_MS,
    Budget,
    SearchUsed,
    budget,
    check_solve_ms,
)
from gameai.service.session import ModelSession

MAX_PLIES = 200  # the longest game reviewed in one request
DEFAULT_SOLVE_MS = 100  # the solver's budget for a review that gives none
LOSS_EPSILON = 1e-6  # values carry 6 decimals: a smaller loss is none
# (lowest loss, judgment), from the worst down: Lichess's thresholds on winning chances
THRESHOLDS = ((0.3, "blunder"), (0.2, "mistake"), (0.1, "inaccuracy"), (LOSS_EPSILON, "good"))
JUDGMENTS = ("best", "good", "inaccuracy", "mistake", "blunder", "throws_away_win",
             "walks_into_loss")


@dataclass(frozen=True)
class Exact:
    """What the solver proved of one ply, for the mover: the outcome before the move and
    after it, the plies to the end of each, and whether the move was optimal."""

    before: str
    distance_before: int
    after: str
    distance_after: int
    optimal: bool


@dataclass(frozen=True)
class ReviewedPly:
    ply: int  # from 1
    side: str
    move: MoveValue  # the move played, with the model's value of it (value_after)
    value_before: float
    loss: float
    best: MoveValue
    judgment: str
    exact: Exact | None
    depth: int | None = None  # with a node or time budget: the depth its values come from

    @property
    def value_after(self) -> float:
        return self.move.value


@dataclass(frozen=True)
class SideSummary:
    side: str
    moves: int
    judgments: dict[str, int]  # every judgment, 0 where none
    mean_loss: float


@dataclass(frozen=True)
class ReviewAnswer:
    game: str
    version: int
    depth: int | None
    plies: tuple[ReviewedPly, ...]
    result: str  # "X wins", "O wins", "draw", "draw by repetition" or "continues"
    solve_ms: int  # the solver's budget
    solve_ms_used: int
    sides: tuple[SideSummary, ...]
    search: SearchUsed | None = None  # with a node or time budget: what it used

    @property
    def proved(self) -> int:
        return sum(1 for p in self.plies if p.exact is not None)


def judge(loss: float) -> str:
    """The judgment by value of a move that loses ``loss`` (see the module's table)."""
    for lowest, name in THRESHOLDS:
        if loss >= lowest:
            return name
    return "best"


def review(registry: Registry, *, game: str, moves: object = None,
           actions: Sequence[object] | None = None, model: str = "", client_id: str = "",
           depth: object = None, solve_ms: object = None, nodes: object = None,
           time_ms: object = None, max_depth: int = MAX_DEPTH,
           max_solve_ms: int = 30_000, max_nodes: int = MAX_NODES,
           max_time_ms: int = MAX_TIME_MS) -> ReviewAnswer:
    """Review the game ``moves`` (its notation) or ``actions`` (action ids) with the
    answering version's values (by its search ``depth`` deep, for a model that searches)
    and, within ``solve_ms`` milliseconds in all, the game's exact solver. A ``nodes`` or
    ``time_ms`` budget bounds the model's search over the whole game (:func:`_budgeted`).

    Raises:
        InvalidRequest: neither or both of moves and actions, a bad depth, solve_ms, nodes
            or time_ms.
        RequestTooLarge: more than :data:`MAX_PLIES` moves.
        IllegalMove, InvalidBoard: a move the rules forbid (``field`` moves or
            ``actions[i]``).
    """
    started = time.perf_counter()
    session = core._pick(registry, game, model, client_id)
    limits = budget(session, depth, nodes, time_ms, max_depth, max_nodes, max_time_ms)
    searched = limits.depth
    asked = check_solve_ms(solve_ms, max_solve_ms)
    solve_budget = min(DEFAULT_SOLVE_MS, max_solve_ms) if asked is None else asked
    states, result = _replay(session.model.game, moves, actions)
    bounded = searched is not None and (limits.nodes or limits.time_ms)
    values = (_budgeted(session, [s for s, _ in states], limits, started) if bounded
              else [(session.state_values(s, searched), None) for s, _ in states])
    reviewed = []
    for number, ((state, action), (evaluation, report)) in enumerate(
            zip(states, values, strict=True), 1):
        played = next(m for m in evaluation.moves if m.action_id == action)
        loss = max(0.0, round(evaluation.value - played.value, 6))
        reviewed.append(ReviewedPly(number, state.to_move, played, evaluation.value, loss,
                                    evaluation.best, judge(loss), None,
                                    None if report is None else report.depth))
    proofs, used = _prove([s for s, _ in states], solve_budget, registry.exact)
    for i, solution in proofs.items():
        reviewed[i] = _with_exact(reviewed[i], solution, states[i][1])
    name = session.model.game.name
    search = None
    if nodes is not None or time_ms is not None:
        reports = [r for _, r in values if r is not None]
        search = SearchUsed(
            limits, min((r.depth for r in reports), default=None),
            sum(r.nodes for r in reports), round((time.perf_counter() - started) * 1e6),
            all(r.complete for r in reports),
            all(p.exact is not None or (r is not None and r.exact)
                for p, (_, r) in zip(reviewed, values, strict=True)))
    return ReviewAnswer(name, session.version, searched, tuple(reviewed), result, solve_budget,
                        round(used * 1000), _summaries(reviewed), search)


def _budgeted(session: ModelSession, states: list[State], limits: Budget,
              started: float) -> list[tuple[Evaluation, SearchReport | None]]:
    """Each position's values by the model's search within the review's budget: the plies
    still to search share what is left of it evenly (what one leaves goes to the rest),
    each deepening up to ``limits.depth`` within its share (depth 0 always finishes)."""
    assert limits.depth is not None
    out: list[tuple[Evaluation, SearchReport | None]] = []
    spent = 0
    for i, state in enumerate(states):
        left = len(states) - i
        nodes = seconds = None
        if limits.nodes is not None:
            nodes = max(1, (limits.nodes - spent) // left)
        if limits.seconds is not None:
            seconds = max(0.0, (limits.seconds - (time.perf_counter() - started)) / left)
        evaluation, report = session.searched_values(state, limits.depth, nodes=nodes,
                                                     seconds=seconds)
        spent += report.nodes
        out.append((evaluation, report))
    return out


def _replay(game: Game, moves: object, actions: Sequence[object] | None
            ) -> tuple[list[tuple[State, int]], str]:
    """Each position of the game with the action played there, and how the game stands
    after the last move.

    Raises:
        InvalidRequest, RequestTooLarge, IllegalMove, InvalidBoard: see :func:`review`.
    """
    if moves is not None and actions is not None:
        raise InvalidRequest("give either moves or actions, not both", field="moves")
    if moves is None and actions is None:
        raise InvalidRequest("is required (or actions, the moves as action ids)",
                             field="moves")
    if moves is not None:
        if not isinstance(moves, str):
            raise InvalidRequest(f"must be text, got {type(moves).__name__}", field="moves")
        played = game.parse_game(moves)  # checks every move; names the bad one
        field = "moves"
    else:
        assert actions is not None
        if not isinstance(actions, Sequence) or isinstance(actions, str | bytes):
            raise InvalidRequest("must be a list of action ids", field="actions")
        played = [_action(value, i) for i, value in enumerate(actions)]
        field = "actions"
    if len(played) > MAX_PLIES:
        raise RequestTooLarge(f"{len(played)} moves; at most {MAX_PLIES} are reviewed in one "
                              "request", field=field)
    state = game.initial()
    seen = {state.key: 1}
    out: list[tuple[State, int]] = []
    result = "continues"
    for i, action in enumerate(played):
        if result != "continues":
            raise _illegal(f"move {i + 1} ({action}): the game was already over: {result} "
                           f"at move {i}", f"actions[{i}]")
        try:
            after = state.play(action)
        except GameError as e:  # only actions get here: moves were checked by the game
            raise _illegal(f"move {i + 1} ({action}): {e}", f"actions[{i}]") from None
        out.append((state, action))
        state = after
        if state.is_over():
            winner = state.winner()
            result = f"{winner} wins" if winner else "draw"
        elif game.cyclic:
            seen[state.key] = seen.get(state.key, 0) + 1
            if seen[state.key] >= 3:
                result = "draw by repetition"
    return out, result


def _action(value: object, i: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequest(f"must be an action id (a whole number), got "
                             f"{json.dumps(value, default=str)[:40]}", field=f"actions[{i}]")
    return value


def _illegal(message: str, field: str) -> IllegalMove:
    error = IllegalMove(message)
    error.field = field
    return error


def _prove(states: list[State], budget_ms: int, shared: ExactPlay | None = None
           ) -> tuple[dict[int, Solution], float]:
    """The solutions the solver finds within ``budget_ms`` in all, by ply index, working
    from the last position back; and the seconds it took. With ``shared``, positions are
    read from the shared table of proved positions first, and proofs written to it."""
    found: dict[int, Solution] = {}
    started = time.perf_counter()
    deadline = started + budget_ms / 1000
    for i in range(len(states) - 1, -1, -1):
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        solution = (shared.solve_within(states[i], left) if shared is not None
                    else SOLUTIONS.proved(states[i].game, states[i], left))
        if solution is None:
            break  # out of time, or too large: earlier positions are no easier
        found[i] = solution
    return found, time.perf_counter() - started


def _with_exact(ply: ReviewedPly, solution: Solution, action: int) -> ReviewedPly:
    move = next(m for m in solution.moves if m.move == action)
    exact = Exact(solution.outcome, solution.distance, move.outcome, move.distance,
                  move.optimal)
    judgment = ply.judgment
    if exact.before == "win" and exact.after != "win":
        judgment = "throws_away_win"
    elif exact.before == "draw" and exact.after == "loss":
        judgment = "walks_into_loss"
    return replace(ply, judgment=judgment, exact=exact)


def _summaries(plies: list[ReviewedPly]) -> tuple[SideSummary, ...]:
    out = []
    for side in ("X", "O"):
        mine = [p for p in plies if p.side == side]
        counts = dict.fromkeys(JUDGMENTS, 0)
        for p in mine:
            counts[p.judgment] += 1
        mean = round(sum(p.loss for p in mine) / len(mine), 6) if mine else 0.0
        out.append(SideSummary(side, len(mine), counts, mean))
    return tuple(out)

