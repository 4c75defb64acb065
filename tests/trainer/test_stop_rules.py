"""Issue 28, item 5: the stop rules (``--until-unbeatable``, ``--until-perfect``) and the final
evaluation are one measure.

``gameai train --game three-mens-morris --algorithm td --until-unbeatable --seed 1`` said
``"stopped": "unbeatable"`` while its final report showed ``"losses_as_o": 4`` and no verdict:
the game is won by X, so O loses lines whatever it plays, and "unbeatable" asks O nothing
(:func:`gameai.trainer.evaluation.evaluate.unbeatable`), but the report never said so and
``--help`` promised "no line lost as X nor as O". Now every report carries the verdicts of
the very functions the stop rules call, and these tests hold, for seeds 1-10 of every game
whose exhaustive opponent is affordable, that a run stops exactly at the first checkpoint
whose verdict is reached and that its final report gives the same verdict.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from gameai.games import get_game
from gameai.trainer.evaluation.evaluate import perfect, unbeatable
from gameai.trainer.training import TrainResult, make_learner, train

SEEDS = range(1, 11)
# every game with a stop rule whose runs take seconds (four-in-a-row's take minutes: its
# table learners need millions of games; its n-tuple run is docs/ntuple.md's measured one)
GAMES = ("tictactoe", "three-mens-morris", "nine-holes", "hexapawn")
RULES = {"unbeatable": unbeatable, "perfect": perfect}


def run(game: str, algorithm: str, seed: int, until: str) -> TrainResult:
    learner = make_learner(get_game(game), algorithm, seed=seed)
    return train(learner, games=300_000, until_unbeatable=until == "unbeatable",
                 until_perfect=until == "perfect", random_games=20)


def assert_one_measure(result: TrainResult, until: str) -> None:
    """Stopped by ``until`` at the first checkpoint whose verdict says so, and the final
    report (the one written into the model) gives that verdict by the same function."""
    rule = RULES[until]
    assert result.stopped == until, result.evaluation
    verdicts = [point.evaluation[until] for point in result.history]
    assert verdicts == [rule(point.evaluation) for point in result.history]
    assert verdicts.index(True) == len(verdicts) - 1  # the first one reached, and the last
    final = result.model.info.evaluation
    assert final[until] is True and rule(final) is True
    assert final["unbeatable"] is True  # perfect is unbeatable too
    for side in ("x", "o"):  # the final report is of the model the stop judged
        assert final[f"losses_as_{side}"] == result.history[-1].evaluation[f"losses_as_{side}"]


@pytest.mark.slow
@pytest.mark.parametrize("until", sorted(RULES))
@pytest.mark.parametrize("game", GAMES)
def test_td_stops_only_where_its_final_report_agrees(game, until):
    for seed in SEEDS:
        assert_one_measure(run(game, "td", seed, until), until)


@pytest.mark.slow
@pytest.mark.parametrize("until", sorted(RULES))
@pytest.mark.parametrize("algorithm", ["qlearning", "tally", "ntuple"])
def test_every_learner_stops_only_where_its_final_report_agrees(algorithm, until):
    """Every learner's stop on tic-tac-toe, the n-tuple network's judged as served."""
    for seed in SEEDS:
        assert_one_measure(run("tictactoe", algorithm, seed, until), until)


def test_a_won_game_asks_the_loser_nothing_and_the_report_says_so():
    """The issue's run: Three Men's Morris is won by X, so the unbeatable model's O loses
    positions (4 here) and its report says unbeatable, with the game's value beside it."""
    result = run("three-mens-morris", "td", 1, "unbeatable")
    final = result.model.info.evaluation
    assert result.stopped == "unbeatable"
    assert final["game_value"] == "x_wins"
    assert final["losses_as_x"] == final["draws_as_x"] == 0
    assert final["losses_as_o"] > 0
    assert final["unbeatable"] is True


def test_the_help_promises_what_the_stop_rule_does():
    """--help no longer says "loses no line as X nor as O" (the loser of a won game does)."""
    out = subprocess.run([sys.executable, "-m", "gameai", "train", "--help"],
                         capture_output=True, text=True, check=True).stdout
    text = " ".join(out.split())
    assert "loses no line as X nor as O" not in text
    assert "the loser is asked nothing" in text
