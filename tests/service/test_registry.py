"""The registry over a real store, refreshed by hand (no follower thread)."""

from __future__ import annotations

import hashlib
import json

import pytest
import redis

from gameai.models import TableModel
from gameai.service import core
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.store import RedisServer
from tests.service.conftest import new_store


def test_a_reset_store_whose_new_bytes_cannot_load_leaves_the_held_model_serving(
        redis_server: RedisServer, perfect: TableModel, caplog: pytest.LogCaptureFixture,
        ) -> None:
    store = new_store(redis_server.url)
    one = store.publish(perfect.to_bytes(), by="tests").version
    for alias in ("production", "stable"):
        store.set_alias(game="tictactoe", alias=alias, version=one, by="tests")
    registry = Registry(store, ("tictactoe",), Metrics())
    registry.store_up = True
    registry.refresh()
    # The store is reset behind the server's back, and number 1 now names damaged bytes.
    raw = redis.Redis.from_url(redis_server.url)
    keys = store.keys
    entry = json.loads(raw.hget(keys.index("tictactoe"), one) or "{}")
    raw.set(keys.payload("tictactoe", one), b"damaged")
    raw.hset(keys.index("tictactoe"), one, json.dumps(
        {**entry, "sha256": hashlib.sha256(b"damaged").hexdigest()}))
    for _ in range(3):
        registry.refresh()
    state = registry.served("tictactoe")
    assert dict(state.aliases) == {"production": one, "stable": one} and state.ready
    assert state.problems == (f"alias production -> version {one} could not be loaded",
                              f"alias stable -> version {one} could not be loaded")
    for model in ("", "stable", str(one)):
        answer = core.best_move(registry, game="tictactoe", board="---|---|---", model=model)
        assert answer.version == one
    assert sum("different model" in m for m in caplog.messages) == 1
    assert sum("cannot load" in m for m in caplog.messages) == 1
    raw.close()
    store.close()
