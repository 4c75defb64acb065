"""Self-play on a real Ray cluster of two nodes on the loopback (tests/trainer/raycluster.py):
the model is the local backend's byte for byte; a worker node killed mid-run costs only its
unsent games (the rest go on, or wait for a new node, as configured) and the model is still
the same; the head going away stops ``gameai train`` cleanly with the last checkpoint
written. One cluster for the module; the head-loss test starts its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gameai.cli import main
from gameai.games import get_game
from gameai.models import load_model
from gameai.trainer.training import make_learner

from .raycluster import LOOPBACK, loopback_cluster

pytest.importorskip("ray", reason="the Ray backend is the extra gameai[ray]")

ROOT = Path(__file__).resolve().parents[2]
PARAMS = {"actors": "2", "sync_games": "2000"}
RUN = 80_000  # games after the first round: still playing when the node is killed


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with loopback_cluster(workers=1, cpus=1) as c:
        yield c


def _workers(cluster: Any) -> list[Any]:
    return [n for n in cluster.worker_nodes]


def _train(tmp_path: Path, name: str, *extra: str) -> tuple[bytes, dict[str, Any]]:
    out = tmp_path / name
    argv = ["train", "--game", "tictactoe", "--algorithm", "ntuple", "--games", "3000",
            "--seed", "3", "--param", "actors=2", "--param", "sync_games=500",
            "--eval-every", "1000", "--out", str(out), "--json", "--quiet", *extra]
    assert main(argv) == 0
    return out.read_bytes(), {}


@pytest.mark.parametrize("overlap", ["0", "1"])
def test_a_cluster_trains_the_local_model_byte_for_byte(cluster, tmp_path, capsys,
                                                         monkeypatch, overlap):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    local, _ = _train(tmp_path, "local.model", "--param", f"overlap={overlap}")
    capsys.readouterr()
    remote, _ = _train(tmp_path, "ray.model", "--param", f"overlap={overlap}",
                       "--cluster", cluster.address)
    report = json.loads(capsys.readouterr().out)
    assert remote == local
    assert report["cluster"]["nodes"] == 2 and report["cluster"]["hosts"] == 2
    assert report["cluster"]["backend"] == "ray"
    assert load_model(remote).info.games_played == 3000


def test_the_trainer_worker_plays_on_the_cluster_and_publishes(cluster, redis_url, caplog):
    """``gameai trainer --cluster``: the worker's actors on the cluster, its candidates
    judged and published as without one."""
    from gameai.store import ModelStore
    from gameai.trainer.worker.main import main as worker
    from gameai.trainer.worker.settings import load_settings

    caplog.set_level("INFO", logger="gameai.trainer")
    settings = load_settings({
        "game": "tictactoe", "algorithm": "ntuple", "store_url": redis_url, "seed": 2,
        "metrics_port": 0, "publish_every": 3000, "publish_min_seconds": 0,
        # every candidate: the worker's chunks follow the clock, so under load the rounds
        # (and whether the gates find the 6,000-game candidate better) may differ
        "publish": "every",
        "max_games": 6000, "params": {"actors": "2", "sync_games": "500"},
        "cluster": cluster.address, "on_node_loss": "continue"})
    assert worker(settings) == 0
    assert "self-play on the Ray cluster" in caplog.text
    store = ModelStore.from_url(redis_url)
    try:
        record = store.require(game="tictactoe", ref="latest")
        model = store.load(game="tictactoe", version=record.version)
    finally:
        store.close()
    assert model.info.params["actors"] == 2 and model.info.games_played == 6000


def _learner(game: str, on_loss: str | None, overlap: str = "0") -> Any:
    learner = make_learner(get_game(game), "ntuple", seed=7,
                           params={**PARAMS, "overlap": overlap})
    if on_loss is not None:
        from gameai.trainer.selfplay.ray import RayCluster

        learner.use_backend(RayCluster(on_loss))
    return learner


def _kill_mid_run(cluster: Any, on_loss: str, then: Any = None, overlap: str = "0") -> Any:
    """Train on the cluster; one round in, kill the worker node; ``then(learner, thread)``
    runs after the kill. Returns the learner once it is done."""
    learner = _learner("connect-4x5-4", on_loss, overlap)
    learner.play(2000)  # a round: both hosts placed, one on each node
    assert learner.selfplay_status["hosts"] == 2
    done = threading.Event()
    thread = threading.Thread(target=lambda: (learner.play(RUN), done.set()))
    thread.start()
    time.sleep(1.0)
    assert thread.is_alive(), "the run ended before the kill: make RUN longer"
    (worker,) = _workers(cluster)
    cluster.remove_node(worker)
    if then is not None:
        then(learner, thread)
    thread.join(timeout=240)
    assert done.is_set(), "training did not finish"
    return learner


def _same_as_local(learner: Any, overlap: str = "0") -> None:
    twin = _learner("connect-4x5-4", None, overlap)
    twin.play(2000)
    twin.play(RUN)
    learner.sync()
    assert np.array_equal(learner.weights, twin.weights)
    assert learner.games_played == twin.games_played == 2000 + RUN
    twin.close()


@pytest.mark.parametrize("overlap", ["0", "1"])
def test_a_killed_worker_node_costs_only_its_unsent_games(cluster, overlap):
    """With overlapping rounds the lost host may hold shares of two rounds: those of the
    earlier one are played again from its base (the host left steps back over the update
    it has taken since)."""
    learner = _kill_mid_run(cluster, "continue", overlap=overlap)
    status = learner.selfplay_status
    assert status["hosts_lost"] == 1 and status["nodes"] == 1
    _same_as_local(learner, overlap)  # the lost shares were played again: the same model
    learner.close()
    cluster.add_node(num_cpus=1, object_store_memory=100 * 1024 * 1024)
    cluster.wait_for_nodes()


def test_waiting_for_a_replacement_node(cluster):
    """on_loss=wait: the lost shares wait for a new node's room, then training goes on."""
    def replace(learner: Any, thread: threading.Thread) -> None:
        time.sleep(4.0)
        assert thread.is_alive()  # waiting: the head's one CPU is taken
        cluster.add_node(num_cpus=1, object_store_memory=100 * 1024 * 1024)

    learner = _kill_mid_run(cluster, "wait", replace)
    assert learner.selfplay_status["hosts_lost"] == 1
    assert learner.selfplay_status["nodes"] == 2
    _same_as_local(learner)
    learner.close()


