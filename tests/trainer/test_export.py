"""The streaming export: the same model whatever the chunk, a measured peak a few bytes an
entry over the model's own arrays, and a refusal before the memory is spent."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import gameai.trainer.learners.export
from gameai.games import get_game
from gameai.games.budget import ENV, OverBudget
from gameai.trainer.learners import export
from gameai.trainer.training import make_learner


@pytest.mark.parametrize(("name", "algorithm"), [("tictactoe", "td"), ("tictactoe", "tally"),
                                                 ("tictactoe", "qlearning"),
                                                 ("connect-4x4-4", "qlearning")])
def test_chunks_never_change_the_model(monkeypatch, name, algorithm):
    learner = make_learner(get_game(name), algorithm, seed=2)
    learner.play(2000)
    whole = learner.export()
    monkeypatch.setattr(gameai.trainer.learners.export, "CHUNK", 7)
    chunked = learner.export()
    assert np.array_equal(whole.keys, chunked.keys)
    assert np.array_equal(whole.values, chunked.values, equal_nan=True)
    assert len(whole.keys) > 7 * 10


@pytest.mark.parametrize("algorithm", ["td", "qlearning", "tally"])
def test_a_streaming_exports_peak_is_measured(algorithm):
    learner = make_learner(get_game("four-in-a-row"), algorithm, seed=1)
    learner.play(20_000)
    seen = []
    require = gameai.trainer.learners.export.budget.require

    def spy(estimate, limit=None):
        seen.append(estimate.bytes)
        return require(estimate, limit)

    gameai.trainer.learners.export.budget.require = spy
    tracemalloc.start()
    try:
        model = learner.export()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        gameai.trainer.learners.export.budget.require = require
    entries = len(learner.table)
    own = model.keys.nbytes + model.values.nbytes
    chunk = gameai.trainer.learners.export.CHUNK * 16 * 90
    print(f"{algorithm}: {entries:,} entries, peak {peak:,} bytes, model {own:,}, "
          f"estimate {max(seen):,}")
    assert peak < own + 64 * entries + chunk  # before: about 1 KB an entry
    assert 0.8 < peak / max(seen) < 1.2


def test_an_export_says_its_time_before_it_starts():
    learner = make_learner(get_game("four-in-a-row"), "tally", seed=1)
    learner.play(2_000)
    seen = []
    require = gameai.trainer.learners.export.budget.require

    def spy(estimate, limit=None):
        seen.append(estimate)
        return require(estimate, limit)

    gameai.trainer.learners.export.budget.require = spy
    try:
        learner.export()
    finally:
        gameai.trainer.learners.export.budget.require = require
    # 16 cells an entry at the measured rate, stated before the model's arrays exist
    assert seen and all(e.seconds == pytest.approx(
        len(learner.table) * 16 * export.POOLED_SECONDS["tally"]) for e in seen)
    assert "s" in seen[-1].describe().rsplit(" and ", 1)[1]


def test_an_export_over_the_limit_is_refused_before_it_starts(monkeypatch):
    learner = make_learner(get_game("four-in-a-row"), "td", seed=1)
    learner.play(20_000)
    monkeypatch.setenv(ENV, "2M")
    tracemalloc.start()
    try:
        with pytest.raises(OverBudget, match=r"exporting a td table of [0-9,]+ entries"):
            learner.export()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


# issue 28: td on four-in-a-row stopped at 16 MB, and its export then asked 18.7; a pooled
# export's chunk alone is about 18 MB on that board
@pytest.mark.parametrize(("algorithm", "limit"), [("td", "16M"), ("qlearning", "40M"),
                                                  ("tally", "128M")])
def test_a_learner_stopped_by_the_memory_budget_keeps_room_to_export(monkeypatch, algorithm,
                                                                     limit):
    """The table grows only while the export of the grown table fits too: a learner the
    limit stops plays no more, says why, and exports everything it learned under that
    same limit."""
    monkeypatch.setenv(ENV, limit)
    learner = make_learner(get_game("four-in-a-row"), algorithm, seed=1)
    stats = learner.play(10_000_000)
    assert learner.full is not None and f"memory limit of {limit[:-1]}.0 MB" in learner.full
    assert stats.games == learner.games_played < 10_000_000
    held = len(learner.table)
    model = learner.export()  # under the same limit: no OverBudget
    assert held > 10_000 and len(model.keys) > 0
    capacity = learner.table.capacity
    learner.play(10_000_000)  # asked again: the table fills what it has, never grows
    assert learner.full is not None and learner.table.capacity == capacity
    assert len(learner.export().keys) >= len(model.keys)
