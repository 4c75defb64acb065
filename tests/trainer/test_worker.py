"""The worker as a real process against a real Redis: metrics, health, publishing only what
beats production, idling once a model is perfect, an operator's pin, SIGTERM, a Redis
outage, and true metadata."""

from __future__ import annotations

import dataclasses
import json
import logging
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
from gameai.trainer.evaluation.evaluate import evaluate
from gameai.trainer.training import with_evaluation
from gameai.trainer.worker.gates import publish
from gameai.trainer.worker.main import IDLE_POLL, main
from gameai.trainer.worker.settings import WorkerSettings, load_settings

from .conftest import prefer

METRICS = ("gameai_trainer_games_total", "gameai_trainer_games_per_second",
           "gameai_trainer_exploration", "gameai_trainer_evaluation",
           "gameai_trainer_published_total", "gameai_trainer_promoted_total",
           "gameai_trainer_publish_failures_total",
           "gameai_trainer_last_publish_timestamp_seconds", "gameai_trainer_store_up",
           "gameai_trainer_idle", "gameai_trainer_production_pinned",
           "gameai_trainer_candidates_total")
IDLE_SECONDS = 6.0  # the interval over which an idle worker must publish and play nothing


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


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (all its threads), from /proc: what it
    costs the machine, whatever the wall clock does."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _metric(port: int, name: str) -> float:
    return _sample(_get(port, "/metrics")[1], name)


def _evaluated(model, **info):
    return with_evaluation(lambda r: type(model)(
        model.game, model.info.with_updates(evaluation=r, **info), model.keys, model.values),
        evaluate(model, random_games=50))


def _flawed(oracle):
    """Unbeatable, but it misses a win in a position its own play never reaches."""
    return _evaluated(prefer(oracle, "OO-|XX-|---", 8), algorithm="flawed")


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
def test_worker_publishes_a_perfect_version_then_idles_without_cpu(redis_url):
    port = free_port()
    proc = _start(redis_url, port, "--seed", "1", "--publish-every", "2000",
                  "--eval-share", "0.5")
    store = ModelStore.from_url(redis_url)
    try:
        _until(lambda: _get(port, "/healthz")[0] == 200, what="/healthz")
        _until(lambda: _metric(port, "gameai_trainer_idle") == 1
               and _metric(port, "gameai_trainer_published_total") == 1, timeout=120,
               what="a perfect version published, then idle")
        versions = store.versions(game="tictactoe")
        games, cpu = _metric(port, "gameai_trainer_games_total"), _cpu_seconds(proc.pid)
        time.sleep(IDLE_SECONDS)
        spent = _cpu_seconds(proc.pid) - cpu
        page = _get(port, "/metrics")[1]
        for name in METRICS:
            _sample(page, name)
        assert _sample(page, "gameai_trainer_games_total") == games  # no game while idle
        assert store.versions(game="tictactoe") == versions  # and no version
        assert spent < 0.05 * IDLE_SECONDS, f"{spent:.2f} s of CPU in {IDLE_SECONDS} s idle"
        assert _sample(page, "gameai_trainer_store_up") == 1
        assert _sample(page, "gameai_trainer_production_pinned") == 0
        health = json.loads(_get(port, "/healthz")[1])
        assert health["idle"] is True and health["status"] == "ok"
        assert health["activity"] == "idle"
        assert _get(port, "/nothing")[0] == 404
    finally:
        code, seconds, out = _stop(proc)
    assert code == 0, out
    assert seconds < 10
    assert len(versions) == 1, out  # one version: the first perfect candidate
    (first,) = versions
    assert store.rollout(game="tictactoe").production == first.version
    assert first.evaluation["optimal_move_rate"] == 1.0
    assert first.evaluation["losses_as_x"] == first.evaluation["losses_as_o"] == 0
    assert first.info["seed"] == 1 and first.info["parent_version"] is None
    assert 0 < first.info["training_seconds"] < 60 and first.info["games_played"] >= 2000
    assert "is perfect (unbeatable, the optimal move in every one of 4,520 positions); " \
           "nothing left to learn" in out
    assert "candidate not published: optimal_move_rate" in out or first.info[
        "games_played"] == 2000


