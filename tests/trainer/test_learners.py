"""The three self-play learners: they improve on fixed seeds, they are deterministic, and
they warm-start from a model."""

import numpy as np
import pytest

from gameai.games import get_game
from gameai.games.mnk.board import Board
from gameai.models import ModelInfo, load_model
from gameai.trainer.evaluation.evaluate import (
    evaluate,
    losses,
    optimal_move_rate,
    unbeatable,
    vs_random,
)
from gameai.trainer.learners.base import BadParameter
from gameai.trainer.training import CannotTrain, make_learner, train

FIXED = ModelInfo(game="tictactoe", algorithm="fixed", created_at="2026-01-01T00:00:00Z")
UNBEATABLE_WITHIN = {"td": 20_000, "qlearning": 200_000, "tally": 5_000_000}


@pytest.mark.parametrize("algorithm", ["td", "qlearning", "tally"])
def test_learner_improves_until_unbeatable(ttt, algorithm):
    learner = make_learner(ttt, algorithm, seed=1)
    learner.play(100)
    early = learner.export()
    early_lost = losses(early, side="X") + losses(early, side="O")
    early_rate = optimal_move_rate(early)
    result = train(learner, games=UNBEATABLE_WITHIN[algorithm], until_unbeatable=True)
    assert result.stopped == "unbeatable"
    assert early_lost > 0
    assert result.evaluation["losses_as_x"] == result.evaluation["losses_as_o"] == 0
    assert result.evaluation["optimal_move_rate"] > early_rate + 0.1
    assert result.history[-1].evaluation["losses_as_x"] == 0
    assert result.model.info.evaluation == result.evaluation
    assert result.model.info.games_played == learner.games_played


PERFECT_WITHIN = {"td": 100_000, "qlearning": 1_000_000, "tally": 1_000_000}


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["td", "qlearning", "tally"])
def test_default_training_is_perfect_from_every_position(ttt, algorithm):
    """Exploring starts: unbeatable and the optimal move in all 4,520 positions, including
    those after an opponent's blunder, which the learners' own games never reach."""
    learner = make_learner(ttt, algorithm, seed=1)
    result = train(learner, games=PERFECT_WITHIN[algorithm], until_perfect=True,
                   eval_every=10_000)
    assert result.stopped == "perfect", result.evaluation
    assert result.evaluation["optimal_move_rate"] == 1.0
    assert result.evaluation["optimal_move_positions"] == 4520
    without = make_learner(ttt, algorithm, seed=1, params={"exploring_starts": 0})
    assert train(without, games=learner.games_played, until_perfect=True,
                 eval_every=10_000).stopped == "games"


def test_checkpoints_stay_within_their_share_of_the_time(ttt, monkeypatch):
    import gameai.trainer.training as training

    monkeypatch.setattr(training, "EVAL_FREE_SECONDS", 0.0)
    every = train(make_learner(ttt, "td", seed=1), games=10_000, eval_every=500)
    budgeted = train(make_learner(ttt, "td", seed=1), games=10_000, eval_every=500,
                     eval_share=0.01)
    assert len(every.history) == every.rounds == budgeted.rounds
    assert 2 <= len(budgeted.history) < budgeted.rounds / 2  # the first, a few, the last
    assert budgeted.history[-1].games == 10_000
    assert budgeted.model.info.games_played == 10_000
    assert budgeted.eval_seconds < every.eval_seconds
    timing = budgeted.timing()
    assert timing["checkpoints"] == len(budgeted.history)
    assert 0 < timing["checkpoint_share"] <= timing["evaluation_share"] < 1


@pytest.mark.parametrize("algorithm", ["td", "qlearning", "tally"])
def test_same_seed_same_model_bytes(ttt, algorithm):
    def run(seed):
        learner = make_learner(ttt, algorithm, seed=seed)
        learner.play(3000)
        learner.play(1500)  # resuming continues the same random stream
        return learner.export(FIXED).to_bytes()

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_same_seed_same_training_result(ttt):
    def run():
        return train(make_learner(ttt, "td", seed=4), games=10_000, until_unbeatable=True,
                     record_time=False, created_at="2026-01-01T00:00:00Z")

    a, b = run(), run()
    assert a.model.to_bytes() == b.model.to_bytes()
    assert [c.games for c in a.history] == [c.games for c in b.history]


def test_td_shares_values_across_symmetric_positions(ttt):
    learner = make_learner(ttt, "td", seed=1)
    learner.play(2000)
    model = learner.export()
    corners = ["X--|---|---", "--X|---|---", "---|---|X--", "---|---|--X"]
    values = [sorted(m.value for m in model.evaluate(Board.parse(ttt, p)).moves)
              for p in corners]
    assert all(v == values[0] for v in values)
    assert len(learner.table) < 1000  # seed 004: 825 canonical afterstates at most


def test_td_learns_the_seed_opening(td_model, ttt):
    """Seed 002's figure 4: the centre stands out among the opening moves."""
    opening = td_model.evaluate(Board.empty(ttt))
    assert opening.best.index == 4


@pytest.mark.parametrize("algorithm", ["td", "qlearning", "tally"])
def test_warm_start_keeps_what_the_model_knew(td_model, ttt, algorithm):
    learner = make_learner(ttt, algorithm, seed=9)
    learner.warm_start(td_model)
    started = learner.export()
    report = evaluate(started, random_games=50)
    assert unbeatable(report), report
    fresh = make_learner(ttt, algorithm, seed=9).export()
    assert len(fresh.keys) <= 1


@pytest.mark.parametrize("name", ["mnk-3x4-3", "four-in-a-row", "connect-4x5-4"])
def test_td_improves_on_larger_boards(name):
    game = get_game(name)
    learner = make_learner(game, "td", seed=1)
    learner.play(200)
    before = learner.export()
    learner.play(20_000)
    after = learner.export()

    def lost(model):
        result = vs_random(model, games=300, seed=1)
        return result["as_x"]["loss"] + result["as_o"]["loss"]

    assert lost(after) < lost(before)
    if name == "mnk-3x4-3":
        assert optimal_move_rate(after) > optimal_move_rate(before)


def test_bad_parameters_are_named(ttt):
    with pytest.raises(BadParameter, match="'alpha0'"):
        make_learner(ttt, "td", params={"alpha0": "2"})
    with pytest.raises(BadParameter, match=r"'gamma'.*not a valid float"):
        make_learner(ttt, "qlearning", params={"gamma": "lots"})
    with pytest.raises(BadParameter, match=r"unknown parameter 'alpha'.*known: "):
        make_learner(ttt, "tally", params={"alpha": "0.1"})
    with pytest.raises(BadParameter, match="'explore'"):
        make_learner(ttt, "td", params={"explore": "curious"})
    with pytest.raises(CannotTrain, match="unknown algorithm 'sarsa'"):
        make_learner(ttt, "sarsa")
    with pytest.raises(CannotTrain, match="at most 40"):
        make_learner(get_game("mnk-7x7-5"), "td")  # no 64-bit key


def test_exported_models_load_back(ttt):
    learner = make_learner(ttt, "qlearning", seed=1)
    learner.play(5000)
    model = learner.export()
    back = load_model(model.to_bytes())
    assert np.array_equal(back.values, model.values, equal_nan=True)
