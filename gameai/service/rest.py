"""The REST edge (FastAPI): JSON in, a core call, JSON out, errors mapped once.

Move handlers are ``async`` and call the core directly: an answer takes microseconds, so a
thread hop would cost more than it saves. Handlers that talk to the store run in a thread,
so a slow store never holds up the moves. Responses are built here as JSON so FastAPI does
not re-validate what the core returned; the models of :mod:`gameai.service.rest_schema` still
document the API at ``/docs``. :mod:`gameai.service.rest_middleware` counts, times and limits
every request under the routes.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Callable
from pathlib import Path as FilePath
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from pydantic import BaseModel
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from gameai.games import GameError
from gameai.models import MoveValue
from gameai.models.levels import DEFAULT_LEVEL
from gameai.service import core
from gameai.service.calibration import level_entries, measured_how
from gameai.service.errors import (
    InvalidRequest,
    ServiceError,
    Unauthenticated,
    classify,
)
from gameai.service.metrics import exposition
from gameai.service.registry import Registry
from gameai.service.rest_middleware import RequestMetrics
from gameai.service.rest_schema import (
    ADMIN_ERRORS,
    BATCH_ERRORS,
    MODEL_ERRORS,
    MOVE_ERRORS,
    AliasRequest,
    AnalyzeOut,
    BatchOut,
    BatchRequest,
    BestMoveOut,
    BestMoveRequest,
    CanaryRequest,
    EvaluateOut,
    EvaluateRequest,
    Game,
    LevelsOut,
)
from gameai.service.runtime import Runtime
from gameai.store import StoreError

WEB_DIR = FilePath(__file__).parent / "web"
# JSONResponse's encoding (compact, UTF-8, no NaN) with one encoder built once rather than
# one per response.
_to_json_text = json.JSONEncoder(ensure_ascii=False, allow_nan=False,
                                 separators=(",", ":")).encode


def _to_json(body: dict[str, Any]) -> bytes:
    return _to_json_text(body).encode()
def create_app(runtime: Runtime) -> FastAPI:
    """The REST application over ``runtime`` (registry, metrics, settings, drain state)."""
    # /docs and /redoc from assets the fastapi-offline package bundles (not a CDN), so they
    # work on a machine without internet, under /static-offline-docs.
    app = FastAPIOffline(title="gameai move server", version="1",
                         description="Best moves and position values for m,n,k games. "
                         "The same API over gRPC: proto/gameai/v1.")
    registry, settings = runtime.registry, runtime.settings

    def answer(request: Request, method: str, game: str, body: dict[str, Any],
               version: int | None) -> Response:
        request.scope["gameai"] = (method, game, version)
        return Response(_to_json(body), media_type="application/json")

    @app.post("/v1/games/{game}/best-move", response_model=BestMoveOut, tags=["moves"],
              openapi_extra=_body_schema(BestMoveRequest), responses=MOVE_ERRORS)
    async def best_move(request: Request) -> Response:
        a = core.best_move(registry, **await _move_fields(request, "BestMove",
                                                           ("level", "seed", "depth")),
                           max_depth=settings.max_depth)
        body = {"game": a.game, "model_version": a.version, "move": _move_json(a.move),
                "value": a.value, "level": a.level}
        if a.depth is not None:
            body["depth"] = a.depth
        return answer(request, "BestMove", a.game, body, a.version)

    @app.post("/v1/games/{game}/evaluate", response_model=EvaluateOut, tags=["moves"],
              openapi_extra=_body_schema(EvaluateRequest), responses=MOVE_ERRORS)
    async def evaluate(request: Request) -> Response:
        a = core.evaluate(registry, **await _move_fields(request, "Evaluate", ("depth",)),
                          max_depth=settings.max_depth)
        e = a.evaluation
        body = {"game": a.game, "model_version": a.version, "to_move": e.to_move,
                "value": e.value,
                "moves": [_move_value(m) for m in e.moves]}
        if a.board is not None:
            body["board"] = a.board
        if a.depth is not None:
            body["depth"] = a.depth
        return answer(request, "Evaluate", a.game, body, a.version)

    @app.post("/v1/games/{game}/analyze", response_model=AnalyzeOut, tags=["moves"],
              openapi_extra=_body_schema(EvaluateRequest), responses=MOVE_ERRORS)
    async def analyze(request: Request) -> Response:
        fields = await _move_fields(request, "Analyze", ("depth",))
        a = await asyncio.to_thread(core.analyze, registry, **fields,  # may take a solve
                                    max_depth=settings.max_depth)
        return answer(request, "Analyze", a.game, _analysis_json(a), a.version)

    @app.get("/v1/games/{game}/levels", response_model=LevelsOut, tags=["moves"],
             responses=MODEL_ERRORS)
    async def list_levels(game: Game, request: Request) -> Response:
        request.scope["gameai"] = ("ListLevels", game, None)
        a = core.list_levels(registry, game=game)
        return answer(request, "ListLevels", a.game, {
            "game": a.game, "default": DEFAULT_LEVEL,
            "levels": level_entries(a.levels, a.calibration),
            "calibration": measured_how(a.calibration)}, None)

    @app.post("/v1/games/{game}/evaluate-batch", response_model=BatchOut, tags=["moves"],
              openapi_extra=_body_schema(BatchRequest), responses=BATCH_ERRORS)
    async def evaluate_batch(request: Request) -> Response:
        game = request.path_params["game"]
        request.scope["gameai"] = ("EvaluateBatch", game, None)
        async with runtime.batch_lane():  # the body is read only once it is our turn
            body = await _json_body(request, required=("boards",))
            content, name, version = await asyncio.to_thread(
                _batch_answer, registry, game, body, settings.max_batch)
        request.scope["gameai"] = ("EvaluateBatch", name, version)
        return Response(content, media_type="application/json")

    @app.get("/v1/games", tags=["models"])
    async def list_games(request: Request) -> Response:
        games = [{"name": s.game.name, "rows": s.game.rows, "cols": s.game.cols,
                  "k": s.game.k, "gravity": s.game.gravity, "aliases": s.aliases,
                  "canary_weight": s.canary_weight, "loaded_versions": s.loaded_versions,
                  "ready": s.ready, "pin": s.pin.to_json() if s.pin else None,
                  "start": str(s.game.initial()), **s.game.rules()}
                 for s in core.list_games(registry)]
        return answer(request, "ListGames", "", {"games": games}, None)

    @app.get("/v1/games/{game}/models", tags=["models"], responses=MODEL_ERRORS)
    async def list_models(game: Game, request: Request) -> Response:
        request.scope["gameai"] = ("ListModels", game, None)
        listing = await asyncio.to_thread(core.list_models, registry, game=game)
        return answer(request, "ListModels", listing.game, {
            "game": listing.game, "aliases": listing.aliases,
            "canary_weight": listing.canary_weight,
            "pin": listing.pin.to_json() if listing.pin else None,
            "versions": [v.to_json() for v in listing.versions]}, None)

    @app.get("/v1/games/{game}/models/{version}", tags=["models"], responses=MODEL_ERRORS)
    async def get_model(game: Game, version: Annotated[str, Path(examples=["production", "1"])],
                        request: Request) -> Response:
        request.scope["gameai"] = ("GetModel", game, None)
        summary = await asyncio.to_thread(core.get_model, registry, game=game, version=version)
        return answer(request, "GetModel", summary.game, summary.to_json(), summary.version)

    if settings.admin_token is not None:
        _add_admin_routes(app, runtime, settings.admin_token, answer)

    @app.get("/healthz", tags=["health"], response_class=PlainTextResponse)
    async def healthz() -> Response:
        return PlainTextResponse("ok")

    @app.get("/readyz", tags=["health"],
             responses={503: {"description": "not ready (the body says why) or draining"}})
    async def readyz() -> Response:
        report = registry.readiness()
        report["draining"] = runtime.draining
        ok = report["ready"] and not runtime.draining
        runtime.metrics.ready.set(1 if ok else 0)
        return JSONResponse(report, status_code=200 if ok else 503)

    @app.get("/metrics", tags=["health"], response_class=PlainTextResponse)
    async def metrics() -> Response:
        body, content_type = exposition(runtime.metrics)
        return Response(body, media_type=content_type)

    @app.get("/", include_in_schema=False)
    async def index() -> Response:
        return FileResponse(WEB_DIR / "index.html")

    app.mount("/web", StaticFiles(directory=WEB_DIR), name="web")
    _add_error_handlers(app)
    app.add_middleware(RequestMetrics, runtime=runtime)
    return app


def _add_admin_routes(app: FastAPI, runtime: Runtime, token: str,
                      answer: Callable[..., Response]) -> None:
    expected = f"Bearer {token}".encode()

    def require_token(authorization: Annotated[str, Header()] = "") -> None:
        if not hmac.compare_digest(authorization.encode(), expected):
            raise Unauthenticated("a valid 'Authorization: Bearer <token>' header is required",
                                  field="authorization")

    admin = [Depends(require_token)]

    @app.put("/v1/games/{game}/aliases/{alias}", tags=["admin"], dependencies=admin,
             responses=ADMIN_ERRORS)
    async def set_alias(game: Game, alias: str, body: AliasRequest,
                        request: Request) -> Response:
        request.scope["gameai"] = ("SetAlias", game, None)
        change = await asyncio.to_thread(core.set_alias, runtime.registry, game=game,
                                         alias=alias, version=body.version, by=_who(request),
                                         pin=body.pin)
        pinned = {"pinned": True} if body.pin and alias == "production" else {}
        return answer(request, "SetAlias", change.game, {**change.to_json(), **pinned},
                      change.to_version)

    @app.put("/v1/games/{game}/pin", tags=["admin"], dependencies=admin,
             responses=ADMIN_ERRORS)
    async def pin(game: Game, request: Request) -> Response:
        """Pin production where it is: the trainer's automatic promotion holds off."""
        request.scope["gameai"] = ("Pin", game, None)
        held = await asyncio.to_thread(core.pin, runtime.registry, game=game, by=_who(request))
        return answer(request, "Pin", game, {"game": game, "pin": held.to_json()},
                      held.version)

    @app.delete("/v1/games/{game}/pin", tags=["admin"], dependencies=admin,
                responses=ADMIN_ERRORS)
    async def release(game: Game, request: Request) -> Response:
        """Release the pin on production: the trainer may promote a better version again."""
        request.scope["gameai"] = ("Release", game, None)
        released = await asyncio.to_thread(core.release, runtime.registry, game=game,
                                           by=_who(request))
        return answer(request, "Release", game, {
            "game": game, "released": released.to_json() if released else None}, None)

    @app.put("/v1/games/{game}/canary", tags=["admin"], dependencies=admin,
             responses=ADMIN_ERRORS)
    async def set_canary(game: Game, body: CanaryRequest, request: Request) -> Response:
        request.scope["gameai"] = ("SetCanary", game, None)
        await asyncio.to_thread(core.set_canary, runtime.registry, game=game,
                                version=body.version, weight=body.weight, by=_who(request))
        return answer(request, "SetCanary", game, {"game": game, "version": body.version,
                                                     "weight": body.weight}, body.version)


