"""What the faults look like to a real Prometheus scraping a real server with the deployed
scrape job and alert rules: the store outage, the reconnection, the refused version, and
the alerts that fire for them."""

import json
from pathlib import Path

import pytest
import redis

from gameai.store import ModelStore, RedisServer
from gameai.stress.harness import perfect_model, start_server, variant
from tests.deploy.prometheus_server import PrometheusServer, loopback_config

pytestmark = [pytest.mark.stress, pytest.mark.slow]


def _value(prom: PrometheusServer, expr: str) -> float | None:
    answer = prom.query(expr)
    result = answer.get("data", {}).get("result", []) if answer else []
    return float(result[0]["value"][1]) if result else None


def test_prometheus_sees_the_outage_the_reconnection_and_the_refused_version(
        tmp_path: Path) -> None:
    own = RedisServer(tmp_path / "redis", tcp=True, persist=True).start()
    store = ModelStore.from_url(own.url, timeout=0.5, retries=1)
    one = store.publish(variant(perfect_model(), 0), by="tests").version
    store.set_alias(game="tictactoe", alias="production", version=one, by="tests")
    server = start_server(own.url, log_dir=tmp_path, workers=1,
                          extra=("--poll-seconds", "0.5", "--log-level", "warning"))
    config = loopback_config({"gameai-server": [f"127.0.0.1:{server.http_port}"]})
    try:
        (tmp_path / "prometheus").mkdir()
        with PrometheusServer(config, tmp_path / "prometheus") as prom:
            prom.wait_until(lambda: _value(prom, 'up{job="gameai-server"}') == 1, "scraping",
                            30)
            own.kill()
            prom.wait_until(lambda: _value(prom, "min(gameai_store_up)") == 0, "store down",
                            15)
            own.start()
            prom.wait_until(lambda: _value(prom, "sum(gameai_store_reconnects_total)") == 1
                            and _value(prom, "min(gameai_store_up)") == 1, "reconnected", 15)
            raw = redis.Redis.from_url(own.url)
            two = store.publish(variant(perfect_model(), 1), by="tests").version
            raw.set(store.keys.payload("tictactoe", two), b"damaged")
            raw.hset(store.keys.aliases("tictactoe"), "production", two)
            counter = raw.incr(store.keys.counter)
            raw.publish(store.keys.events, json.dumps({"game": "tictactoe", "type": "alias",
                                                       "counter": counter}))
            corrupt = 'sum(gameai_model_loads_total{result="corrupt"})'
            prom.wait_until(lambda: _value(prom, corrupt) == 1, "the refusal counted", 15)
            prom.wait_until(lambda: any(a["labels"]["alertname"] == "GameaiModelLoadFailures"
                                        for a in prom.api("alerts")["alerts"]),
                            "GameaiModelLoadFailures", 30)
            assert _value(prom, 'gameai_alias_version{alias="production"}') == one
            assert _value(prom, "min_over_time(gameai_store_up[2m])") == 0
            raw.close()
    finally:
        server.terminate()
        store.close()
        own.stop()