@pytest.mark.slow
def test_a_pin_holds_auto_promotion_off_and_a_release_lets_the_idle_worker_promote(
        redis_url, oracle):
    store = ModelStore.from_url(redis_url)
    flawed = publish(store, _flawed(oracle), by="ops").version
    store.set_alias(game="tictactoe", alias="production", version=flawed, by="ops", pin=True)
    port = free_port()
    proc = _start(redis_url, port, "--seed", "2", "--publish-every", "2000",
                  "--eval-share", "0.5")
    cli = [sys.executable, "-m", "gameai", "models", "--game", "tictactoe", "--store",
           redis_url, "--by", "ops"]
    try:
        _until(lambda: _metric(port, "gameai_trainer_idle") == 1
               and len(store.versions(game="tictactoe")) == 2, timeout=120,
               what="a perfect version published, then idle")
        (_, ours) = [r.version for r in store.versions(game="tictactoe")]
        assert store.rollout(game="tictactoe").production == flawed  # the pin held
        assert _metric(port, "gameai_trainer_production_pinned") == 1
        assert _metric(port, "gameai_trainer_promoted_total") == 0
        release = subprocess.run([*cli[:4], "release", *cli[4:]], capture_output=True,
                                 text=True, timeout=60)
        assert release.returncode == 0, release.stderr
        _until(lambda: store.rollout(game="tictactoe").production == ours, timeout=15,
               what="the worker to promote its version once released")
        _until(lambda: _metric(port, "gameai_trainer_production_pinned") == 0, what="unpinned")
        assert _metric(port, "gameai_trainer_promoted_total") == 1
        # an operator rolls back: pinned again, and the worker leaves it there
        back = subprocess.run([*cli[:4], "rollback", *cli[4:]], capture_output=True,
                              text=True, timeout=60)
        assert back.returncode == 0, back.stderr
        _until(lambda: _metric(port, "gameai_trainer_production_pinned") == 1, what="pinned")
        time.sleep(2 * IDLE_POLL)
        assert store.rollout(game="tictactoe").production == flawed
        assert _metric(port, "gameai_trainer_idle") == 1  # its own version is still perfect
    finally:
        code, _, out = _stop(proc)
    assert code == 0, out
    assert [r.version for r in store.versions(game="tictactoe")] == [flawed, ours]
    assert "not promoted: tictactoe production is pinned by ops" in out
    assert f"promoted tictactoe version {ours}, held back until now" in out


EVENT_SECONDS = 2.0  # an operator's change reaches a busy trainer within this (issue 28)


def _health(port: int) -> dict:
    return json.loads(_get(port, "/healthz")[1])


def _within(condition, seconds: float, what: str) -> float:
    """How long ``condition`` took to hold, failing past ``seconds``."""
    started = time.monotonic()
    _until(condition, timeout=seconds, what=what)
    return time.monotonic() - started


