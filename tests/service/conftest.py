"""Fixtures of the move server's tests: a real store in the session's private Redis (each
user of it under its own key prefix) and real servers on free loopback ports."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import replace
from typing import Any, TypeVar

import pytest

from gameai.games import get_game
from gameai.models import ModelInfo, TableModel
from gameai.models.oracle import solver_model
from gameai.service.app import MoveServer, Ports
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.service.settings import Settings
from gameai.store import ModelStore, RedisServer

T = TypeVar("T")
ADMIN_TOKEN = "test-admin-token-0123456789"


@pytest.fixture(scope="session")
def perfect() -> TableModel:
    """The solver's perfect tictactoe model."""
    return solver_model(get_game("tictactoe"))


def variant(model: TableModel, **info: object) -> bytes:
    """The model's payload with other metadata: a distinct version with the same play."""
    return TableModel(model.game, model.info.with_updates(**info), model.keys,
                      model.values).to_bytes()


def weak_model() -> TableModel:
    """A tictactoe model that knows nothing: every move is worth 0, so it plays cell order."""
    return empty_model("tictactoe")


def empty_model(name: str) -> TableModel:
    """A model of the game ``name`` that knows nothing (every move unknown, played as 0)."""
    import numpy as np

    game = get_game(name)
    return TableModel(game, ModelInfo(game=game.name, algorithm="empty"),
                      np.zeros(0, np.uint64), np.zeros((0, game.num_actions), np.float32))


def random_ntuple(name: str) -> Any:
    """An n-tuple network of ``name`` with 4 tuples of 4 cells and seeded random weights."""
    import numpy as np

    from gameai.games.mnk.game import as_mnk
    from gameai.models.ntuple import NtupleModel, random_walks

    game = get_game(name)
    tuples = random_walks(as_mnk(game), 4, 4, seed=1)
    weights = np.random.default_rng(1).normal(0, 0.3, (4, 4 ** 4)).astype(np.float32)
    return NtupleModel(game, ModelInfo(game=game.name, algorithm="random"), tuples=tuples,
                       weights=weights)


def new_store(url: str) -> ModelStore:
    return ModelStore.from_url(url, prefix=f"test-{uuid.uuid4().hex[:8]}", timeout=0.5,
                               retries=1)


def settings(store: ModelStore, **changes: object) -> Settings:
    # no background prover unless a test asks for one: its proofs would race the tests'
    # own counts of what the request path proved
    base = Settings(store_url="redis://unused", http_port=0,
                    grpc_port=0, admin_token=ADMIN_TOKEN, poll_seconds=0.2, grace_seconds=2,
                    exact_background_ms=())
    return replace(base, **changes)  # type: ignore[arg-type]


class RunningServer:
    """A :class:`MoveServer` on its own event loop in a thread, as a process would run it."""

    def __init__(self, config: Settings, store: ModelStore) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.server = MoveServer(config, store)
        self.ports: Ports = self._run(self.server.start())
        self.http = f"http://127.0.0.1:{self.ports.http}"
        self.grpc = f"127.0.0.1:{self.ports.grpc}"

    @property
    def metrics(self) -> Metrics:
        return self.server.metrics

    @property
    def registry(self) -> Registry:
        return self.server.registry

    def _run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stop(self, grace: float = 1.0) -> None:
        self._run(self.server.stop(grace, drain=0))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def store(redis_server: RedisServer) -> Iterator[ModelStore]:
    """A store of its own (own prefix) for one test."""
    store = new_store(redis_server.url)
    yield store
    store.close()


@pytest.fixture(scope="module")
def module_store(redis_server: RedisServer, perfect: TableModel) -> Iterator[ModelStore]:
    """A store (own prefix) with the perfect model as version 1, production."""
    store = new_store(redis_server.url)
    record = store.publish(perfect.to_bytes(), by="tests")
    store.set_alias(game="tictactoe", alias="production", version=record.version, by="tests")
    yield store
    store.close()


@pytest.fixture(scope="module")
def server(module_store: ModelStore) -> Iterator[RunningServer]:
    """A server over :func:`module_store`, shared by a module's tests."""
    running = RunningServer(settings(module_store), module_store)
    yield running
    running.stop()


@pytest.fixture
def start_server() -> Iterator[Callable[..., RunningServer]]:
    """Start servers for one test; all are stopped after it."""
    started: list[RunningServer] = []

    def start(store: ModelStore, **changes: object) -> RunningServer:
        started.append(RunningServer(settings(store, **changes), store))
        return started[-1]
    yield start
    for running in started:
        running.stop()


@pytest.fixture(scope="module")
def limited_server(module_store: ModelStore) -> Iterator[RunningServer]:
    """A server that accepts at most ``MAX_BATCH`` boards and 4 KiB per request."""
    from tests.service.cases import MAX_BATCH

    running = RunningServer(settings(module_store, max_batch=MAX_BATCH, max_body_bytes=4096),
                            module_store)
    yield running
    running.stop()
