"""The worker as a real process against a real Redis: metrics, health, publishing through
the gates, SIGTERM, and a Redis outage."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from gameai.store import ModelStore, RedisServer
from gameai.store.embedded import free_port
from trainer.evaluate import evaluate
from trainer.gates import publish
from trainer.settings import WorkerSettings, load_settings
from trainer.training import with_evaluation
from trainer.worker import main

METRICS = ("gameai_trainer_games_total", "gameai_trainer_games_per_second",
           "gameai_trainer_exploration", "gameai_trainer_evaluation",
           "gameai_trainer_published_total", "gameai_trainer_promoted_total",
           "gameai_trainer_publish_failures_total",
           "gameai_trainer_last_publish_timestamp_seconds", "gameai_trainer_store_up")


def _start(store_url: str, port: int, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gameai", "trainer", "--game", "tictactoe", "--algorithm", "td",
         "--store", store_url, "--metrics-port", str(port), "--publish-min-seconds", "0",
         *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "GAMEAI_LOG_LEVEL": "info"})


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def _sample(text: str, name: str) -> float:
    """The summed value of every sample of ``name`` in a /metrics page."""
    total, seen = 0.0, False
    for line in text.splitlines():
        if line.startswith(name) and line[len(name)] in " {":
            total += float(line.rsplit(" ", 1)[1])
            seen = True
    assert seen, f"{name} missing"
    return total


def _until(condition, timeout: float = 30.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _stop(proc: subprocess.Popen[str]) -> tuple[int, float, str]:
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return proc.returncode, time.monotonic() - started, out


@pytest.mark.slow
def test_worker_publishes_promotes_serves_metrics_and_stops_on_sigterm(redis_url):
    port = free_port()
    proc = _start(redis_url, port, "--publish-every", "2000")
    try:
        _until(lambda: _get(port, "/healthz")[0] == 200, what="/healthz")
        store = ModelStore.from_url(redis_url)
        _until(lambda: len(store.versions(game="tictactoe")) >= 2, what="two versions")
        status, page = _get(port, "/metrics")
        assert status == 200
        for name in METRICS:
            _sample(page, name)
        assert 'gameai_trainer_evaluation{algorithm="td",game="tictactoe",metric=' \
               '"optimal_move_rate"}' in page
        assert _sample(page, "gameai_trainer_games_total") >= 4000
        assert _sample(page, "gameai_trainer_store_up") == 1
        assert _get(port, "/nothing")[0] == 404
    finally:
        code, seconds, out = _stop(proc)
    assert code == 0, out
    assert seconds < 10
    versions = store.versions(game="tictactoe")
    for record in versions:  # nothing half-done: every version loads and verifies
        model = store.load(game="tictactoe", version=record.version)
        assert model.info.evaluation["losses_as_x"] == 0
    assert store.rollout(game="tictactoe").production in {r.version for r in versions}
    assert "stopped after" in out


@pytest.mark.slow
def test_redis_outage_pauses_publishing_and_loses_nothing(tmp_path):
    redis = RedisServer(tmp_path / "redis", tcp=True, persist=True).start()
    port = free_port()
    proc = _start(redis.url, port, "--publish-every", "3000")
    try:
        store = ModelStore.from_url(redis.url, retries=0)
        _until(lambda: len(store.versions(game="tictactoe")) >= 1, what="a first version")
        redis.stop()
        _until(lambda: _sample(_get(port, "/metrics")[1],
                               "gameai_trainer_publish_failures_total") >= 2,
               what="failed publishes")
        page = _get(port, "/metrics")[1]
        assert _sample(page, "gameai_trainer_store_up") == 0
        games_down = _sample(page, "gameai_trainer_games_total")
        _until(lambda: _sample(_get(port, "/metrics")[1], "gameai_trainer_games_total")
               > games_down + 3000, what="training to go on")
        assert _get(port, "/healthz")[0] == 200
        redis.start()
        _until(lambda: _sample(_get(port, "/metrics")[1], "gameai_trainer_store_up") == 1,
               timeout=60, what="the store to come back")
        store = ModelStore.from_url(redis.url)
        _until(lambda: store.versions(game="tictactoe")[-1].info["games_played"] > games_down,
               what="a version trained through the outage")
    finally:
        code, seconds, out = _stop(proc)
        redis.stop()
    assert code == 0, out
    assert seconds < 10
    redis.start()
    try:
        store = ModelStore.from_url(redis.url)
        versions = store.versions(game="tictactoe")
        numbers = [r.version for r in versions]
        assert numbers == list(range(1, len(numbers) + 1))  # none lost, none twice
        assert versions[-1].info["games_played"] > games_down  # trained through the outage
        for record in versions:
            store.load(game="tictactoe", version=record.version)
    finally:
        redis.stop()
    assert "publish failed, retrying" in out


def _args(redis_url: str, **kw: object) -> WorkerSettings:
    base = dict(game="tictactoe", algorithm="td", store_url=redis_url, store_file=None,
                store_prefix=None, data_dir=None, publish_every=500, publish_min_seconds=0,
                metrics_port=0,
                host=None, from_version=None, resume=False, promote="auto", seed=1, params={},
                max_games=500, log_level="warning")
    return load_settings({**base, **kw})


def test_worker_gates_refuse_a_worse_candidate(redis_url, oracle):
    with ModelStore.from_url(redis_url) as store:
        perfect = with_evaluation(lambda r: type(oracle)(
            oracle.game, oracle.info.with_updates(evaluation=r), oracle.keys, oracle.values),
            evaluate(oracle, random_games=50))
        production = publish(store, perfect, by="test", promote="auto").version
        assert main(_args(redis_url, max_games=300, publish_every=300)) == 0
        versions = store.versions(game="tictactoe")
        assert len(versions) == 2
        assert versions[1].evaluation["optimal_move_rate"] < 1.0
        assert store.rollout(game="tictactoe").production == production


def test_worker_warm_starts_from_a_version(redis_url, td_model):
    with ModelStore.from_url(redis_url) as store:
        parent = publish(store, td_model, by="test").version
        assert main(_args(redis_url, from_version=str(parent), max_games=1,
                          publish_every=1)) == 0
        child = store.versions(game="tictactoe")[-1]
        assert child.info["parent_version"] == parent
        assert child.info["games_played"] == td_model.info.games_played + 1
        assert child.evaluation["losses_as_x"] == child.evaluation["losses_as_o"] == 0


def test_resume_starts_fresh_on_an_empty_store_then_goes_on_from_production(redis_url):
    with ModelStore.from_url(redis_url) as store:
        assert main(_args(redis_url, resume=True, max_games=300, publish_every=300)) == 0
        first = store.versions(game="tictactoe")[-1]
        assert first.info["parent_version"] is None
        store.set_alias(game="tictactoe", alias="production", version=first.version, by="t")
        assert main(_args(redis_url, resume=True, max_games=1, publish_every=1)) == 0
        second = store.versions(game="tictactoe")[-1]
        assert second.info["parent_version"] == first.version
        assert second.info["games_played"] == first.info["games_played"] + 1


def test_worker_publishes_at_most_once_per_interval(redis_url):
    with ModelStore.from_url(redis_url) as store:
        started = time.monotonic()
        assert main(_args(redis_url, max_games=20_000, publish_every=100,
                          publish_min_seconds=3600)) == 0
        assert time.monotonic() - started < 30
        versions = store.versions(game="tictactoe")
        assert len(versions) == 2  # the first candidate, and the last at max-games
        assert versions[-1].info["games_played"] == 20_000


def test_bad_settings_stop_the_worker_with_a_message(redis_url):
    proc = subprocess.run(
        [sys.executable, "-m", "gameai", "trainer", "--game", "tictactoe", "--algorithm", "td",
         "--store", redis_url],
        env={**os.environ, "GAMEAI_METRICS_PORT": "99999"}, capture_output=True, text=True,
        timeout=60)
    assert proc.returncode == 2
    assert "GAMEAI_METRICS_PORT (--metrics-port): must be between 0 and 65535" in proc.stderr
    with pytest.raises(Exception, match="--from-version 7"):
        main(_args(redis_url, from_version="7"))
