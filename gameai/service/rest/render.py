"""Answers as JSON: the core's records turned into the REST API's bodies, built here as
bytes so that FastAPI does not re-validate what the core returned (the models of
:mod:`gameai.service.rest.schema` still document them at ``/docs``)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from gameai.models import MoveValue
from gameai.service import core
from gameai.service.errors import InvalidRequest
from gameai.service.registry import Registry
from gameai.service.search import SearchUsed
from gameai.service.top import TopMove

# JSONResponse's encoding (compact, UTF-8, no NaN) with one encoder built once rather than
# one per response.
_to_json_text = json.JSONEncoder(ensure_ascii=False, allow_nan=False,
                                 separators=(",", ":")).encode


def to_json(body: dict[str, Any]) -> bytes:
    return _to_json_text(body).encode()


def answer(request: Request, method: str, game: str, body: dict[str, Any],
           version: int | None) -> Response:
    """The JSON answer, with the method, game and version the metrics label it by."""
    request.scope["gameai"] = (method, game, version)
    return Response(to_json(body), media_type="application/json")


def move_json(move: Any) -> dict[str, Any]:
    """A move as JSON: where the piece goes and, for a piece that moves, ``from``."""
    out: dict[str, Any] = {"row": move.row, "col": move.col, "index": move.index}
    if move.from_index is not None:
        out["from"] = {"row": move.from_row, "col": move.from_col, "index": move.from_index}
    return out


def move_value(m: MoveValue) -> dict[str, Any]:
    """One move of an evaluate answer; ``unknown`` only where it is true, so answers of
    moves the model knows are what they always were."""
    out: dict[str, Any] = {**move_json(m), "value": m.value}
    if m.unknown:
        out["unknown"] = True
    return out


def add_search(body: dict[str, Any], ranked: tuple[TopMove, ...] | None,
               used: SearchUsed | None) -> None:
    """Add a query's ``top`` moves and its ``search`` report to its answer, where it has
    them (an answer that asked for neither, of a model that does not search, is as it
    always was)."""
    if ranked is not None:
        body["top"] = [top_json(t) for t in ranked]
    if used is not None:
        body["search"] = search_json(used)


def top_json(t: TopMove) -> dict[str, Any]:
    """One of the best moves: its value, its exact figures where proved, and its line."""
    out = move_value(t.move)
    if t.outcome is not None:
        out["outcome"], out["distance"] = t.outcome, t.distance
    out["line"] = [move_json(m) for m in t.line]
    return out


def search_json(used: SearchUsed) -> dict[str, Any]:
    """What a query's search used, and the limits it ran under (null: none given)."""
    b = used.budget
    return {"depth": used.depth, "nodes": used.nodes, "time_us": used.time_us,
            "complete": used.complete, "exact": used.exact,
            "limits": {"depth": b.depth, "nodes": b.nodes, "time_ms": b.time_ms}}


def analysis_json(a: core.AnalyzeAnswer) -> dict[str, Any]:
    h = a.analysis
    moves = []
    for hint in h.moves:
        move = move_value(hint.move)
        if hint.outcome is not None:
            move["outcome"], move["distance"] = hint.outcome, hint.distance
        moves.append(move)
    body: dict[str, Any] = {
        "game": a.game, "model_version": a.version, "to_move": h.evaluation.to_move,
        "value": h.evaluation.value, "outcome": h.outcome, "distance": h.distance,
        "moves": moves, "line": [move_value(step.move) for step in h.line],
        "line_end": h.line_end}
    if h.unsolved:
        body["unsolved"] = h.unsolved
    if a.depth is not None:
        body["depth"] = a.depth
    if a.board is not None:
        body["board"] = a.board
    add_search(body, None, a.search)
    return body


def batch_answer(registry: Registry, game: str, body: dict[str, Any],
                 max_batch: int, **limits: int) -> tuple[bytes, str, int]:
    """The JSON bytes answering a batch request, its game and its version (run in a
    thread: a 10,000-board answer takes milliseconds to compute and to render);
    ``limits``: the server's ``max_depth``, ``max_nodes`` and ``max_time_ms``."""
    boards, include = body["boards"], body.get("include_move_values", False)
    if not isinstance(boards, list):
        raise InvalidRequest("must be a list of boards", field="boards")
    if not isinstance(include, bool):
        raise InvalidRequest("must be true or false", field="include_move_values")
    a = core.evaluate_batch(registry, game=game, boards=boards, model=body.get("model", ""),
                            client_id=body.get("client_id", ""), max_batch=max_batch,
                            include_move_values=include, to_move=body.get("to_move", ""),
                            depth=body.get("depth"), nodes=body.get("nodes"),
                            time_ms=body.get("time_ms"), **limits)
    cols = a.game.cols
    best = a.best_to if a.moves_pieces else a.best
    out: dict[str, Any] = {
        "game": a.game.name, "model_version": a.version, "to_move": a.to_move,
        "value": a.values.tolist(), "move_row": (best // cols).tolist(),
        "move_col": (best % cols).tolist(), "move_index": best.tolist()}
    if a.moves_pieces:
        out["move_from_index"] = a.best_from.tolist()
        out["actions"] = a.game.num_actions
    if a.depth is not None:
        out["depth"] = a.depth
    add_search(out, None, a.search)
    if a.move_values is not None:
        out["move_values"] = [[None if x != x else x for x in row]
                              for row in a.move_values.tolist()]
    content = json.dumps(out, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return content.encode(), a.game.name, a.version


