"""A query's search: its budget (``depth``, ``nodes``, ``time_ms``) checked, capped by the
server's limits, and what the search used, as both transports report it (``search``), with
the ``top`` best moves where asked (:mod:`gameai.service.top`).

A budget bounds a model that searches (:meth:`gameai.models.NtupleModel.search_within`:
iterative deepening, the deepest finished depth answering); a model that does not search
answers by its values, a lookup with nothing to bound. Errors name the field, as the core's.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import NamedTuple

from gameai.service.errors import InvalidRequest
from gameai.service.session import ModelSession, Position
from gameai.service.top import TopMove, solved, top_moves

MAX_DEPTH = 8  # the deepest search a request may ask for (Settings.max_depth)
MAX_NODES = 10_000_000  # the most nodes a request's search may take (Settings.max_nodes)
MAX_TIME_MS = 10_000  # the longest a request's search may take (Settings.max_time_ms)
MAX_SOLVE_MS = 30_000  # the most a request may give the exact solver (Settings.max_solve_ms)
MAX_TOP = 10  # the most best moves, each with its line, one answer may list
TOP_SOLVE_MS = 20  # the solver's budget for a top query's exact figures, when it gives none


class Budget(NamedTuple):
    """What one query's search may spend, within the server's limits: how deep (None: the
    model does not search), and at most how many nodes and milliseconds (None: no bound
    but the depth). A named tuple: every query makes one, and a frozen dataclass costs
    a plain best-move a third more than its answer."""

    depth: int | None
    nodes: int | None = None
    time_ms: int | None = None

    @property
    def seconds(self) -> float | None:
        return None if self.time_ms is None else self.time_ms / 1000


@dataclass(frozen=True)
class SearchUsed:
    """What a query's search used (KataGo's and UCI's report): the ``budget`` it had, the
    depth it finished (None: the model does not search), its nodes and its time in
    microseconds (the whole query's work: search, lines and solver), whether it finished
    the depth it was allowed (``complete``) and whether its values are proved (``exact``:
    the solver proved the position, or the search saw the end of every line)."""

    budget: Budget
    depth: int | None
    nodes: int
    time_us: int
    complete: bool
    exact: bool


def budget(loaded: ModelSession, depth: object, nodes: object, time_ms: object,
           max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
           max_time_ms: int = MAX_TIME_MS, *, searches_unasked: bool = True) -> Budget:
    """A query's search budget for ``loaded``: ``depth`` as :func:`check_depth` checks it (with
    ``searches_unasked`` false, no depth and no bound: no search, as a batch); ``nodes``
    and ``time_ms`` whole numbers from 1, capped at the server's ``max_nodes`` and
    ``max_time_ms`` (the answer's ``search`` shows what applied). With a node or time
    bound and no depth, a model that searches deepens as far as ``max_depth`` allows; a
    model that does not search answers by its values, which take no search.

    Raises:
        InvalidRequest: a bad depth, nodes or time_ms (named).
    """
    if nodes is None and time_ms is None:  # the hot path: a depth at most
        searched = check_depth(loaded, depth, max_depth)
        return Budget(searched if depth is not None or searches_unasked else None)
    bound_nodes = check_bound(nodes, "nodes", max_nodes)
    bound_ms = check_bound(time_ms, "time_ms", max_time_ms)
    searched = check_depth(loaded, depth, max_depth)
    if depth is None and searched is not None:
        if bound_nodes or bound_ms:
            searched = max_depth
        elif not searches_unasked:
            searched = None
    return Budget(searched, bound_nodes, bound_ms)


def check_depth(loaded: ModelSession, value: object, max_depth: int) -> int | None:
    """The search depth a request asks of ``loaded`` (None: the model does not search)."""
    default = loaded.model.default_depth
    if value is None:
        return None if default is None else min(default, max_depth)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= max_depth:
        raise InvalidRequest(f"must be a whole number from 0 to {max_depth} (this server's "
                             f"GAMEAI_MAX_DEPTH), got {json.dumps(value, default=str)[:40]}",
                             field="depth")
    if default is None:
        raise InvalidRequest(f"version {loaded.version} is a {loaded.model.kind} model, "
                             "which does not search: leave depth out", field="depth")
    return value


def reached_depth(answer: Position, limits: Budget) -> int | None:
    """The depth the answer's values come from: the one its search finished."""
    return limits.depth if answer.report is None else answer.report.depth


def check_bound(value: object, field: str, cap: int) -> int | None:
    """A node or time bound: a whole number from 1, capped at ``cap`` (None: not given)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidRequest(f"must be a whole number from 1 (at most {cap:,} apply on this "
                             f"server), got {json.dumps(value, default=str)[:40]}", field=field)
    return min(value, cap)


def check_solve_ms(value: object, most: int, field: str = "solve_ms") -> int | None:
    """Milliseconds the exact solver may spend: a whole number from 0 to ``most`` (this
    server's GAMEAI_MAX_SOLVE_MS); None: not given."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
        raise InvalidRequest(f"must be a whole number of milliseconds from 0 to {most} "
                             f"(this server's GAMEAI_MAX_SOLVE_MS), got "
                             f"{json.dumps(value, default=str)[:40]}", field=field)
    return value


def check_top(value: object) -> int | None:
    """How many best moves a query asks for, with their lines (None: not asked)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TOP:
        raise InvalidRequest(f"must be a whole number of moves from 1 to {MAX_TOP}, got "
                             f"{json.dumps(value, default=str)[:40]}", field="top")
    return value


def report_search(loaded: ModelSession, answer: Position, limits: Budget,
                  count: int | None, started: float, *, asked: bool
                  ) -> tuple[tuple[TopMove, ...] | None, SearchUsed | None]:
    """The ``count`` best moves with their lines (None: not asked) and what the query's
    search used (None unless the query gave a depth, a budget or top: a plain query, the
    hot path, stays as it was, and costs what it did). A top query asks the solver for
    exact figures within what is left of ``time_ms`` (:data:`TOP_SOLVE_MS` without
    one)."""
    if count is None and not asked:
        return None, None
    report = answer.report
    reached = None if report is None else report.depth
    ranked, solution = None, None
    if count is not None:
        text, side = answer.text.rsplit(" ", 1)
        state = loaded.model.game.parse(text, to_move=side)
        left = TOP_SOLVE_MS / 1000
        if limits.seconds is not None:
            left = limits.seconds - (time.perf_counter() - started)
        solution = solved(state, left)
        ranked = top_moves(loaded, state, answer.evaluation, count, reached, solution)
    complete = report is None or report.complete
    exact = solution is not None or (report is not None and report.exact)
    used = SearchUsed(limits, reached, 0 if report is None else report.nodes,
                      round((time.perf_counter() - started) * 1e6), complete, exact)
    return ranked, used
