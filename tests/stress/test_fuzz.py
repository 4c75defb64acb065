"""hypothesis against the server's core functions and batch parsing, in-process over a real
store: only the named errors (4xx, or 503 for a store outage), never anything else."""

from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.store import ModelStore
from gameai.stress.fuzz import fuzz_core, mostly
from gameai.stress.harness import seed_store

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


def test_mostly_draws_the_usual_values_three_times_in_four() -> None:
    """The hostile values are many strategies, the usual one a single one: the usual
    values still come three times in four, so most calls reach past the first check."""
    usual: Counter[bool] = Counter()

    @settings(max_examples=400, database=None, derandomize=True)
    @given(mostly(st.sampled_from(["usual-a", "usual-b"]), st.integers(), st.floats(),
                  st.none(), st.booleans(), st.binary()), st.integers())
    def draw(value: object, _: int) -> None:
        usual[value in ("usual-a", "usual-b")] += 1

    draw()
    assert 0.6 < usual[True] / usual.total() < 0.9
