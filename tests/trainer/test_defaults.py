"""Per-game defaults: schedules that scale with the game, under the user's parameters."""

from __future__ import annotations

from gameai.games import get_game
from gameai.trainer.learners.defaults import MEASURED
from gameai.trainer.training import make_learner


def test_four_in_a_row_td_takes_its_measured_schedule():
    learner = make_learner(get_game("four-in-a-row"), "td")
    assert learner.params.tau_halflife == MEASURED[("four-in-a-row", "td")]["tau_halflife"]
    assert learner.info().params["tau_halflife"] == learner.params.tau_halflife
    assert learner.params.tau_end == 0.03  # the floor measured unbeatable (docs/trainer.md)
    assert make_learner(get_game("tictactoe"), "td").params.tau_end == 0.01


def test_the_users_parameters_come_first():
    learner = make_learner(get_game("four-in-a-row"), "td", params={"tau_halflife": "500"})
    assert learner.params.tau_halflife == 500.0


def test_tic_tac_toe_and_morris_keep_the_defaults_they_were_measured_with():
    for name in ("tictactoe", "three-mens-morris"):
        for algorithm in ("td", "qlearning"):
            learner = make_learner(get_game(name), algorithm)
            assert learner.params == type(learner.params)(), (name, algorithm)


def test_a_larger_board_explores_longer_than_a_smaller_one():
    halflife = {name: make_learner(get_game(name), "qlearning").params.epsilon_halflife
                for name in ("tictactoe", "connect-4x5-4", "mnk-4x5-4")}
    assert halflife["tictactoe"] < halflife["connect-4x5-4"] < halflife["mnk-4x5-4"]


def test_connect_four_ntuple_takes_its_measured_recipe():
    learner = make_learner(get_game("connect-four"), "ntuple", seed=1)
    p = learner.params
    assert (p.sides, p.lam, p.opening_plies) == (2, 0.8, 10)
    assert learner.weights.shape[0] == 2  # a set of tables for each player
    assert make_learner(get_game("four-in-a-row"), "ntuple").params.sides == 1


def test_four_in_a_row_ntuple_takes_the_recipe_measured_unbeatable_as_served():
    """Issue 28, item 6: docs/ntuple.md's four parameters are the game's defaults, so
    `gameai train --game four-in-a-row --algorithm ntuple --until-unbeatable` stops by
    itself (the learner's own defaults stayed thousands of lines short)."""
    p = make_learner(get_game("four-in-a-row"), "ntuple", seed=1).params
    assert (p.tuples, p.alpha_end, p.epsilon_end, p.exploring_starts) == (16, 0.02, 0.1, 0.5)
    mine = make_learner(get_game("four-in-a-row"), "ntuple", params={"tuples": "8"}).params
    assert (mine.tuples, mine.exploring_starts) == (8, 0.5)  # the user's come first