@pytest.mark.slow
def test_a_busy_trainer_follows_pin_promote_release_and_rollback_at_once(redis_url, oracle):
    """Issue 28: a trainer in a long stretch of self-play (its next candidate about a
    minute away: evaluation may take 0.1% of its time) learns of an operator's promote,
    pin, release and rollback within a second or two, from the store's events: /healthz
    and the pinned gauge follow at once, and a release promotes its held-back version."""
    store = ModelStore.from_url(redis_url)
    port = free_port()
    proc = _start(redis_url, port, "--seed", "5", "--publish-every", "20000",
                  "--publish", "every", "--eval-share", "0.001")
    try:
        _until(lambda: store.rollout(game="tictactoe").production is not None, timeout=120,
               what="the trainer's first version in production")
        (ours,) = [r.version for r in store.versions(game="tictactoe")]
        assert store.version(game="tictactoe", version=ours).evaluation[
            "optimal_move_rate"] == 1.0
        assert _health(port)["production_pinned"] is False
        games = _metric(port, "gameai_trainer_games_total")
        flawed = publish(store, _flawed(oracle), by="ops").version
        # an operator promotes a worse version: production pinned there
        store.set_alias(game="tictactoe", alias="production", version=flawed, by="ops",
                        pin=True)
        _within(lambda: _health(port)["production_pinned"] is True, EVENT_SECONDS,
                "/healthz to say pinned after a promote")
        assert _metric(port, "gameai_trainer_production_pinned") == 1
        _until(lambda: _metric(port, "gameai_trainer_games_total") > games,
               what="self-play to go on")  # busy all along
        assert store.rollout(game="tictactoe").production == flawed  # the pin holds
        # the release: the trainer's own better version goes back at once
        assert store.release(game="tictactoe", by="ops") is not None
        _within(lambda: store.rollout(game="tictactoe").production == ours, EVENT_SECONDS,
                "the held-back version promoted after the release")
        _within(lambda: _health(port)["production_pinned"] is False, EVENT_SECONDS,
                "/healthz to say unpinned")
        assert _metric(port, "gameai_trainer_production_pinned") == 0
        # a pin where production is, then a rollback (pinned again): both seen at once
        store.release(game="tictactoe", by="ops")
        store.pin(game="tictactoe", by="ops")
        _within(lambda: _metric(port, "gameai_trainer_production_pinned") == 1,
                EVENT_SECONDS, "the gauge to say pinned after a pin")
        store.release(game="tictactoe", by="ops")
        _within(lambda: _metric(port, "gameai_trainer_production_pinned") == 0,
                EVENT_SECONDS, "the gauge to say unpinned after a release")
        store.rollback(game="tictactoe", by="ops", pin=True)
        _within(lambda: _health(port)["production_pinned"] is True, EVENT_SECONDS,
                "/healthz to say pinned after a rollback")
        assert store.rollout(game="tictactoe").production == flawed
        assert _health(port)["activity"] == "self-play"  # still busy, never idle
        assert len(store.versions(game="tictactoe")) == 2  # no candidate came meanwhile
    finally:
        code, _, out = _stop(proc)
    assert code == 0, out
    assert f"promoted tictactoe version {ours}, held back until now" in out


@pytest.mark.slow
def test_redis_outage_pauses_publishing_and_loses_nothing(tmp_path):
    redis = RedisServer(tmp_path / "redis", tcp=True, persist=True).start()
    port = free_port()
    # every candidate (the operator asked for them), from a learner that is never perfect
    proc = _start(redis.url, port, "--publish-every", "3000", "--publish", "every",
                  "--eval-share", "0.5", "--param", "exploring_starts=0", "--seed", "1")
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
                metrics_port=0, host=None, from_version=None, resume=False, promote="auto",
                seed=1, params={}, max_games=500, log_level="warning", eval_share=1.0)
    return load_settings({**base, **kw})


NEVER_PERFECT = {"exploring_starts": "0"}  # td without exploring starts plateaus below 100%


def test_no_version_is_published_that_is_not_better(redis_url, oracle, caplog):
    caplog.set_level(logging.INFO, logger="gameai.trainer")
    with ModelStore.from_url(redis_url) as store:
        production = publish(store, _flawed(oracle), by="test", promote="auto").version
        assert main(_args(redis_url, max_games=20_000, publish_every=2000,
                          params=NEVER_PERFECT)) == 0
        assert [r.version for r in store.versions(game="tictactoe")] == [production]
    refused = [r.message for r in caplog.records if "not published" in r.message]
    assert len(refused) == 10  # a candidate every 2,000 games, none better
    assert all("only a perfect model is promoted" in m for m in refused)


def test_a_perfect_production_leaves_the_worker_idle_before_it_plays(redis_url, oracle,
                                                                      caplog):
    caplog.set_level(logging.INFO, logger="gameai.trainer")
    with ModelStore.from_url(redis_url) as store:
        perfect = publish(store, _evaluated(oracle), by="test", promote="auto").version
        assert main(_args(redis_url, max_games=100_000)) == 0
        assert [r.version for r in store.versions(game="tictactoe")] == [perfect]
    text = caplog.text
    assert f"idle: production version {perfect} is perfect" in text
    assert "4,520 positions" in text and "stopped after 0 games" in text


def test_publish_every_never_idles_but_never_replaces_a_perfect_production(redis_url, oracle):
    with ModelStore.from_url(redis_url) as store:
        perfect = publish(store, _evaluated(oracle), by="test", promote="auto").version
        assert main(_args(redis_url, max_games=4000, publish_every=2000,
                          publish="every")) == 0
        versions = [r.version for r in store.versions(game="tictactoe")]
        assert len(versions) == 3 and store.rollout(game="tictactoe").production == perfect


