"""The routes of long work: a whole game's review, and an analysis streamed as
Server-Sent Events. Both run in threads, in the slots of their priority class
(:mod:`gameai.service.lanes`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse

from gameai.games import GameError
from gameai.service import review as reviews
from gameai.service.errors import ServiceError, classify
from gameai.service.rest.bodies import DOCUMENTED, body_schema, json_body, move_fields
from gameai.service.rest.deps import runtime_of
from gameai.service.rest.render import add_search, answer, move_value, to_json
from gameai.service.rest.schema import (
    ANALYZE_ERRORS,
    REVIEW_ERRORS,
    STREAM_EVENT,
    ReviewOut,
    ReviewRequest,
    StreamRequest,
    StreamUpdate,
)
from gameai.service.stream import Bound, Update, open_analysis, run_stream
from gameai.store import StoreError

router = APIRouter(tags=["moves"])
DOCUMENTED.append(StreamUpdate)  # the events' data: in the components, by name


@router.post("/v1/games/{game}/review", response_model=ReviewOut,
             openapi_extra=body_schema(ReviewRequest), responses=REVIEW_ERRORS)
async def review(request: Request) -> Response:
    runtime = runtime_of(request)
    game = request.path_params["game"]
    request.scope["gameai"] = ("Review", game, None)
    body = await json_body(request, required=())
    s = runtime.settings
    a = await runtime.run_interactive(
        reviews.review, runtime.registry, game=game, moves=body.get("moves"),
        actions=body.get("actions"), model=body.get("model", ""),
        client_id=body.get("client_id", ""), depth=body.get("depth"),
        solve_ms=body.get("solve_ms"), nodes=body.get("nodes"), time_ms=body.get("time_ms"),
        max_depth=s.max_depth, max_solve_ms=s.max_solve_ms, max_nodes=s.max_nodes,
        max_time_ms=s.max_time_ms)
    return answer(request, "Review", a.game, review_json(a), a.version)


_STREAM_DOC = {
    200: {"description": "Server-Sent Events: one event per step, named by its phase "
          "(model, solver, done), each data line a JSON update (StreamUpdate); the last "
          "event is done",
          "content": {"text/event-stream": {"schema": STREAM_EVENT}}},
    **ANALYZE_ERRORS,
}


@router.post("/v1/games/{game}/analyze/stream", openapi_extra=body_schema(StreamRequest),
             responses=_STREAM_DOC, response_class=StreamingResponse)
async def analyze_stream(request: Request) -> Response:
    runtime = runtime_of(request)
    fields = await move_fields(request, "AnalyzeStream",
                               ("depth", "time_ms", "priority", "nodes"))
    s = runtime.settings
    job = open_analysis(runtime.registry, **fields, max_depth=s.max_depth,
                        max_time_ms=s.max_solve_ms, max_nodes=s.max_nodes)
    runtime.lanes.check(job.lane, field="priority")  # a 429 now, not after the first event
    request.scope["gameai"] = ("AnalyzeStream", job.session.model.game.name,
                               job.session.version)

    async def events() -> AsyncIterator[bytes]:
        try:
            async for update in run_stream(job, runtime.lanes, runtime.metrics,
                                           lambda: runtime.draining):
                yield (f"event: {update.phase}\ndata: ".encode()
                       + to_json(update_json(update)) + b"\n\n")
        except (ServiceError, GameError, StoreError) as e:  # after the first event
            status = classify(e)
            if status is None:
                raise
            yield b"event: error\ndata: " + to_json(status.to_json()) + b"\n\n"
    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def review_json(a: reviews.ReviewAnswer) -> dict[str, Any]:
    plies = []
    for p in a.plies:
        ply: dict[str, Any] = {
            "ply": p.ply, "side": p.side, "move": move_value(p.move),
            "value_before": p.value_before, "value_after": p.value_after, "loss": p.loss,
            "best": move_value(p.best), "judgment": p.judgment}
        if p.exact is not None:
            e = p.exact
            ply["exact"] = {"before": e.before, "distance_before": e.distance_before,
                            "after": e.after, "distance_after": e.distance_after,
                            "optimal": e.optimal}
        if p.depth is not None:
            ply["depth"] = p.depth
        plies.append(ply)
    body: dict[str, Any] = {
        "game": a.game, "model_version": a.version, "result": a.result,
        "solve_ms": a.solve_ms, "solve_ms_used": a.solve_ms_used, "proved": a.proved,
        "plies": plies,
        "sides": [{"side": s.side, "moves": s.moves, **s.judgments, "mean_loss": s.mean_loss}
                  for s in a.sides]}
    if a.depth is not None:
        body["depth"] = a.depth
    add_search(body, None, a.search)
    return body


def bound_json(b: Bound) -> dict[str, Any]:
    out = move_value(b.move)
    if b.at_least is not None:
        out["at_least"], out["at_most"], out["exact"] = b.at_least, b.at_most, b.exact
    if b.distance is not None:
        out["distance"] = b.distance
    return out


def update_json(u: Update) -> dict[str, Any]:
    body: dict[str, Any] = {
        "phase": u.phase, "game": u.game, "model_version": u.version, "to_move": u.to_move,
        "best": bound_json(u.best), "moves": [bound_json(b) for b in u.moves],
        "elapsed_ms": u.elapsed_ms, "nodes": u.nodes, "proved": u.proved}
    for name in ("depth", "outcome", "distance", "board", "model_nodes"):
        value = getattr(u, name)
        if value is not None:
            body[name] = value
    if u.reason:
        body["reason"] = u.reason
    return body


def sse_lines(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The ``(event, data)`` pairs of a Server-Sent Events text (for tests and clients)."""
    out = []
    for block in text.split("\n\n"):
        event, data = "message", []
        for line in block.splitlines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        if data:
            out.append((event, json.loads("\n".join(data))))
    return out
