"""Fixtures for the store tests: a store on the session's private Redis, and models."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from gameai.games import get_game
from gameai.models import ModelInfo, TableModel
from gameai.models.oracle import solver_model
from gameai.store import ModelStore

TTT = get_game("tictactoe")


@pytest.fixture(scope="session")
def oracle() -> TableModel:
    """A perfect tic-tac-toe table (built once: the solver takes a fraction of a second)."""
    return solver_model(TTT)


@pytest.fixture(scope="session")
def make_payload(oracle: TableModel) -> Callable[..., bytes]:
    """``make_payload(seed)``: distinct, valid tic-tac-toe model bytes for each seed."""

    def make(seed: int = 0, **info: object) -> bytes:
        meta = ModelInfo(game="tictactoe", algorithm="solver", seed=seed,
                         created_at="2025-01-01T00:00:00Z", **info)  # type: ignore[arg-type]
        return TableModel(TTT, meta, oracle.keys, oracle.values).to_bytes()

    return make


@pytest.fixture
def store(redis_url: str) -> Iterator[ModelStore]:
    with ModelStore.from_url(redis_url, prefix="test") as s:
        yield s


@pytest.fixture
def publish(store: ModelStore, make_payload: Callable[..., bytes]) -> Callable[..., int]:
    """``publish(n)`` stores ``n`` distinct versions and returns the last number."""

    def run(n: int = 1, start: int = 0) -> int:
        version = 0
        for seed in range(start, start + n):
            version = store.publish(make_payload(seed), by="test").version
        return version

    return run
