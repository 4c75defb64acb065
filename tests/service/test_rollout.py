"""Versions change under a running server: promotes, Redis outages, Redis coming back empty.
No request may fail at any point."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import redis

from gameai.models import TableModel
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import RunningServer, new_store, variant
from tests.service.traffic import Traffic


def wait_until(condition: Callable[[], bool], timeout: float = 10.0) -> float:
    """Seconds until ``condition()`` held; fails after ``timeout``."""
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < timeout, "condition never held"
        time.sleep(0.01)
    return time.monotonic() - start


def publish(store: ModelStore, payload: bytes, alias: str | None = None) -> int:
    version = store.publish(payload, by="tests").version
    if alias:
        store.set_alias(game="tictactoe", alias=alias, version=version, by="tests")
    return version


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis of this test alone, with persistence, that the test may stop and restart."""
    server = RedisServer(tmp_path / "redis", tcp=True, persist=True).start()
    yield server
    server.stop()


def test_promote_is_seen_within_a_second_with_no_failed_request(
        redis_server: RedisServer, perfect: TableModel, start_server) -> None:
    store = new_store(redis_server.url)
    one = publish(store, perfect.to_bytes(), "production")
    two = publish(store, variant(perfect, games_played=2))
    running: RunningServer = start_server(store, poll_seconds=30)  # pub/sub alone
    traffic = Traffic(running.http, running.grpc)
    traffic.wait_for(20)
    promoted_at = time.monotonic()
    store.set_alias(game="tictactoe", alias="production", version=two, by="tests")
    traffic.wait_for(20)
    while not all(any(a.version == two and a.transport == t for a in traffic.answers)
                  for t in ("rest", "grpc")):
        assert time.monotonic() - promoted_at < 2
        time.sleep(0.01)
    traffic.wait_for(20)
    answers = traffic.stop()
    assert [a for a in answers if a.error] == []
    for transport in ("rest", "grpc"):
        first_new = min(a.at for a in answers if a.version == two and a.transport == transport)
        assert first_new - promoted_at < 1.0
        after = [a.version for a in answers if a.transport == transport and a.at > first_new]
        assert set(after) == {two}  # one switch, no flapping back
    assert {a.version for a in answers} == {one, two}
    assert running.registry.served("tictactoe").models.keys() == {one, two}  # v1 kept warm
    assert running.metrics.registry.get_sample_value(
        "gameai_alias_version", {"game": "tictactoe", "alias": "production"}) == two
    store.close()


def test_rollback_is_served_from_the_warm_previous_version(
        redis_server: RedisServer, perfect: TableModel, start_server) -> None:
    store = new_store(redis_server.url)
    one = publish(store, perfect.to_bytes(), "production")
    running: RunningServer = start_server(store)
    two = publish(store, variant(perfect, games_played=2), "production")
    wait_until(lambda: running.registry.served("tictactoe").aliases["production"] == two, 2)
    loads = running.metrics.registry.get_sample_value(
        "gameai_model_loads_total", {"game": "tictactoe", "result": "ok"})
    store.rollback(game="tictactoe", alias="production", by="tests")
    wait_until(lambda: running.registry.served("tictactoe").aliases["production"] == one, 2)
    assert running.metrics.registry.get_sample_value(
        "gameai_model_loads_total", {"game": "tictactoe", "result": "ok"}) == loads
    assert set(running.registry.served("tictactoe").models) == {one, two}
    store.close()


