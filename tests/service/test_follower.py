"""The store follower on its own, over a real registry and a real Redis: it loads what the
store names at start, follows a promotion through pub/sub, marks a vanished store down
and reconnects, counting it; and stopping it ends its thread."""

from __future__ import annotations

import threading

from gameai.models import TableModel
from gameai.service.follower import StoreFollower
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import variant
from tests.service.test_rollout import wait_until


def follower_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "gameai-registry"]


def test_the_follower_keeps_the_registry_in_step_and_reconnects(tmp_path,
                                                               perfect: TableModel) -> None:
    with RedisServer(tmp_path / "redis", tcp=True, persist=False) as server:
        store = ModelStore.from_url(server.url, timeout=0.5, retries=1)
        one = store.publish(perfect.to_bytes(), by="test").version
        store.set_alias(game="tictactoe", alias="production", version=one, by="test")
        metrics = Metrics()
        registry = Registry(store, ("tictactoe",), metrics, poll_seconds=60)
        follower = registry.follower
        assert isinstance(follower, StoreFollower) and follower.registry is registry
        before = len(follower_threads())
        follower.start(wait_seconds=10)
        try:
            assert registry.store_up and registry.served("tictactoe").ready
            wait_until(lambda: follower.listening, 5)
            two = store.publish(variant(perfect, algorithm="other"), by="test").version
            store.set_alias(game="tictactoe", alias="production", version=two, by="test")
            # a 60 s poll period: only the pub/sub event can bring it this fast
            wait_until(lambda: registry.served("tictactoe").aliases.get("production") == two,
                       5)
            server.stop()
            follower.wake()
            wait_until(lambda: not registry.store_up, 10)
            assert registry.served("tictactoe").ready  # serving what it holds
            server.start()
            follower.wake()
            wait_until(lambda: registry.store_up, 20)
            assert metrics.registry.get_sample_value("gameai_store_reconnects_total") == 1
        finally:
            follower.stop()
            store.close()
    assert len(follower_threads()) == before
