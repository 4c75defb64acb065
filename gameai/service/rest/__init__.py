"""The REST edge (FastAPI): JSON in, a core call, JSON out, errors mapped once.

One router per concern (:mod:`~gameai.service.rest.moves`, :mod:`~.catalog`,
:mod:`~.admin`, :mod:`~.health`), each given the process's runtime through
:mod:`~gameai.service.rest.deps`, so each can be mounted and tested alone;
:mod:`~gameai.service.rest.middleware` counts, times and limits every request under them.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

from gameai.service.rest import admin, catalog, engine, health, moves
from gameai.service.rest.bodies import add_request_schemas
from gameai.service.rest.deps import bind
from gameai.service.rest.errors import add_error_handlers
from gameai.service.rest.health import WEB_DIR
from gameai.service.rest.middleware import RequestMetrics
from gameai.service.runtime import Runtime

__all__ = ["WEB_DIR", "create_app"]


def create_app(runtime: Runtime) -> FastAPI:
    """The REST application over ``runtime`` (registry, metrics, settings, drain state)."""
    # /docs and /redoc from assets the fastapi-offline package bundles (not a CDN), so they
    # work on a machine without internet, under /static-offline-docs.
    app = FastAPIOffline(title="gameai move server", version="1",
                         description="Best moves and position values for m,n,k games. "
                         "The same API over gRPC: proto/gameai/v1.")
    bind(app, runtime)
    app.include_router(moves.router)
    app.include_router(engine.router)
    app.include_router(catalog.router)
    if runtime.settings.admin_token is not None:
        app.include_router(admin.router)
    app.include_router(health.router)
    app.mount("/web", StaticFiles(directory=WEB_DIR), name="web")
    add_error_handlers(app)
    app.add_middleware(RequestMetrics, runtime=runtime)
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = add_request_schemas(generate())
        return app.openapi_schema
    app.openapi = openapi  # type: ignore[method-assign]
    return app
