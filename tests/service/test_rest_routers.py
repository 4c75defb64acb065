"""Each REST router stands alone: mounted on a bare FastAPI app over a runtime of its own
(a real registry on a real store), it answers as the whole server does."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.service.rest import admin, catalog, moves
from gameai.service.rest.deps import bind
from gameai.service.rest.errors import add_error_handlers
from gameai.service.runtime import Runtime
from gameai.store import ModelStore

from .conftest import ADMIN_TOKEN, settings


@pytest.fixture
def runtime(module_store: ModelStore) -> Iterator[Runtime]:
    metrics = Metrics()
    registry = Registry(module_store, ("tictactoe",), metrics, poll_seconds=0.2)
    registry.start()
    yield Runtime(settings(module_store), registry, metrics)
    registry.stop()


def client(runtime: Runtime, *routers: object) -> TestClient:
    app = FastAPI()
    bind(app, runtime)
    for router in routers:
        app.include_router(router)  # type: ignore[arg-type]
    add_error_handlers(app)
    return TestClient(app)


def test_the_moves_router_answers_alone(runtime: Runtime) -> None:
    with client(runtime, moves.router) as http:
        answer = http.post("/v1/games/tictactoe/best-move", json={"board": "XX-|OO-|---"})
        missing = http.get("/v1/games")  # the catalog is not mounted
    assert answer.status_code == 200, answer.text
    assert answer.json()["move"]["index"] == 2  # X completes the top row
    assert answer.json()["model_version"] == 1
    assert missing.status_code == 404


def test_the_catalog_router_answers_alone(runtime: Runtime) -> None:
    with client(runtime, catalog.router) as http:
        games = http.get("/v1/games").json()["games"]
        unknown = http.get("/v1/games/chess/models")
    assert [g["name"] for g in games] == ["tictactoe"]
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "NOT_FOUND"


def test_the_admin_router_refuses_without_its_token(runtime: Runtime) -> None:
    with client(runtime, admin.router) as http:
        refused = http.put("/v1/games/tictactoe/pin")
        pinned = http.put("/v1/games/tictactoe/pin",
                                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        released = http.delete("/v1/games/tictactoe/pin",
                                     headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert refused.status_code == 401
    assert pinned.status_code == 200 and pinned.json()["pin"]["version"] == 1
    assert released.status_code == 200


def test_the_board_has_an_icon(runtime: Runtime) -> None:
    from gameai.service.rest import health

    with client(runtime, health.router) as http:
        icon = http.get("/favicon.ico")
    assert icon.status_code == 200
    assert icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.text.startswith("<svg")
