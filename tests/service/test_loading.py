"""A model that is loading is a 503 that says so (with Retry-After), never a 404: for the
minute a large model takes to load and warm, the store already names it production."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from gameai.models import TableModel
from gameai.service import core
from gameai.service.errors import Loading, classify
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.service.rest import moves
from gameai.service.rest.deps import bind
from gameai.service.rest.errors import add_error_handlers
from gameai.service.runtime import Runtime
from gameai.service.session import ModelSession
from gameai.store import ModelStore

from .conftest import settings


@pytest.fixture
def slow_warm(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Warming a version waits for the event: the load is caught halfway."""
    go, warm = threading.Event(), ModelSession.warm

    def held(self: ModelSession) -> None:
        go.wait(30)
        warm(self)

    monkeypatch.setattr(ModelSession, "warm", held)
    yield go
    go.set()


def test_a_request_while_production_loads_is_told_to_retry(
        store: ModelStore, perfect: TableModel, slow_warm: threading.Event) -> None:
    version = store.publish(perfect.to_bytes(), by="tests").version
    store.set_alias(game="tictactoe", alias="production", version=version, by="tests")
    metrics = Metrics()
    registry = Registry(store, ("tictactoe",), metrics)
    registry.set_store_up(True)
    loader = threading.Thread(target=registry.refresh)
    loader.start()
    try:
        deadline = threading.Event()
        while not registry.served("tictactoe").loading and not deadline.wait(0.01):
            pass
        with pytest.raises(Loading) as caught:
            core.best_move(registry, game="tictactoe", board="---|---|---")
        status = classify(caught.value)
        assert status is not None and (status.http, status.field) == (503, "model")
        assert status.retry_after == 2 and f"version {version}" in status.message
        assert registry.readiness()["games"]["tictactoe"]["loading"] == {"production": version}

        app = FastAPI()
        bind(app, Runtime(settings(store), registry, metrics))
        app.include_router(moves.router)
        add_error_handlers(app)
        with TestClient(app) as http:
            answer = http.post("/v1/games/tictactoe/best-move", json={"board": "---|---|---"})
        assert answer.status_code == 503 and answer.headers["retry-after"] == "2"
        assert answer.json()["error"]["code"] == "UNAVAILABLE"
    finally:
        slow_warm.set()
        loader.join(30)
    answer_after = core.best_move(registry, game="tictactoe", board="---|---|---")
    assert answer_after.version == version
    assert registry.readiness()["games"]["tictactoe"]["loading"] == {}
