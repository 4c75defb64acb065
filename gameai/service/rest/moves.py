"""The move routes: best move, evaluation, hints, levels and batches.

Move handlers are ``async`` and call the core directly: an answer takes microseconds, so a
thread hop would cost more than it saves (hints, which may take a solve, and batches run
in a thread)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import Response

from gameai.models.levels import DEFAULT_LEVEL
from gameai.service import core
from gameai.service.calibration import level_entries, measured_how
from gameai.service.rest.bodies import body_schema, json_body, move_fields
from gameai.service.rest.deps import runtime_of
from gameai.service.rest.render import (
    add_search,
    analysis_json,
    answer,
    batch_answer,
    move_json,
    move_value,
)
from gameai.service.rest.schema import (
    ANALYZE_ERRORS,
    BATCH_ERRORS,
    MODEL_ERRORS,
    MOVE_ERRORS,
    AnalyzeOut,
    AnalyzeRequest,
    BatchOut,
    BatchRequest,
    BestMoveOut,
    BestMoveRequest,
    EvaluateOut,
    EvaluateRequest,
    Game,
    LevelsOut,
)
from gameai.service.runtime import Runtime

router = APIRouter(tags=["moves"])
T = TypeVar("T")


@router.post("/v1/games/{game}/best-move", response_model=BestMoveOut,
             openapi_extra=body_schema(BestMoveRequest), responses=MOVE_ERRORS)
async def best_move(request: Request) -> Response:
    runtime = runtime_of(request)
    fields = await move_fields(request, "BestMove",
                               ("level", "seed", "depth", "solve_ms", *SEARCH))
    if "solve_ms" in fields:  # may take that long: in a thread, as a search budget does
        fields["max_solve_ms"] = runtime.settings.max_solve_ms
    a = await _run(runtime, fields, core.best_move)
    body = {"game": a.game, "model_version": a.version, "move": move_json(a.move),
            "value": a.value, "level": a.level, "exact": a.exact}
    if a.depth is not None:
        body["depth"] = a.depth
    add_search(body, a.top, a.search)
    return answer(request, "BestMove", a.game, body, a.version)


@router.post("/v1/games/{game}/evaluate", response_model=EvaluateOut,
             openapi_extra=body_schema(EvaluateRequest), responses=MOVE_ERRORS)
async def evaluate(request: Request) -> Response:
    runtime = runtime_of(request)
    fields = await move_fields(request, "Evaluate", ("depth", *SEARCH))
    a = await _run(runtime, fields, core.evaluate)
    e = a.evaluation
    body = {"game": a.game, "model_version": a.version, "to_move": e.to_move,
            "value": e.value, "moves": [move_value(m) for m in e.moves]}
    if a.board is not None:
        body["board"] = a.board
    if a.depth is not None:
        body["depth"] = a.depth
    add_search(body, a.top, a.search)
    return answer(request, "Evaluate", a.game, body, a.version)


SEARCH = ("top", "nodes", "time_ms")  # the fields of a query that may take long


async def _run(runtime: Runtime, fields: dict[str, Any], query: Callable[..., T]) -> T:
    """A one-position query with the server's limits: at once on the event loop (an answer
    takes microseconds), or, when it asks for top moves or gives a budget (lines, the
    solver, a search that may take the budget), in a thread of the interactive lane."""
    s = runtime.settings
    limits = {"max_depth": s.max_depth, "max_nodes": s.max_nodes,
              "max_time_ms": s.max_time_ms}
    if any(name in fields for name in (*SEARCH, "solve_ms")):
        result: T = await runtime.run_interactive(query, runtime.registry, **fields, **limits)
        return result
    return query(runtime.registry, **fields, **limits)


@router.post("/v1/games/{game}/analyze", response_model=AnalyzeOut,
             openapi_extra=body_schema(AnalyzeRequest), responses=ANALYZE_ERRORS)
async def analyze(request: Request) -> Response:
    runtime = runtime_of(request)
    fields = await move_fields(request, "Analyze", ("depth", "nodes", "time_ms"))
    s = runtime.settings
    a = await runtime.run_interactive(core.analyze, runtime.registry, **fields,  # may solve
                                      max_depth=s.max_depth, max_nodes=s.max_nodes,
                                      max_time_ms=s.max_time_ms)
    return answer(request, "Analyze", a.game, analysis_json(a), a.version)


@router.get("/v1/games/{game}/levels", response_model=LevelsOut, responses=MODEL_ERRORS)
async def list_levels(game: Game, request: Request) -> Response:
    request.scope["gameai"] = ("ListLevels", game, None)
    a = core.list_levels(runtime_of(request).registry, game=game)
    return answer(request, "ListLevels", a.game, {
        "game": a.game, "default": DEFAULT_LEVEL,
        "levels": level_entries(a.levels, a.calibration, a.calibration_applies),
        "calibration": measured_how(a.calibration),
        "calibration_applies": a.calibration_applies, "served_version": a.served_version,
        "served_strength": a.served_strength}, a.served_version)


@router.post("/v1/games/{game}/evaluate-batch", response_model=BatchOut,
             openapi_extra=body_schema(BatchRequest), responses=BATCH_ERRORS)
async def evaluate_batch(request: Request) -> Response:
    runtime = runtime_of(request)
    game = request.path_params["game"]
    request.scope["gameai"] = ("EvaluateBatch", game, None)
    async with runtime.batch_lane():  # the body is read only once it is our turn
        body = await json_body(request, required=("boards",))
        s = runtime.settings
        content, name, version = await asyncio.to_thread(
            batch_answer, runtime.registry, game, body, s.max_batch, max_depth=s.max_depth,
            max_nodes=s.max_nodes, max_time_ms=s.max_time_ms)
    request.scope["gameai"] = ("EvaluateBatch", name, version)
    return Response(content, media_type="application/json")