def test_redis_stop_and_start_under_traffic(own_redis: RedisServer, perfect: TableModel,
                                            start_server) -> None:
    store = new_store(own_redis.url)
    one = publish(store, perfect.to_bytes(), "production")
    two = publish(store, variant(perfect, games_played=2))
    running: RunningServer = start_server(store)
    metric = running.metrics.registry.get_sample_value
    traffic = Traffic(running.http, running.grpc)
    traffic.wait_for(10)

    own_redis.kill()
    wait_until(lambda: metric("gameai_store_up") == 0, 5)
    traffic.wait_for(20)
    ready = httpx.get(f"{running.http}/readyz")
    assert ready.status_code == 200  # still answering from the version held
    assert ready.json()["store"] == "down" and ready.json()["degraded"] is True
    models = httpx.get(f"{running.http}/v1/games/tictactoe/models")
    assert models.status_code == 200 and models.json()["aliases"] == {"production": one}
    pinned = httpx.post(f"{running.http}/v1/games/tictactoe/best-move",
                        json={"board": "---|---|---", "model": str(two)})
    assert pinned.status_code == 503 and pinned.json()["error"]["code"] == "UNAVAILABLE"

    own_redis.start()
    wait_until(lambda: metric("gameai_store_up") == 1, 10)
    assert metric("gameai_store_reconnects_total") >= 1
    store.set_alias(game="tictactoe", alias="production", version=two, by="tests")
    wait_until(lambda: any(a.version == two for a in traffic.answers[-10:]), 3)
    traffic.wait_for(10)
    answers = traffic.stop()
    assert [a for a in answers if a.error] == []
    assert {a.version for a in answers} == {one, two}
    store.close()


def test_redis_back_empty_keeps_the_working_model(own_redis: RedisServer, perfect: TableModel,
                                                  start_server) -> None:
    store = new_store(own_redis.url)
    one = publish(store, perfect.to_bytes(), "production")
    running: RunningServer = start_server(store)
    traffic = Traffic(running.http, running.grpc)
    traffic.wait_for(10)
    redis.Redis.from_url(own_redis.url).flushall()
    wait_until(lambda: running.registry.readiness()["degraded"], 3)
    traffic.wait_for(20)
    ready = httpx.get(f"{running.http}/readyz").json()
    assert ready["ready"] is True and ready["games"]["tictactoe"]["aliases"] == {
        "production": one}
    assert any("missing from the store" in p for p in ready["games"]["tictactoe"]["problems"])
    # A new publish into the empty store is followed as usual.
    fresh = publish(store, variant(perfect, games_played=3), "production")
    assert fresh == one, "a store that lost everything numbers from 1 again"
    new_sha = store.version(game="tictactoe", version=fresh).sha256
    wait_until(lambda: running.registry.served("tictactoe").models[fresh].record.sha256
               == new_sha, 3)
    traffic.wait_for(10)
    answers = traffic.stop()
    assert [a for a in answers if a.error] == []
    assert running.registry.readiness()["degraded"] is False
    store.close()


def test_polling_follows_changes_when_pubsub_is_refused(
        redis_server: RedisServer, perfect: TableModel, start_server) -> None:
    admin = redis.Redis.from_url(redis_server.url)
    admin.execute_command("ACL", "SETUSER", "nopubsub", "on", ">nopubsub-pw", "~*", "&*",
                          "+@all", "-@pubsub")
    url = redis_server.url.replace("redis://", "redis://nopubsub:nopubsub-pw@")
    with pytest.raises(redis.exceptions.NoPermissionError):
        redis.Redis.from_url(url).publish("anything", "x")  # the premise holds
    store = new_store(redis_server.url)  # ops write with full rights
    reader = ModelStore.from_url(url, prefix=store.keys.prefix, timeout=0.5, retries=1)
    publish(store, perfect.to_bytes(), "production")
    two = publish(store, variant(perfect, games_played=2))
    running: RunningServer = start_server(reader, poll_seconds=0.3)
    promoted_at = time.monotonic()
    store.set_alias(game="tictactoe", alias="production", version=two, by="tests")
    seen = wait_until(lambda: running.registry.served("tictactoe").aliases["production"] == two)
    assert time.monotonic() - promoted_at < 1.5 and seen < 1.5
    assert running.registry.store_up
    store.close()
    reader.close()
    admin.execute_command("ACL", "DELUSER", "nopubsub")
    admin.close()