def test_the_head_going_away_stops_the_run_with_the_last_model(tmp_path):
    """A trainer on a cluster whose head dies stops, promptly and with an error status,
    with every checkpoint it wrote whole. Where it notices first (its learner gone, or the
    head silent for 10 s) it also writes the last checkpoint's weights to --out; where Ray
    ends the process first (the trainer's node is the head's: its raylet went too), the
    checkpoints are what is kept (docs/operations.md)."""
    out, kept = tmp_path / "kept.model", tmp_path / "checkpoints"
    env = {**os.environ, **LOOPBACK, "RAY_gcs_rpc_server_reconnect_timeout_s": "8"}
    with loopback_cluster(workers=1, cpus=1, connect=False) as other:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gameai", "train", "--game", "connect-4x5-4",
             "--algorithm", "ntuple", "--games", "5000000", "--seed", "1", "--param",
             "actors=2", "--param", "sync_games=2000", "--eval-every", "4000", "--out",
             str(out), "--keep-checkpoints", str(kept), "--cluster", other.address,
             "--quiet"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and proc.poll() is None and len(
                    list(kept.glob("*.model")) if kept.exists() else []) < 2:
                time.sleep(0.2)  # two checkpoints in: training is under way
            other.remove_node(other.head_node)
            output, _ = proc.communicate(timeout=90)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode != 0, output
    checkpoints = {int(p.stem.rsplit("-", 1)[1]): p for p in kept.glob("*.model")}
    assert len(checkpoints) >= 2, output
    for path in checkpoints.values():  # nothing half-written
        assert load_model(path.read_bytes()).info.games_played > 0
    if out.exists():  # the trainer noticed first
        assert "went away" in output, output
        # the weights last pulled: a whole round, at or after the last checkpoint written
        # (under load the next round can finish before its checkpoint is judged and kept)
        assert load_model(out.read_bytes()).info.games_played >= max(checkpoints)


# -- the judge's work as Ray tasks (issue 24, point 2) ----------------------------------------

def _small_network() -> Any:
    learner = make_learner(get_game("tictactoe"), "ntuple", seed=3,
                           params={"tuples": "2", "length": "3"})
    learner.play(30)
    return learner.export()


def test_the_gates_matches_as_ray_tasks_give_the_local_figures(cluster):
    """The gates' matches, cut into seeded chunks, played as Ray tasks on the two nodes:
    the same measures as in this process, and the answers the tasks' searched opponents
    proved come back to the driver's book (the next model meets them without a search)."""
    from gameai.trainer.evaluation.calibrate import SearchPlayer
    from gameai.trainer.evaluation.evaluate import evaluate
    from gameai.trainer.evaluation.judge import GateJudge, Opponents
    from gameai.trainer.evaluation.spread import RayTasks

    game = get_game("tictactoe")
    model = _small_network()
    report = evaluate(model, random_games=10)

    def judge(runner: Any) -> GateJudge:  # the searched opponent, as past the tables
        opponents = Opponents(game, 10.0, perfect=SearchPlayer(game, time_limit=10.0))
        return GateJudge(game, games=60, seed=1, matches=True, runner=runner,
                         opponents=opponents)

    here = judge(None).measures(model, report)
    remote = judge(RayTasks())
    there = remote.measures(model, report)
    assert (here["runner"], there["runner"]) == ("local", "ray")
    assert there["measures"] == here["measures"]
    assert there["opponent_moves"] == here["opponent_moves"] > 0
    book = remote.opponents.perfect.book
    assert len(book) > 0 and book.misses == 0  # proved by the tasks, none searched here
    again = remote.measures(model, report)
    assert again["measures"] == here["measures"] and book.misses == 0


def test_benchmark_positions_labelled_as_ray_tasks_match_the_local_labels(cluster):
    from gameai.trainer.evaluation.judge import stage_positions
    from gameai.trainer.evaluation.spread import LABELS, Here, RayTasks

    game = get_game("tictactoe")
    states = [s for stage in stage_positions(game, 20, seed=4).values() for s in stage]
    assert len(states) > LABELS  # more than one task
    local = Here().label(game, states, 10.0)
    assert RayTasks().label(game, states, 10.0) == local
    assert all(rank is not None for rank in local)
