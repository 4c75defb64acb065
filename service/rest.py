"""The REST edge (FastAPI): JSON in, a core call, JSON out, errors mapped once.

Move handlers are ``async`` and call the core directly: an answer takes microseconds, so a
thread hop would cost more than it saves. Handlers that talk to the store run in a thread,
so a slow store never holds up the moves. Responses are built as ``JSONResponse`` so
FastAPI does not re-validate what the core returned; the declared models still document
the API at ``/docs``.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path as FilePath
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect

from gameai.games import GameError
from gameai.store import StoreError
from service import core
from service.errors import (
    InvalidRequest,
    RequestTooLarge,
    ServiceError,
    Unauthenticated,
    classify,
)
from service.metrics import exposition
from service.registry import Registry
from service.runtime import Runtime

WEB_DIR = FilePath(__file__).parent / "web"
# JSONResponse's encoding (compact, UTF-8, no NaN) with one encoder built once rather than
# one per response.
_to_json_text = json.JSONEncoder(ensure_ascii=False, allow_nan=False,
                                 separators=(",", ":")).encode


def _to_json(body: dict[str, Any]) -> bytes:
    return _to_json_text(body).encode()
# The game path parameter, with an example so generated API tests reach past the 404.
Game = Annotated[str, Path(examples=["tictactoe"])]


class MoveRequest(BaseModel):
    board: str = Field(examples=["X--|-O-|---"])
    model: str = Field("", description="alias or version number; empty or 'production' "
                       "means the production track with its canary share")
    client_id: str = Field("", description="keys the sticky canary split")


class BatchRequest(BaseModel):
    boards: list[str]
    model: str = ""
    client_id: str = ""
    include_move_values: bool = False


class AliasRequest(BaseModel):
    version: int


class CanaryRequest(BaseModel):
    version: int | None = None
    weight: int


class MoveOut(BaseModel):
    row: int
    col: int
    index: int


class MoveValueOut(MoveOut):
    value: float


class BestMoveOut(BaseModel):
    game: str
    model_version: int
    move: MoveOut
    value: float


class EvaluateOut(BaseModel):
    game: str
    model_version: int
    to_move: str
    value: float
    moves: list[MoveValueOut]


class BatchOut(BaseModel):
    """Column by column: entry ``i`` of every list answers ``boards[i]``."""

    game: str
    model_version: int
    to_move: list[str]
    value: list[float]
    move_row: list[int]
    move_col: list[int]
    move_index: list[int]
    move_values: list[list[float | None]] | None = Field(
        None, description="with include_move_values: per board, every cell's value "
        "row-major, null where the move is illegal")


class ErrorDetail(BaseModel):
    status: int
    code: str = Field(description="the gRPC status name of the same error")
    field: str = Field(description="the request field at fault")
    message: str = Field(description="starts with the field")


class ErrorOut(BaseModel):
    """Every error answer: docs/api.md has the table."""

    error: ErrorDetail


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": ErrorOut, "description": _ERROR_TEXT[status]}
            for status in statuses}


_ERROR_TEXT = {
    400: "the body could not be read",
    401: "no valid bearer token",
    404: "unknown game, alias or version, or a game not served here",
    409: "the board is a finished game (or, for admin changes, the store refused it)",
    413: "more bytes or boards than the server accepts",
    429: "too many batch requests are waiting on this server: retry later",
    422: "a field is missing, mistyped or impossible; the body is not JSON",
    503: "the store is unreachable and this server does not hold the version",
}
MOVE_ERRORS = _errors(404, 409, 413, 422, 503)
BATCH_ERRORS = _errors(404, 409, 413, 422, 429, 503)
MODEL_ERRORS = _errors(404, 422, 503)
ADMIN_ERRORS = _errors(400, 401, 404, 409, 413, 422, 503)


def create_app(runtime: Runtime) -> FastAPI:
    """The REST application over ``runtime`` (registry, metrics, settings, drain state)."""
    app = FastAPI(title="gameai move server", version="1",
                  description="Best moves and position values for m,n,k games. "
                  "The same API over gRPC: proto/gameai/v1.")
    registry, settings = runtime.registry, runtime.settings

    def answer(request: Request, method: str, game: str, body: dict[str, Any],
               version: int | None) -> Response:
        request.scope["gameai"] = (method, game, version)
        return Response(_to_json(body), media_type="application/json")

    @app.post("/v1/games/{game}/best-move", response_model=BestMoveOut, tags=["moves"],
              openapi_extra=_body_schema(MoveRequest), responses=MOVE_ERRORS)
    async def best_move(request: Request) -> Response:
        a = core.best_move(registry, **await _move_fields(request, "BestMove"))
        m = a.move
        return answer(request, "BestMove", a.game, {
            "game": a.game, "model_version": a.version,
            "move": {"row": m.row, "col": m.col, "index": m.index}, "value": a.value},
            a.version)

    @app.post("/v1/games/{game}/evaluate", response_model=EvaluateOut, tags=["moves"],
              openapi_extra=_body_schema(MoveRequest), responses=MOVE_ERRORS)
    async def evaluate(request: Request) -> Response:
        a = core.evaluate(registry, **await _move_fields(request, "Evaluate"))
        e = a.evaluation
        return answer(request, "Evaluate", a.game, {
            "game": a.game, "model_version": a.version, "to_move": e.to_move, "value": e.value,
            "moves": [{"row": m.row, "col": m.col, "index": m.index, "value": m.value}
                      for m in e.moves]}, a.version)

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
                  "ready": s.ready} for s in core.list_games(registry)]
        return answer(request, "ListGames", "", {"games": games}, None)

    @app.get("/v1/games/{game}/models", tags=["models"], responses=MODEL_ERRORS)
    async def list_models(game: Game, request: Request) -> Response:
        request.scope["gameai"] = ("ListModels", game, None)
        listing = await asyncio.to_thread(core.list_models, registry, game=game)
        return answer(request, "ListModels", listing.game, {
            "game": listing.game, "aliases": listing.aliases,
            "canary_weight": listing.canary_weight,
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
                                         alias=alias, version=body.version, by=_who(request))
        return answer(request, "SetAlias", change.game, change.to_json(), change.to_version)

    @app.put("/v1/games/{game}/canary", tags=["admin"], dependencies=admin,
             responses=ADMIN_ERRORS)
    async def set_canary(game: Game, body: CanaryRequest, request: Request) -> Response:
        request.scope["gameai"] = ("SetCanary", game, None)
        await asyncio.to_thread(core.set_canary, runtime.registry, game=game,
                                version=body.version, weight=body.weight, by=_who(request))
        return answer(request, "SetCanary", game, {"game": game, "version": body.version,
                                                     "weight": body.weight}, body.version)


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
                            include_move_values=include)
    cols, best = a.game.cols, a.best
    out: dict[str, Any] = {
        "game": a.game.name, "model_version": a.version, "to_move": a.to_move,
        "value": a.values.tolist(), "move_row": (best // cols).tolist(),
        "move_col": (best % cols).tolist(), "move_index": best.tolist()}
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


async def _move_fields(request: Request, method: str) -> dict[str, Any]:
    """The core's keyword arguments for a one-board request."""
    game = request.path_params["game"]
    request.scope["gameai"] = (method, game, None)
    body = await _json_body(request, required=("board",))
    return {"game": game, "board": body["board"], "model": body.get("model", ""),
            "client_id": body.get("client_id", "")}


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


Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class RequestMetrics:
    """Pure ASGI middleware: counts and times ``/v1/`` requests, refuses oversized bodies.

    A plain ASGI wrapper rather than ``BaseHTTPMiddleware``, which costs a task per request.
    """

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], *,
                 runtime: Runtime) -> None:
        self.app = app
        self.metrics = runtime.metrics
        self.limit = runtime.settings.max_body_bytes
        self.games = set(runtime.registry.games)
        self.inflight = runtime.metrics.inflight.labels("rest")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [500]
        inflight = self.inflight
        inflight.inc()

        async def send_status(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            length = _content_length(scope)
            body: Receive | None = receive
            if length is None:  # chunked: read it here, within the limit, and replay it
                body = await self._buffered(receive)
            if body is None or (length is not None and length > self.limit):
                await _refuse_too_large(scope, send_status, self.limit)
            else:
                await self.app(scope, body, send_status)
        finally:
            inflight.dec()
            method, game, version = scope.get("gameai", ("", "", None))
            game = game if game in self.games else ""
            self.metrics.observe("rest", method or "unknown", game, version, str(status[0]),
                                 time.perf_counter() - started)

    async def _buffered(self, receive: Receive) -> Receive | None:
        """The whole body read now and replayed, or ``None`` if it exceeds the limit."""
        chunks, seen, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            seen += len(chunks[-1])
            if seen > self.limit:
                return None
            more = message.get("more_body", False)
        body = b"".join(chunks)
        sent = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return replay


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else 1 << 62
    return None


async def _refuse_too_large(scope: Scope, send: Send, limit: int) -> None:
    status = classify(RequestTooLarge(f"the request body is over {limit} bytes", field="body"))
    assert status is not None
    response = JSONResponse(status.to_json(), status_code=status.http,
                            headers={"Connection": "close"})
    async def nothing() -> MutableMapping[str, Any]:
        return {"type": "http.disconnect"}
    await response(scope, nothing, send)
