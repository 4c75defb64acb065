"""Reading REST requests: the JSON body straight from ASGI, and the core's keyword
arguments of a one-board request. The move routes are the hot path, so they parse their
bodies here rather than through FastAPI's parameter machinery; the core checks every
field's type and names it when wrong."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from pydantic import BaseModel
from starlette.requests import ClientDisconnect

from gameai.service.errors import InvalidRequest

REQUEST_MODELS: dict[str, type[BaseModel]] = {}  # what body_schema referred to, by name
DOCUMENTED: list[type[BaseModel]] = []  # other models the document names (stream events)


def body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI path parameter and request body of a move route, which reads both
    itself (FastAPI's parameter machinery costs more than the answer). The body refers to
    the model in the document's components (:func:`add_request_schemas` puts it there), so
    a client generator meets one named type, its enums included."""
    REQUEST_MODELS[model.__name__] = model
    return {"parameters": [{"name": "game", "in": "path", "required": True,
                            "schema": {"type": "string"}, "example": "tictactoe",
                            "description": "tictactoe, four-in-a-row, mnk-RxC-K, ..."}],
            "requestBody": {"required": True, "content": {
                "application/json": {"schema": {"$ref": f"#/components/schemas/"
                                                        f"{model.__name__}"}}}}}


def add_request_schemas(document: dict[str, Any]) -> dict[str, Any]:
    """Put the request models of :func:`body_schema` and the types they use into the
    OpenAPI document's components (in place; returned for convenience)."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    named = {**REQUEST_MODELS, **{m.__name__: m for m in DOCUMENTED}}
    for name, model in named.items():
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        for used, definition in schema.pop("$defs", {}).items():
            schemas.setdefault(used, definition)
        schemas.setdefault(name, schema)
    return document


async def move_fields(request: Request, method: str, extra: tuple[str, ...] = ()
                       ) -> dict[str, Any]:
    """The core's keyword arguments for a one-board request: ``board`` (with ``to_move``
    where the game needs it) or, for a game with a move notation, ``moves``; and the
    ``extra`` fields the body gives."""
    game = request.path_params["game"]
    request.scope["gameai"] = (method, game, None)
    body = await json_body(request, required=())
    return {"game": game, "board": body.get("board", ""), "model": body.get("model", ""),
            "client_id": body.get("client_id", ""), "to_move": body.get("to_move", ""),
            "moves": body.get("moves"), **{name: body[name] for name in extra if name in body}}


async def json_body(request: Request, *, required: tuple[str, ...]) -> dict[str, Any]:
    """The request's JSON object, parsed here rather than by pydantic: the move routes are
    the hot path, and the core checks every field's type and names it when wrong."""
    try:
        body = json.loads(await read_body(request))
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


async def read_body(request: Request) -> bytes:
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


def who(request: Request) -> str:
    host = request.client.host if request.client else "unknown"
    return f"rest-admin@{host}"


