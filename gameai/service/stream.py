"""A long analysis, streamed: the model's values depth by depth, then the solver's proofs
move by move, one update per step, until the position is proved or the budget is spent.

:func:`open_analysis` checks the request (so a bad one fails before anything is streamed,
with the same errors as every other route) and returns an :class:`Analysis`, whose
:meth:`~Analysis.updates` is a generator: each ``next()`` does one step of bounded work and
returns its :class:`Update`. The transports run each step in a thread, in a slot of the
request's priority class (:mod:`gameai.service.lanes`), and stop asking for steps when the
client goes away, so a cancelled stream stops within one step on the server:

* **model**: one step per depth of the model's search, 1, 2, ... up to the depth asked (a
  model that does not search: one step of its values);
* **solver**: the game's exact solver in slices that double from
  :data:`FIRST_SLICE_SECONDS` to :data:`MAX_SLICE_SECONDS`; a search keeps its table between
  slices, so each resumes where the last stopped, and each reports what is proved of every
  move so far (its outcome at least and at most, exact once they meet);
* **done**: the last update, with the best move and why it stopped (``proved``, ``budget
  spent``, or why the solver cannot take the position).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Generator
from dataclasses import dataclass, replace

from gameai.games import State, TooLarge
from gameai.games.interface import Solution
from gameai.models import Evaluation, MoveValue
from gameai.service import core, search
from gameai.service.analysis import SOLUTIONS
from gameai.service.errors import InvalidRequest
from gameai.service.exact import ExactPlay
from gameai.service.lanes import BACKGROUND, INTERACTIVE, LANES, Lanes
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.service.session import ModelSession, rounded

DEFAULT_TIME_MS = 10_000  # the solver's budget for a stream that gives none
FIRST_SLICE_SECONDS = 0.05
MAX_SLICE_SECONDS = 0.25  # also how long a cancelled stream may still run on the server


@dataclass(frozen=True)
class Bound:
    """One move in an update: the model's value and what the solver proved of it for the
    mover, its outcome at least and at most (``None``: nothing proved yet; equal and
    ``exact`` once proved, with the plies to the end where known)."""

    move: MoveValue
    at_least: str | None = None
    at_most: str | None = None
    exact: bool = False
    distance: int | None = None


@dataclass(frozen=True)
class Update:
    phase: str  # "model", "solver" or "done"
    game: str
    version: int
    to_move: str
    best: Bound
    moves: tuple[Bound, ...]
    elapsed_ms: int
    depth: int | None = None  # model phase: the depth done
    nodes: int = 0  # the solver's nodes for this stream so far
    proved: bool = False
    outcome: str | None = None  # proved: the position's outcome for the side to move
    distance: int | None = None
    reason: str = ""  # done: why it stopped
    board: str | None = None  # the position, when the request gave moves
    model_nodes: int | None = None  # with a node budget: the model's nodes so far


@dataclass
class Analysis:
    """A checked request, ready to stream (see the module)."""

    session: ModelSession
    state: State
    depths: list[int | None]
    time_ms: int
    lane: str
    board: str | None
    nodes: int | None = None  # the model phase's node budget (None: its depths only)
    shared: ExactPlay | None = None  # the shared table of proved positions, read and written

    def updates(self) -> Generator[Update, None, None]:
        """One update per step, the last one ``done``."""
        started = time.perf_counter()
        game, name = self.state.game, self.session.model.game.name
        text, side = f"{self.state}", self.state.to_move
        last: Update | None = None
        evaluation: Evaluation | None = None
        spent: int | None = None if self.nodes is None else 0
        for depth in self.depths:
            if spent is None or depth is None:
                evaluation = self.session.position(text, side, depth).evaluation
            else:
                found = self._within(depth, spent)
                if found is None:
                    break  # the node budget ends the model phase; the answer stands
                evaluation, spent = found
            moves = tuple(Bound(m) for m in evaluation.moves)
            last = Update("model", name, self.session.version, side, moves[0], moves,
                          _ms(started), depth=depth, board=self.board, model_nodes=spent)
            yield last
        assert evaluation is not None and last is not None
        reason = "the model's values only (time_ms 0)"
        if self.time_ms > 0:
            deadline = started + self.time_ms / 1000
            window, nodes = FIRST_SLICE_SECONDS, 0
            solution = (self.shared.lookup(self.state) if self.shared is not None
                        else SOLUTIONS.kept(game, self.state))
            while solution is None:
                left = deadline - time.perf_counter()
                if left <= 0:
                    reason = "budget spent"
                    break
                try:
                    solution = game.solve(self.state, time_limit=min(window, left))
                except TooLarge as e:
                    partial = getattr(e, "partial", None)
                    if partial is None:
                        reason = f"the solver cannot take this position: {e}"
                        break
                    nodes += partial.nodes
                    moves = _bounds(evaluation, partial.moves, game.big)
                    last = Update("solver", name, self.session.version, side,
                                  _best(moves), moves, _ms(started), nodes=nodes,
                                  board=self.board)
                    yield last
                    window = min(2 * window, MAX_SLICE_SECONDS)
                    continue
                if self.shared is not None:
                    self.shared.record(self.state, solution)
                else:
                    SOLUTIONS.keep(game, self.state, solution)
            if solution is not None:
                reason = "proved"
                last = _proved(last, evaluation, solution, _ms(started), nodes)
                yield last
        yield replace(last, phase="done", elapsed_ms=_ms(started), reason=reason)


    def _within(self, depth: int, spent: int) -> tuple[Evaluation, int] | None:
        """The model's search ``depth`` deep within what is left of the node budget, and
        the nodes spent so far; None once the budget cannot pay for it (depth 0 always
        can: the first step is never empty)."""
        assert self.nodes is not None
        left = self.nodes - spent
        if left <= 0 and depth > 0:
            return None
        e, used = self.session.model.search_counted(self.state, depth,
                                                    nodes=left if depth > 0 else None)
        if e is None:
            return None
        return rounded(e), spent + used


def open_analysis(registry: Registry, *, game: str, board: str = "", model: str = "",
                  client_id: str = "", to_move: str = "", moves: object = None,
                  depth: object = None, time_ms: object = None, priority: object = "",
                  nodes: object = None, max_depth: int = search.MAX_DEPTH,
                  max_time_ms: int = 30_000, max_nodes: int = search.MAX_NODES) -> Analysis:
    """Check a streamed analysis' request: game, model, position, depth, the solver's
    ``time_ms`` (at most ``max_time_ms``), the ``priority`` (``interactive``, the default,
    or ``background``) and the model phase's ``nodes`` (capped at ``max_nodes``: its
    depths stop before one that would pass them).

    Raises:
        The named errors of :func:`gameai.service.core.analyze`, and InvalidRequest for a
        bad time_ms or priority.
    """
    session = core._pick(registry, game, model, client_id)
    searched = search.check_depth(session, depth, max_depth)
    budget = _time_ms(time_ms, max_time_ms)
    lane = _priority(priority)
    answer, position = core._position(session, board, to_move, moves, searched)
    text, side = answer.text.rsplit(" ", 1)
    state = session.model.game.parse(text, to_move=side)
    depths: list[int | None] = ([None] if searched is None
                                else list(range(min(1, searched), searched + 1)))
    bound = search.check_bound(nodes, "nodes", max_nodes)
    if bound is not None and depths[0] is not None and depths[0] > 0:
        depths.insert(0, 0)  # depth 0 always finishes: a budget never leaves no answer
    return Analysis(session, state, depths, budget, lane, position, bound, registry.exact)


def _time_ms(value: object, most: int) -> int:
    asked = search.check_solve_ms(value, most, field="time_ms")
    return min(DEFAULT_TIME_MS, most) if asked is None else asked


def _priority(value: object) -> str:
    if value in ("", None):
        return INTERACTIVE
    if value not in LANES:
        raise InvalidRequest(f"must be {INTERACTIVE!r} or {BACKGROUND!r}, got "
                             f"{json.dumps(value, default=str)[:40]}", field="priority")
    assert isinstance(value, str)
    return value


def _ms(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)


def _outcome(score: int) -> str:
    return "win" if score > 0 else "loss" if score < 0 else "draw"


def _bounds(evaluation: Evaluation, partial: object, big: int) -> tuple[Bound, ...]:
    """The model's moves with the bounds a timed-out search proved (a win or loss of
    known length where exact; the length of an exact draw is left out)."""
    proved = {b.move: b for b in partial}  # type: ignore[attr-defined]
    out = []
    for m in evaluation.moves:
        b = proved.get(m.action_id)
        if b is None or (b.lower <= -big and b.upper >= big):
            out.append(Bound(m))
            continue
        exact = b.lower == b.upper
        distance = None
        if exact and b.lower != 0:
            distance = big - abs(b.lower)
        out.append(Bound(m, _outcome(b.lower), _outcome(b.upper), exact, distance))
    return tuple(out)


_RANK = {None: -2, "loss": -1, "draw": 0, "win": 1}


def _best(moves: tuple[Bound, ...]) -> Bound:
    """The move proved best so far: the highest outcome it is sure of (the model's order
    among equals)."""
    return max(moves, key=lambda b: _RANK[b.at_least])


def _proved(last: Update, evaluation: Evaluation, solution: Solution, elapsed: int,
            nodes: int) -> Update:
    exact = {m.move: m for m in solution.moves}
    moves = tuple(Bound(m, exact[m.action_id].outcome, exact[m.action_id].outcome, True,
                        exact[m.action_id].distance) for m in evaluation.moves)
    by_action = {b.move.action_id: b for b in moves}
    best = by_action[solution.moves[0].move]
    return Update("solver", last.game, last.version, last.to_move, best, moves, elapsed,
                  nodes=nodes, proved=True, outcome=solution.outcome,
                  distance=solution.distance, board=last.board)


async def run_stream(job: Analysis, lanes: Lanes, metrics: Metrics,
                     stopping: Callable[[], bool] = lambda: False) -> AsyncIterator[Update]:
    """The updates of ``job``, each step run in a thread in a slot of its lane. When the
    consumer stops (the client went away: the generator is cancelled or closed) no
    further step starts; one already running ends by itself within a slice. Once
    ``stopping()`` (the server drains) the stream ends with a last ``done`` update that
    says so."""
    steps = job.updates()
    end = "error"
    running = False
    last: Update | None = None
    try:
        while True:
            if stopping() and last is not None:
                end = "done"
                yield replace(last, phase="done", reason="the server is shutting down")
                return
            async with lanes.slot(job.lane, field="priority"):
                running = True
                update = await asyncio.to_thread(next, steps, None)
                running = False
            if update is None:
                end = "done"
                return
            metrics.stream_steps.labels(update.phase).inc()
            last = update
            yield update
            if update.phase == "done":
                end = "done"
                return
    except (asyncio.CancelledError, GeneratorExit):
        end = "cancelled"
        raise
    finally:
        metrics.streams.labels(job.lane, end).inc()
        if not running:  # a step still running in its thread closes with the generator
            steps.close()
