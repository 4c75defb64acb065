"""The parallel actors' metrics (docs/contracts.md): games/s per actor, actors, merge lag,
staleness, nodes and CPUs, read back from a fresh registry after real rounds."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from gameai.trainer.selfplay.local import LocalBackend
from gameai.trainer.training import make_learner
from gameai.trainer.worker.metrics import TrainerMetrics


def test_parallel_actors_report_their_figures(ttt):
    registry = CollectorRegistry()
    metrics = TrainerMetrics(registry, game="tictactoe", algorithm="ntuple")
    learner = make_learner(ttt, "ntuple", seed=1, params={"actors": "3", "sync_games": "300"})
    learner.use_backend(LocalBackend(2))
    learner.play(900)
    metrics.selfplay(learner.selfplay_status)
    labels = {"game": "tictactoe", "algorithm": "ntuple"}

    def value(name: str, **extra: str) -> float | None:
        return registry.get_sample_value(name, {**labels, **extra})

    assert value("gameai_trainer_actors") == 2  # two threads play the three slots
    rates = [value("gameai_trainer_actor_games_per_second", actor=f"thread-{i}")
             for i in (1, 2)]
    assert all(r is not None and r > 0 for r in rates)
    assert value("gameai_trainer_merge_lag_seconds") >= 0
    assert value("gameai_trainer_staleness_games") == 0  # reproducible rounds
    busy = value("gameai_trainer_actors_busy_ratio")
    assert busy is not None and 0 < busy <= 1  # playing part of the call, not more than it
    assert value("gameai_trainer_cluster_nodes") == 1
    assert value("gameai_trainer_cluster_cpus") >= 1
    assert value("gameai_trainer_actors_lost") == 0
    metrics.selfplay({})  # one actor: nothing changes, nothing breaks
    assert value("gameai_trainer_actors") == 2
    learner.close()