def test_a_damaged_version_is_never_swapped_in(redis_server: RedisServer, perfect: TableModel,
                                               start_server) -> None:
    store = new_store(redis_server.url)
    one = publish(store, perfect.to_bytes(), "production")
    two = publish(store, variant(perfect, games_played=2))
    running: RunningServer = start_server(store, poll_seconds=0.2)
    traffic = Traffic(running.http, running.grpc)
    traffic.wait_for(10)
    # Damage version 2's bytes and point production at it behind the store's back (the
    # store itself refuses such an alias), as a bad restore or a bit flip would.
    raw = redis.Redis.from_url(redis_server.url)
    keys = store.keys
    payload = bytearray(raw.get(keys.payload("tictactoe", two)) or b"")
    payload[len(payload) // 2] ^= 0xFF
    raw.set(keys.payload("tictactoe", two), bytes(payload))
    raw.hset(keys.aliases("tictactoe"), "production", two)
    raw.incr(keys.counter)
    metric = running.metrics.registry.get_sample_value
    wait_until(lambda: (metric("gameai_model_loads_total",
                               {"game": "tictactoe", "result": "corrupt"}) or 0) >= 1, 5)
    traffic.wait_for(20)
    answers = traffic.stop()
    assert [a for a in answers if a.error] == [] and {a.version for a in answers} == {one}
    ready = httpx.get(f"{running.http}/readyz").json()
    assert ready["games"]["tictactoe"]["aliases"]["production"] == one
    assert any(f"version {two} could not be loaded" in p
               for p in ready["games"]["tictactoe"]["problems"])
    raw.close()
    store.close()


def test_a_damaged_version_is_refused_once_not_at_every_refresh(
        redis_server: RedisServer, perfect: TableModel, start_server, caplog) -> None:
    store = new_store(redis_server.url)
    one = publish(store, perfect.to_bytes(), "production")
    two = publish(store, variant(perfect, games_played=2))
    running: RunningServer = start_server(store, poll_seconds=0.2)
    raw = redis.Redis.from_url(redis_server.url)
    keys = store.keys
    raw.set(keys.payload("tictactoe", two), b"damaged")
    raw.hset(keys.aliases("tictactoe"), "production", two)
    raw.incr(keys.counter)
    metric = running.metrics.registry.get_sample_value
    corrupt = {"game": "tictactoe", "result": "corrupt"}
    wait_until(lambda: (metric("gameai_model_loads_total", corrupt) or 0) >= 1, 5)
    for weight in (10, 20, 30):  # each change makes every server refresh
        store.set_canary(game="tictactoe", version=one, weight=weight, by="tests")
        wait_until(lambda w=weight: running.registry.served("tictactoe").canary_weight == w, 3)
    r = httpx.post(f"{running.http}/v1/games/tictactoe/best-move",
                   json={"board": "---|---|---", "model": str(two)})
    assert r.status_code == 404 and r.json()["error"]["field"] == "model"
    assert metric("gameai_model_loads_total", corrupt) == 1
    assert sum(f"version {two}:" in m for m in caplog.messages) == 1
    assert running.registry.served("tictactoe").aliases["production"] == one
    # repaired bytes (as a restore would bring back) are loaded at the next change
    raw.set(keys.payload("tictactoe", two), variant(perfect, games_played=2))
    store.set_canary(game="tictactoe", version=one, weight=0, by="tests")
    wait_until(lambda: running.registry.served("tictactoe").aliases["production"] == two, 3)
    raw.close()
    store.close()


def test_a_lost_store_shows_at_once_not_at_the_next_poll(own_redis: RedisServer,
                                                         perfect: TableModel,
                                                         start_server) -> None:
    store = new_store(own_redis.url)
    publish(store, perfect.to_bytes(), "production")
    running: RunningServer = start_server(store, poll_seconds=30)
    metric = running.metrics.registry.get_sample_value
    wait_until(lambda: running.registry.follower.listening, 5)
    own_redis.kill()
    assert wait_until(lambda: metric("gameai_store_up") == 0, 5) < 1.0
    assert httpx.get(f"{running.http}/readyz").json()["store"] == "down"
    store.close()
