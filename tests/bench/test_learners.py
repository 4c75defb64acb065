"""The trainer's benchmarks with their targets (``pytest -m bench``; not in the default run).
The same figures come from ``gameai bench selfplay`` and ``gameai bench learners``."""

import pytest

from gameai.bench.learners import SELFPLAY_TARGET, learners, selfplay

pytestmark = pytest.mark.bench


def test_selfplay_beats_the_target_and_plain_python():
    figures = selfplay("tictactoe", seconds=3.0)
    print(figures)
    assert figures["games_per_second"] >= SELFPLAY_TARGET
    assert figures["speedup_vs_python"] > 10


def test_learners_reach_perfect_within_their_targets():
    figures = learners(seeds=(1, 2, 3))
    print(figures)
    for algorithm in ("td", "qlearning", "tally", "mlp"):
        assert figures[algorithm]["met"], figures[algorithm]


def test_memory_estimates_hold_within_a_fifth():
    from gameai.bench.memory import run

    # tally's pooled export: many of its entries hold nothing, and only the rows written
    # are counted (and allocated)
    figures = run(("solve:connect-4x5-4", "analyze:connect-4x5-4",
                   "export:four-in-a-row:td:100000", "export:connect-4x5-4:tally:100000"))
    print(figures)
    assert figures["worst_ratio"] <= 0.2
    assert all(row["estimate_seconds"] for row in figures["cases"])  # time estimated too
