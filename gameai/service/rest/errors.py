"""The REST edge's error handlers: every error a request can end in, in one shape
(``{"error": {status, code, field, message}}``), mapped once by
:func:`gameai.service.errors.classify`."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from gameai.games import GameError
from gameai.service.errors import ServiceError, classify
from gameai.store import StoreError


def add_error_handlers(app: FastAPI) -> None:
    """Map the errors of the core, the games, the store and FastAPI on ``app``."""
    async def mapped(request: Request, exc: Exception) -> Response:
        status = classify(exc)
        if status is None:  # not caused by the request: let it be a 500 and be logged
            raise exc
        headers = {"WWW-Authenticate": "Bearer"} if status.http == 401 else {}
        if status.retry_after is not None:
            headers["Retry-After"] = str(status.retry_after)
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

