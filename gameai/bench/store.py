"""``gameai bench store``: how fast the store's operations are against a real Redis.

Each figure is a rate over ``n`` calls on a private ``redis-server`` (loopback TCP, no
persistence), next to the baseline it cannot beat measured in the same run: a raw ``SET``
or ``GET`` of the same bytes with redis-py. The ratio says what the store's checks (model
decoding, sha256, the Lua script, the event) cost on top of one Redis round trip.
"""

from __future__ import annotations

import hashlib
import queue
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from tqdm import tqdm


def run(*, n: int = 300, progress: bool = True) -> dict[str, Any]:
    """Measure and return the figures (see the module docstring)."""
    import redis

    from gameai.games import get_game
    from gameai.models import ModelInfo, TableModel
    from gameai.models.oracle import solver_model
    from gameai.store import ModelStore, RedisServer

    game = get_game("tictactoe")
    oracle = solver_model(game)
    payloads = [TableModel(game, ModelInfo(game=game.name, algorithm="bench", seed=i),
                           oracle.keys, oracle.values).to_bytes() for i in range(n)]
    bar = tqdm(total=7 * n, desc="bench store", unit="op", disable=not progress)
    figures: dict[str, Any] = {"n": n, "payload_bytes": len(payloads[0])}
    with tempfile.TemporaryDirectory() as tmp, \
            RedisServer(tmp, tcp=True, persist=False) as server:
        raw = redis.Redis.from_url(server.url)
        store = ModelStore.from_url(server.url, prefix="bench")

        def rate(name: str, call: Callable[[Any], object], items: list[Any]) -> float:
            started = time.perf_counter()
            for item in items:
                call(item)
                bar.update()
            per_second = len(items) / (time.perf_counter() - started)
            figures[f"{name}_per_second"] = round(per_second, 1)
            return per_second

        numbered = list(enumerate(payloads))
        versions = list(range(1, n + 1))
        raw_set = rate("raw_set", lambda ip: raw.set(f"raw:{ip[0]}", ip[1]), numbered)
        publish = rate("publish", lambda p: store.publish(p, by="bench"), payloads)
        raw_get = rate("raw_get", lambda ip: raw.get(f"raw:{ip[0]}"), numbered)
        load = rate("load", lambda v: store.load(game=game.name, version=v), versions)
        rate("rollout", lambda _: store.rollout(game=game.name), versions)
        rate("set_alias", lambda v: store.set_alias(game=game.name, alias="production",
                                                    version=v, by="bench"), versions)
        figures["event_latency_ms_median"] = _event_latency(store, payloads[:n], bar)
        figures["publish_vs_raw_set"] = round(raw_set / publish, 2)
        figures["load_vs_raw_get"] = round(raw_get / load, 2)
        figures["sha256_mb_per_second"] = _sha_rate(payloads)
        store.close()
        raw.close()
    bar.close()
    return figures


def _event_latency(store: Any, payloads: list[bytes], bar: tqdm) -> float:
    """Median milliseconds from a publish call's start to its event reaching a listener."""
    events: queue.Queue[float] = queue.Queue()
    delays = []
    with store.subscribe(lambda e: events.put(time.perf_counter())) as sub:
        sub.wait_connected(5)
        for p in payloads:
            started = time.perf_counter()
            store.publish(p, by="bench")
            delays.append(events.get(timeout=5) - started)
            bar.update()
    return round(statistics.median(delays) * 1000, 3)


def _sha_rate(payloads: list[bytes]) -> float:
    started = time.perf_counter()
    for p in payloads:
        hashlib.sha256(p).digest()
    return round(sum(map(len, payloads)) / (time.perf_counter() - started) / 1e6, 1)