def test_every_version_names_its_parent_its_training_time_and_its_seed(redis_url):
    with ModelStore.from_url(redis_url) as store:
        assert main(_args(redis_url, max_games=6000, publish_every=2000, publish="every",
                          params=NEVER_PERFECT, seed=7)) == 0
        versions = store.versions(game="tictactoe")
    assert [r.info["games_played"] for r in versions] == [2000, 4000, 6000]
    assert [r.info["parent_version"] for r in versions] == [None, 1, 2]
    assert {r.info["seed"] for r in versions} == {7}
    seconds = [r.info["training_seconds"] for r in versions]
    assert 0 < seconds[0] < seconds[1] < seconds[2]


def test_without_a_seed_the_worker_draws_one_and_records_it(redis_url):
    a, b = _args(redis_url, seed=None), _args(redis_url, seed=None)
    assert a.seed != b.seed  # two draws of 2**31 values
    with ModelStore.from_url(redis_url) as store:
        assert main(_args(redis_url, seed=None, publish="every", max_games=500)) == 0
        (record,) = store.versions(game="tictactoe")
    assert isinstance(record.info["seed"], int)


def test_worker_warm_starts_from_a_version(redis_url, td_model):
    with ModelStore.from_url(redis_url) as store:
        parent = publish(store, td_model, by="test").version
        assert main(_args(redis_url, from_version=str(parent), max_games=1,
                          publish_every=1, publish="every")) == 0
        child = store.versions(game="tictactoe")[-1]
        assert child.info["parent_version"] == parent
        assert child.info["games_played"] == td_model.info.games_played + 1
        assert child.info["training_seconds"] >= td_model.info.training_seconds > 0
        assert child.evaluation["losses_as_x"] == child.evaluation["losses_as_o"] == 0


def test_a_warm_start_goes_on_with_its_parents_recipe(redis_url, caplog):
    """A warm start trains on with the parameters that made the parent (here a step, a
    trace and one sibling a ply), under the worker's own ``--param``; how the games are
    run (the parallel actors) stays the worker's."""
    from gameai.games import get_game
    from gameai.trainer.training import make_learner

    caplog.set_level(logging.INFO, logger="gameai.trainer")
    recipe = {"alpha_end": 0.05, "lam": 0.7, "siblings": 1, "actors": 2}
    parent_learner = make_learner(get_game("tictactoe"), "ntuple", seed=3, params=recipe)
    parent_learner.play(200)
    parent_model = parent_learner.export()
    parent_learner.close()
    with ModelStore.from_url(redis_url) as store:
        parent = publish(store, parent_model, by="test").version
        assert main(_args(redis_url, algorithm="ntuple", from_version=str(parent),
                          max_games=1, publish_every=1, publish="every",
                          params={"lam": "0.3"})) == 0
        child = store.versions(game="tictactoe")[-1]
    params = child.info["params"]
    assert child.info["parent_version"] == parent
    assert (params["alpha_end"], params["siblings"]) == (0.05, 1)  # the parent's
    assert params["lam"] == 0.3  # the worker's --param
    assert params["actors"] == 1  # how the games run: the worker's
    said = [r.message for r in caplog.records if "recipe" in r.message]
    assert said and "siblings=1" in said[0] and "alpha_end=0.05" in said[0]


def test_a_recipe_this_learner_cannot_take_leaves_the_workers_own(redis_url, caplog):
    """A parent of another algorithm, or one whose recorded parameters this learner cannot
    take, is warm-started from with the worker's own parameters; the parameters left out
    are named."""
    from gameai.games import get_game
    from gameai.models import ModelInfo
    from gameai.trainer.training import make_learner
    from gameai.trainer.worker.main import inherited_params

    settings = _args(redis_url, algorithm="ntuple")
    own = make_learner(get_game("tictactoe"), "ntuple", seed=1).params

    def parent(algorithm: str, **params: object) -> ModelInfo:
        return ModelInfo(game="tictactoe", algorithm=algorithm, params=params)

    assert inherited_params(own, parent("td", alpha_end=0.05), settings) is None
    assert inherited_params(own, parent("ntuple", **dataclasses.asdict(own)), settings) is None
    assert inherited_params(own, parent("ntuple", alpha_end=-1.0), settings) is None
    caplog.set_level(logging.WARNING, logger="gameai.trainer")
    recipe = inherited_params(own, parent("ntuple", alpha_end=0.05, retired=3), settings)
    assert recipe is not None and recipe["alpha_end"] == 0.05 and "retired" not in recipe
    assert "parameters retired are not this learner's" in caplog.text
    assert "the parent's recipe cannot be used (parameter 'alpha_end' must be" in caplog.text


