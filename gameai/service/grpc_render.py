"""The gRPC edge's translations of the closed sets (enums and their text twins) and of the
review and streamed-analysis answers into protobuf messages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gameai.service.errors import InvalidRequest
from gameai.service.gen.gameai.v1 import move_pb2
from gameai.service.review import ReviewAnswer
from gameai.service.search import SearchUsed
from gameai.service.stream import Bound, Update
from gameai.service.top import TopMove

LEVELS = {"beginner": move_pb2.LEVEL_NAME_BEGINNER, "casual": move_pb2.LEVEL_NAME_CASUAL,
          "strong": move_pb2.LEVEL_NAME_STRONG, "best": move_pb2.LEVEL_NAME_BEST}
SIDES = {"X": move_pb2.SIDE_X, "O": move_pb2.SIDE_O}
OUTCOMES = {"win": move_pb2.OUTCOME_WIN, "draw": move_pb2.OUTCOME_DRAW,
            "loss": move_pb2.OUTCOME_LOSS}
LINE_ENDS = {"X wins": move_pb2.LINE_END_X_WINS, "O wins": move_pb2.LINE_END_O_WINS,
             "draw": move_pb2.LINE_END_DRAW,
             "draw by repetition": move_pb2.LINE_END_DRAW_BY_REPETITION,
             "continues": move_pb2.LINE_END_CONTINUES}
JUDGMENTS = {"best": move_pb2.JUDGMENT_BEST, "good": move_pb2.JUDGMENT_GOOD,
             "inaccuracy": move_pb2.JUDGMENT_INACCURACY, "mistake": move_pb2.JUDGMENT_MISTAKE,
             "blunder": move_pb2.JUDGMENT_BLUNDER,
             "throws_away_win": move_pb2.JUDGMENT_THROWS_AWAY_WIN,
             "walks_into_loss": move_pb2.JUDGMENT_WALKS_INTO_LOSS}
PRIORITIES = {move_pb2.PRIORITY_UNSPECIFIED: "", move_pb2.PRIORITY_INTERACTIVE: "interactive",
              move_pb2.PRIORITY_BACKGROUND: "background"}
PHASES = {"model": move_pb2.PHASE_MODEL, "solver": move_pb2.PHASE_SOLVER,
          "done": move_pb2.PHASE_DONE}


def text_or_enum(request: Any, field: str, names: Mapping[str, int]) -> str:
    """The request's ``field`` from its text or its ``_enum`` twin (unset: ``""``).

    Raises:
        InvalidRequest: both are set and disagree; the enum holds a number of no member.
    """
    text = getattr(request, field)
    number = getattr(request, f"{field}_enum")
    if not number:
        return str(text)
    by_number = {v: k for k, v in names.items()}
    name = by_number.get(number)
    if name is None:
        raise InvalidRequest(f"{field}_enum {number} is no {field}", field=field)
    if text and text != name:
        raise InvalidRequest(f"{text!r} and {field}_enum {name!r} disagree: give one",
                             field=field)
    return name


def move_pb(m: Any) -> Any:
    return move_pb2.Move(row=m.row, col=m.col, index=m.index, **origin(m))


def origin(move: Any) -> dict[str, int]:
    """The origin fields of a move that moves a piece (none for a placement)."""
    if move.from_index is None:
        return {}
    return {"from_index": move.from_index, "from_row": move.from_row,
            "from_col": move.from_col}


def move_value_pb(m: Any, **exact: Any) -> Any:
    """A ``MoveValue`` message (``exact``: an analysis' outcome and distance)."""
    fields: dict[str, Any] = {**origin(m), **exact}
    if exact.get("outcome"):
        fields["outcome_enum"] = OUTCOMES[exact["outcome"]]
    return move_pb2.MoveValue(row=m.row, col=m.col, index=m.index, value=m.value,
                              unknown=m.unknown, **fields)


def review_pb(a: ReviewAnswer) -> Any:
    plies = []
    for p in a.plies:
        ply = move_pb2.ReviewedPly(
            ply=p.ply, side=SIDES[p.side], move=move_value_pb(p.move),
            value_before=p.value_before, value_after=p.value_after, loss=p.loss,
            best=move_value_pb(p.best), judgment=JUDGMENTS[p.judgment])
        if p.exact is not None:
            e = p.exact
            ply.outcome_before = OUTCOMES[e.before]
            ply.distance_before = e.distance_before
            ply.outcome_after = OUTCOMES[e.after]
            ply.distance_after = e.distance_after
            ply.optimal = e.optimal
        if p.depth is not None:
            ply.depth = p.depth
        plies.append(ply)
    sides = [move_pb2.SideSummary(side=SIDES[s.side], moves=s.moves, mean_loss=s.mean_loss,
                                  **s.judgments) for s in a.sides]
    response = move_pb2.ReviewResponse(
        game=a.game, model_version=a.version, plies=plies, result=LINE_ENDS[a.result],
        solve_ms=a.solve_ms, solve_ms_used=a.solve_ms_used, proved=a.proved, sides=sides)
    if a.depth is not None:
        response.depth = a.depth
    if a.search is not None:
        response.search.CopyFrom(search_pb(a.search))
    return response


def bound_pb(b: Bound) -> Any:
    out = move_pb2.MoveBound(move=move_pb(b.move), value=b.move.value, exact=b.exact)
    if b.at_least is not None:
        out.at_least = OUTCOMES[b.at_least]
    if b.at_most is not None:
        out.at_most = OUTCOMES[b.at_most]
    if b.distance is not None:
        out.distance = b.distance
    return out


def update_pb(u: Update) -> Any:
    out = move_pb2.AnalysisUpdate(
        phase=PHASES[u.phase], game=u.game, model_version=u.version, best=bound_pb(u.best),
        nodes=u.nodes, elapsed_ms=u.elapsed_ms, proved=u.proved,
        moves=[bound_pb(b) for b in u.moves], reason=u.reason, to_move=SIDES[u.to_move],
        board=u.board or "")
    if u.depth is not None:
        out.depth = u.depth
    if u.outcome is not None:
        out.outcome = OUTCOMES[u.outcome]
    if u.distance is not None:
        out.distance = u.distance
    if u.model_nodes is not None:
        out.model_nodes = u.model_nodes
    return out


def top_pb(ranked: tuple[TopMove, ...]) -> list[Any]:
    """The best moves of a top query, each with its exact figures where proved."""
    out = []
    for t in ranked:
        exact: dict[str, Any] = {}
        if t.outcome is not None:
            exact = {"outcome": t.outcome, "distance": t.distance}
        out.append(move_pb2.TopMove(move=move_value_pb(t.move, **exact),
                                    line=[move_pb(m) for m in t.line]))
    return out


def search_pb(used: SearchUsed) -> Any:
    """What a query's search used, and the limits it ran under."""
    b = used.budget
    limits = move_pb2.SearchLimits()
    if b.depth is not None:
        limits.depth = b.depth
    if b.nodes is not None:
        limits.nodes = b.nodes
    if b.time_ms is not None:
        limits.time_ms = b.time_ms
    out = move_pb2.SearchReport(nodes=used.nodes, time_us=used.time_us,
                                complete=used.complete, exact=used.exact, limits=limits)
    if used.depth is not None:
        out.depth = used.depth
    return out
