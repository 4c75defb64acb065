"""What the routes are given: the process's :class:`~gameai.service.runtime.Runtime`,
injected through ``app.state`` (set once by :func:`gameai.service.rest.create_app`), so a
router can be mounted on a test app over any runtime."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, FastAPI, Header, Request

from gameai.service.errors import Unauthenticated
from gameai.service.runtime import Runtime


def bind(app: FastAPI, runtime: Runtime) -> None:
    """Give ``app``'s routes ``runtime``, and the admin guard its token's bytes (made once
    here, so the constant-time check does nothing else per request)."""
    app.state.runtime = runtime
    token = runtime.settings.admin_token
    app.state.admin_expected = None if token is None else f"Bearer {token}".encode()


def runtime_of(request: Request) -> Runtime:
    """The runtime of the app serving ``request``: the move routes call this directly
    (a dependency's machinery costs more than their answer), the others through
    :data:`RuntimeDep`."""
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(runtime_of)]


def require_admin(request: Request, authorization: Annotated[str, Header()] = "") -> None:
    """The admin routes' guard: the ``Authorization: Bearer <token>`` header must carry the
    server's admin token (compared in constant time).

    Raises:
        Unauthenticated: a missing or wrong token (HTTP 401).
    """
    expected: bytes | None = request.app.state.admin_expected  # made once, at start
    if expected is None or not hmac.compare_digest(authorization.encode(), expected):
        raise Unauthenticated("a valid 'Authorization: Bearer <token>' header is required",
                              field="authorization")
