"""A reply lost after Redis executed a write: redis-py retries, and the store must not
apply the write twice."""

import pytest

from gameai.store import ModelStore
from gameai.stress.proxy import ReplyDropper


@pytest.fixture
def dropper(redis_server):
    def make(trigger: bytes) -> ReplyDropper:
        proxy = ReplyDropper(redis_server.port, trigger)
        made.append(proxy)
        return proxy

    made: list[ReplyDropper] = []
    yield make
    for proxy in made:
        proxy.close()


def test_a_retried_publish_creates_one_version(redis_url, dropper, make_payload):
    with ModelStore.from_url(redis_url, prefix="test") as direct:
        direct.publish(make_payload(0), by="test")  # the script is loaded: the next one runs
    proxy = dropper(b'"type": "publish"')
    with ModelStore.from_url(proxy.url(), prefix="test") as store:
        record = store.publish(make_payload(1), by="test")
        assert proxy.fired.is_set(), "the fault was injected"
        assert record.version == 2 and record.info["seed"] == 1
        assert [r.version for r in store.versions(game="tictactoe")] == [1, 2]
        assert store.publish(make_payload(2), by="test").version == 3


def test_a_retried_rollback_rolls_back_once(redis_url, dropper, make_payload):
    with ModelStore.from_url(redis_url, prefix="test") as direct:
        for seed in (1, 2, 3):
            direct.publish(make_payload(seed), by="test")
        for v in (1, 2, 3):
            direct.set_alias(game="tictactoe", alias="production", version=v, by="ops")
    proxy = dropper(b'"action": "rollback"')
    with ModelStore.from_url(proxy.url(), prefix="test") as store:
        change = store.rollback(game="tictactoe", by="ops")
        assert proxy.fired.is_set(), "the fault was injected"
        assert (change.from_version, change.to_version) == (3, 2)
        assert store.resolve(game="tictactoe", ref="production") == 2, "not rolled back twice"
        assert [c.action for c in store.history(game="tictactoe")].count("rollback") == 1
