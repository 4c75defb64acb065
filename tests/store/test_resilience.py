"""Redis going away and coming back, and Redis that will not let us in."""

import queue
import time

import pytest

from gameai.store import ModelStore, RedisServer, StoreUnavailable


@pytest.fixture
def own_server(tmp_path):
    """A private persistent server this test may stop and start (never the shared one)."""
    server = RedisServer(tmp_path / "redis", tcp=True, persist=True)
    with server:
        yield server


def test_the_client_reconnects_after_redis_restarts(own_server, make_payload):
    store = ModelStore.from_url(own_server.url, prefix="test", timeout=1.0, retries=2)
    store.publish(make_payload(1), by="test")
    own_server.stop()
    with pytest.raises(StoreUnavailable, match=f"cannot reach the store at {own_server.url}"):
        store.versions(game="tictactoe")
    own_server.start()
    assert [r.version for r in store.versions(game="tictactoe")] == [1], "AOF kept it"
    assert store.publish(make_payload(2), by="test").version == 2
    assert store.load(game="tictactoe", version=2).info.seed == 2
    store.close()


@pytest.mark.slow
def test_the_event_listener_resubscribes_after_redis_restarts(own_server, make_payload):
    store = ModelStore.from_url(own_server.url, prefix="test", timeout=1.0, retries=1)
    events: queue.Queue = queue.Queue()
    status: list[bool] = []
    with store.subscribe(events.put, on_status=status.append) as sub:
        assert sub.wait_connected(5)
        own_server.stop()
        deadline = time.monotonic() + 10
        while sub.connected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not sub.connected
        own_server.start()
        while not sub.connected and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sub.connected and sub.reconnects == 1
        store.publish(make_payload(1), by="test")
        assert events.get(timeout=5)["version"] == 1
    assert status[:3] == [True, False, True]
    store.close()


def test_an_unreachable_store_is_named_with_its_password_hidden(tmp_path):
    server = RedisServer(tmp_path / "redis", tcp=True, persist=False, password="hunter2-pw")
    url = server.url  # not started: nothing listens on the port
    store = ModelStore.from_url(url, timeout=0.5, retries=1)
    with pytest.raises(StoreUnavailable) as err:
        store.ping()
    message = str(err.value)
    assert "hunter2-pw" not in message and "redis://:***@127.0.0.1:" in message
    assert "hunter2-pw" not in repr(err.value.__cause__ or "")


def test_a_wrong_or_missing_password_is_reported_without_leaking_it(tmp_path):
    with RedisServer(tmp_path / "redis", tcp=True, persist=False, password="right-pw") as server:
        wrong = server.url.replace("right-pw", "wrong-pw")
        with pytest.raises(StoreUnavailable, match="refused the user name or password") \
                as err:
            ModelStore.from_url(wrong).ping()
        assert "wrong-pw" not in str(err.value) and ":***@" in str(err.value)
        bare = server.url.replace(":right-pw@", "")
        with pytest.raises(StoreUnavailable, match="requires a password, and the URL gives none"):
            ModelStore.from_url(bare).versions(game="tictactoe")
        ModelStore.from_url(server.url).ping()
