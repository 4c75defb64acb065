import queue
import threading

from gameai.store import ModelStore


def _collect(store: ModelStore):
    events: queue.Queue = queue.Queue()
    sub = store.subscribe(events.put)
    assert sub.wait_connected(5)
    return sub, events


def _drain(events: queue.Queue, n: int, timeout: float = 5.0) -> list[dict]:
    return [events.get(timeout=timeout) for _ in range(n)]


def test_every_change_is_announced_with_a_growing_counter(store, publish):
    sub, events = _collect(store)
    with sub:
        publish(2)
        store.set_alias(game="tictactoe", alias="production", version=1, by="ops")
        store.set_canary(game="tictactoe", version=2, weight=10, by="ops")
        store.gc(game="tictactoe", keep=1, window_seconds=0, by="ops")  # nothing: 1 aliased
        store.set_alias(game="tictactoe", alias="production", version=2, by="ops")
        store.gc(game="tictactoe", keep=1, window_seconds=0, by="ops")
        got = _drain(events, 5)
    assert [(e["type"], e.get("version"), e.get("weight")) for e in got] == [
        ("publish", 1, None), ("publish", 2, None), ("alias", 1, None), ("canary", 2, 10),
        ("alias", 2, None)]
    assert all(e["game"] == "tictactoe" and e["at"] for e in got)
    assert [e["counter"] for e in got] == sorted(e["counter"] for e in got)
    assert got[-1]["counter"] <= store.counter()


def test_gc_event_lists_the_deleted_versions(store, publish):
    publish(3)
    sub, events = _collect(store)
    with sub:
        store.gc(game="tictactoe", keep=1, window_seconds=0, by="ops")
        (event,) = _drain(events, 1)
    assert (event["type"], event["versions"], event["by"]) == ("gc", [1, 2], "ops")


def test_a_failing_callback_does_not_stop_the_listener(store, publish):
    seen = []
    lock = threading.Lock()

    def callback(event):
        with lock:
            seen.append(event["version"])
        if event["version"] == 1:
            raise RuntimeError("a bug in the caller")

    with store.subscribe(callback) as sub:
        assert sub.wait_connected(5)
        publish(2)
        for _ in range(100):
            if len(seen) == 2:
                break
            threading.Event().wait(0.05)
    assert seen == [1, 2]


def test_foreign_messages_on_the_channel_are_ignored(store, redis_url, publish):
    import redis

    sub, events = _collect(store)
    with sub:
        redis.Redis.from_url(redis_url).publish(store.keys.events, b"not json")
        publish(1)
        (event,) = _drain(events, 1)
    assert event["type"] == "publish"


def test_prefixes_keep_deployments_apart(redis_url, make_payload):
    with ModelStore.from_url(redis_url, prefix="blue") as blue, \
            ModelStore.from_url(redis_url, prefix="green") as green:
        sub, events = _collect(green)
        with sub:
            blue.publish(make_payload(1), by="test")
            assert green.versions(game="tictactoe") == [] and green.counter() == 0
            green.publish(make_payload(2), by="test")
            (event,) = _drain(events, 1)
        assert event["version"] == 1 and blue.counter() == 1
