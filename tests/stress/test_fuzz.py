"""hypothesis against the server's core functions and batch parsing, in-process over a real
store: only the named errors (4xx, or 503 for a store outage), never anything else."""

from collections.abc import Iterator

import pytest

from gameai.store import ModelStore
from service.metrics import Metrics
from service.registry import Registry
from stress.fuzz import fuzz_core
from stress.harness import seed_store

pytestmark = pytest.mark.stress
GAMES = ("tictactoe", "connect-3x4-3")


@pytest.fixture
def registry(redis_url: str) -> Iterator[Registry]:
    with ModelStore.from_url(redis_url, prefix="fuzz") as store:
        seed_store(store, GAMES, versions=2, canary_weight=10)
        registry = Registry(store, GAMES, Metrics())
        registry.start()
        yield registry
        registry.stop()


def test_core_calls_end_in_answers_or_named_errors(registry: Registry) -> None:
    outcomes = fuzz_core(registry, examples=150)
    assert outcomes["200 OK"] > 0 and outcomes["422 INVALID_ARGUMENT"] > 0
    assert outcomes["404 NOT_FOUND"] > 0 and outcomes["409 FAILED_PRECONDITION"] > 0
    assert not [k for k in outcomes if k.startswith("5") and not k.startswith("503")]