def _move_value(m: MoveValue) -> dict[str, Any]:
    """One move of an evaluate answer; ``unknown`` only where it is true, so answers of
    moves the model knows are what they always were."""
    out: dict[str, Any] = {**_move_json(m), "value": m.value}
    if m.unknown:
        out["unknown"] = True
    return out


def _analysis_json(a: core.AnalyzeAnswer) -> dict[str, Any]:
    h = a.analysis
    moves = []
    for hint in h.moves:
        move = _move_value(hint.move)
        if hint.outcome is not None:
            move["outcome"], move["distance"] = hint.outcome, hint.distance
        moves.append(move)
    body: dict[str, Any] = {
        "game": a.game, "model_version": a.version, "to_move": h.evaluation.to_move,
        "value": h.evaluation.value, "outcome": h.outcome, "distance": h.distance,
        "moves": moves, "line": [_move_value(step.move) for step in h.line],
        "line_end": h.line_end}
    if h.unsolved:
        body["unsolved"] = h.unsolved
    if a.depth is not None:
        body["depth"] = a.depth
    if a.board is not None:
        body["board"] = a.board
    return body


def _batch_answer(registry: Registry, game: str, body: dict[str, Any],
                  max_batch: int) -> tuple[bytes, str, int]:
    """The JSON bytes answering a batch request, its game and its version (run in a
    thread: a 10,000-board answer takes milliseconds to compute and to render)."""
    boards, include = body["boards"], body.get("include_move_values", False)
    if not isinstance(boards, list):
        raise InvalidRequest("must be a list of boards", field="boards")
    if not isinstance(include, bool):
        raise InvalidRequest("must be true or false", field="include_move_values")
    a = core.evaluate_batch(registry, game=game, boards=boards, model=body.get("model", ""),
                            client_id=body.get("client_id", ""), max_batch=max_batch,
                            include_move_values=include, to_move=body.get("to_move", ""))
    cols = a.game.cols
    best = a.best_to if a.moves_pieces else a.best
    out: dict[str, Any] = {
        "game": a.game.name, "model_version": a.version, "to_move": a.to_move,
        "value": a.values.tolist(), "move_row": (best // cols).tolist(),
        "move_col": (best % cols).tolist(), "move_index": best.tolist()}
    if a.moves_pieces:
        out["move_from_index"] = a.best_from.tolist()
        out["actions"] = a.game.num_actions
    if a.move_values is not None:
        out["move_values"] = [[None if x != x else x for x in row]
                              for row in a.move_values.tolist()]
    content = json.dumps(out, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return content.encode(), a.game.name, a.version


def _body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI path parameter and request body of a move route, which reads both
    itself (FastAPI's parameter machinery costs more than the answer)."""
    return {"parameters": [{"name": "game", "in": "path", "required": True,
                            "schema": {"type": "string"}, "example": "tictactoe",
                            "description": "tictactoe, four-in-a-row, mnk-RxC-K, ..."}],
            "requestBody": {"required": True, "content": {
                "application/json": {"schema": model.model_json_schema()}}}}


async def _move_fields(request: Request, method: str, extra: tuple[str, ...] = ()
                       ) -> dict[str, Any]:
    """The core's keyword arguments for a one-board request: ``board`` (with ``to_move``
    where the game needs it) or, for a game with a move notation, ``moves``; and the
    ``extra`` fields the body gives."""
    game = request.path_params["game"]
    request.scope["gameai"] = (method, game, None)
    body = await _json_body(request, required=())
    if "board" not in body and "moves" not in body:
        raise InvalidRequest("is required", field="board")
    return {"game": game, "board": body.get("board", ""), "model": body.get("model", ""),
            "client_id": body.get("client_id", ""), "to_move": body.get("to_move", ""),
            "moves": body.get("moves", ""), **{name: body[name] for name in extra if name in body}}


def _move_json(move: Any) -> dict[str, Any]:
    """A move as JSON: where the piece goes and, for a piece that moves, ``from``."""
    out: dict[str, Any] = {"row": move.row, "col": move.col, "index": move.index}
    if move.from_index is not None:
        out["from"] = {"row": move.from_row, "col": move.from_col, "index": move.from_index}
    return out


async def _json_body(request: Request, *, required: tuple[str, ...]) -> dict[str, Any]:
    """The request's JSON object, parsed here rather than by pydantic: the move routes are
    the hot path, and the core checks every field's type and names it when wrong."""
    try:
        body = json.loads(await _read_body(request))
    except (ValueError, UnicodeDecodeError) as e:
        raise InvalidRequest(f"not valid JSON: {str(e)[:80]}", field="body") from None
    except RecursionError:  # json recurses per level: '[[[[...' within the size limit
        raise InvalidRequest("JSON nested too deeply", field="body") from None
    if not isinstance(body, dict):
        raise InvalidRequest("must be a JSON object", field="body")
    for name in required:
        if name not in body:
            raise InvalidRequest("is required", field=name)
    return body


async def _read_body(request: Request) -> bytes:
    """The request body, read straight from ASGI ``receive``: Starlette's
    ``Request.body()`` streams it through an async generator, which costs the move routes a
    tenth of their time. The size limit was already enforced by :class:`RequestMetrics`."""
    chunks = []
    while True:
        message = await request.receive()
        if message["type"] != "http.request":
            raise ClientDisconnect()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _who(request: Request) -> str:
    host = request.client.host if request.client else "unknown"
    return f"rest-admin@{host}"


def _add_error_handlers(app: FastAPI) -> None:
    async def mapped(request: Request, exc: Exception) -> Response:
        status = classify(exc)
        if status is None:  # not caused by the request: let it be a 500 and be logged
            raise exc
        headers = {"WWW-Authenticate": "Bearer"} if status.http == 401 else None
        return JSONResponse(status.to_json(), status_code=status.http, headers=headers)

    async def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        loc = [str(part) for part in first.get("loc", ()) if part != "body"]
        field = "body" if first.get("type") == "json_invalid" else ".".join(loc) or "body"
        message = str(first.get("msg", "invalid"))
        body = {"error": {"status": 422, "code": "INVALID_ARGUMENT", "field": field,
                          "message": f"{field}: {message}"}}
        return JSONResponse(body, status_code=422)

    async def http_error(request: Request, exc: Exception) -> Response:
        """Starlette's own refusals (no such route, wrong method, a body FastAPI cannot
        parse) in our error shape rather than ``{"detail": ...}``."""
        assert isinstance(exc, HTTPException)
        field, message = _HTTP_ERRORS.get(exc.status_code, ("", str(exc.detail)))
        message = message.format(method=request.method, path=request.url.path[:200])
        body = {"error": {"status": exc.status_code,
                          "code": _HTTP_CODES.get(exc.status_code, "UNKNOWN"),
                          "field": field, "message": f"{field}: {message}" if field else message}}
        return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)

    for kind in (ServiceError, GameError, StoreError):
        app.add_exception_handler(kind, mapped)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(HTTPException, http_error)


# Statuses Starlette and FastAPI raise themselves: the field at fault and the message.
_HTTP_ERRORS = {
    400: ("body", "the request body could not be read"),
    404: ("path", "no such resource: {path}"),
    405: ("method", "{method} is not allowed on {path}"),
}
_HTTP_CODES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
               404: "NOT_FOUND", 405: "UNIMPLEMENTED", 413: "RESOURCE_EXHAUSTED",
               415: "INVALID_ARGUMENT", 422: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED",
               503: "UNAVAILABLE"}