def test_resume_starts_fresh_on_an_empty_store_then_goes_on_from_production(redis_url):
    with ModelStore.from_url(redis_url) as store:
        assert main(_args(redis_url, resume=True, max_games=300, publish_every=300,
                          publish="every")) == 0
        first = store.versions(game="tictactoe")[-1]
        assert first.info["parent_version"] is None
        store.set_alias(game="tictactoe", alias="production", version=first.version, by="t")
        assert main(_args(redis_url, resume=True, max_games=1, publish_every=1,
                          publish="every")) == 0
        second = store.versions(game="tictactoe")[-1]
        assert second.info["parent_version"] == first.version
        assert second.info["games_played"] == first.info["games_played"] + 1


def test_worker_publishes_at_most_once_per_interval(redis_url):
    with ModelStore.from_url(redis_url) as store:
        started = time.monotonic()
        assert main(_args(redis_url, max_games=20_000, publish_every=100,
                          publish_min_seconds=3600, publish="every", eval_share=0.1,
                          params=NEVER_PERFECT)) == 0
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


def test_a_worker_stopped_by_the_memory_budget_publishes_what_it_learned(redis_url, caplog,
                                                                         monkeypatch):
    """Issue 28: the table reaching the memory limit ends training, not the model: its
    last model goes out as the last candidate (every candidate here: four-in-a-row is too
    large for the gates), and the worker says why it stopped."""
    caplog.set_level(logging.INFO, logger="gameai.trainer")
    monkeypatch.setenv("GAMEAI_MEMORY_LIMIT", "16M")
    assert main(_args(redis_url, game="four-in-a-row", publish="every",
                      publish_every=10_000_000, max_games=10_000_000)) == 0
    with ModelStore.from_url(redis_url) as store:
        (version,) = store.versions(game="four-in-a-row")
        model = store.load(game="four-in-a-row", version=version.version)
    assert 0 < version.info["games_played"] < 10_000_000
    assert len(model.keys) > 10_000
    assert "training stopped (memory budget): growing a learner's table" in caplog.text


def test_resume_on_an_empty_store_serves_the_bundled_model_and_goes_on_from_it(redis_url):
    """Issue 28: a Connect Four trainer started with --resume on an empty store (Compose,
    Kubernetes, ``gameai up``) publishes the game's bundled model as production at once, so
    the servers get ready in seconds, and trains on from it; --no-bundled learns from
    nothing; a trainer of another algorithm could not go on from it and gets none."""
    import hashlib

    from gameai.models.bundled import bundled, publish_bundled
    from gameai.trainer.training import make_learner
    from gameai.trainer.worker.main import _resume

    entry = bundled("connect-four")
    assert entry is not None
    with ModelStore.from_url(redis_url) as store:
        fresh = _args(redis_url, game="connect-four", algorithm="ntuple", resume=True,
                      bundled=False)
        learner = make_learner(fresh.game, "ntuple", seed=1)
        assert _resume(learner, store, fresh) is learner
        assert store.versions(game="connect-four") == [] and learner.games_played == 0
        assert publish_bundled(store, "connect-four", algorithm="td", by="t") is None
        assert store.versions(game="connect-four") == []

        settings = _args(redis_url, game="connect-four", algorithm="ntuple", resume=True)
        learner = _resume(learner, store, settings)
        (record,) = store.versions(game="connect-four")
        assert store.resolve(game="connect-four", ref="production") == record.version
        assert store.pinned(game="connect-four") is None  # better candidates replace it
        stored = store.load(game="connect-four", version=record.version)
        assert hashlib.sha256(stored.to_bytes()).hexdigest() == entry.sha256
        assert learner.parent_version == record.version
        assert learner.games_played == stored.info.games_played > 1_000_000
        recipe = {k: v for k, v in stored.info.params.items() if k != "actors"}
        assert learner.params.to_json().items() >= recipe.items()  # it goes on with its recipe
        _resume(learner, store, settings)  # production there now: nothing published again
        assert len(store.versions(game="connect-four")) == 1
