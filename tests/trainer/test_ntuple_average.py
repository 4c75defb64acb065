"""The n-tuple learner's moving average of its weights (``average_halflife``): the kernel
against plain numpy, the exported model against an average taken by hand at the same game
counts, the same however the games are split, the weights themselves untouched, and a model
published before the parameter existed keeps its recorded parameters."""

import numpy as np
import pytest

from gameai.trainer.learners import ntuple
from gameai.trainer.learners.base import BadParameter
from gameai.trainer.learners.ntuple import blend
from gameai.trainer.training import make_learner

EVERY = 1_000  # games between two steps here (AVERAGE_EVERY is 32,768)
PARAMS = {"average_halflife": 2_000.0, "average_from": 1_500}


@pytest.fixture(autouse=True)
def short_steps(monkeypatch):
    monkeypatch.setattr(ntuple, "AVERAGE_EVERY", EVERY)


def test_blend_is_the_plain_weighted_mean():
    rng = np.random.default_rng(0)
    average = rng.normal(size=10_001).astype(np.float32)
    weights = rng.normal(size=10_001).astype(np.float32)
    expected = np.float32(0.9) * average + np.float32(0.1) * weights
    blend(average, weights, np.float32(0.9))
    np.testing.assert_allclose(average, expected, rtol=1e-6, atol=1e-7)


def test_the_export_is_the_average_taken_by_hand(ttt):
    averaged = make_learner(ttt, "ntuple", seed=3, params=PARAMS)
    plain = make_learner(ttt, "ntuple", seed=3)
    by_hand = None
    decay = 0.5 ** (EVERY / PARAMS["average_halflife"])
    for played in range(EVERY, 5 * EVERY + 1, EVERY):
        plain.play(EVERY)
        if played >= PARAMS["average_from"]:  # marks 2,000 to 5,000
            by_hand = (plain.weights.copy() if by_hand is None
                       else decay * by_hand + (1 - decay) * plain.weights)
    averaged.play(5 * EVERY)
    np.testing.assert_array_equal(averaged.weights, plain.weights)  # self-play unchanged
    exported = averaged.export().tables
    np.testing.assert_allclose(exported, by_hand, rtol=1e-5, atol=1e-6)
    assert not np.allclose(exported, plain.weights, atol=1e-4)  # it is not the last weights
    assert averaged.export().info.params["average_halflife"] == PARAMS["average_halflife"]


def test_the_average_is_the_same_however_the_games_are_split(ttt):
    whole = make_learner(ttt, "ntuple", seed=3, params=PARAMS)
    whole.play(4_500)
    split = make_learner(ttt, "ntuple", seed=3, params=PARAMS)
    for games in (700, 1_301, 999, 1_500):
        split.play(games)
    np.testing.assert_array_equal(whole.export().tables, split.export().tables)


def test_before_the_average_starts_the_weights_are_exported(ttt):
    learner = make_learner(ttt, "ntuple", seed=3, params=PARAMS)
    learner.play(1_400)  # before the first mark past average_from
    np.testing.assert_array_equal(learner.export().tables, learner.weights)


def test_a_warm_start_starts_the_average_again(ttt):
    learner = make_learner(ttt, "ntuple", seed=3, params=PARAMS)
    learner.play(3_000)
    model = learner.export()
    learner.warm_start(model)
    assert learner.average is None
    np.testing.assert_array_equal(learner.weights, model.tables)


def test_parallel_actors_average_too(ttt):
    learner = make_learner(ttt, "ntuple", seed=3, params={**PARAMS, "actors": 2,
                                                           "sync_games": 500})
    try:
        learner.play(3_000)
        assert learner.average is not None
        assert not np.array_equal(learner.export().tables, learner.weights)
    finally:
        learner.close()


@pytest.mark.parametrize(("params", "names"), [
    ({"average_halflife": -1}, "average_halflife"),
    ({"average_from": -5}, "average_from"),
])
def test_bad_averages_are_named(ttt, params, names):
    with pytest.raises(BadParameter, match=names):
        make_learner(ttt, "ntuple", params=params)


def test_parameters_added_later_are_recorded_only_when_set(ttt):
    """A model trained before ``overlap`` and the average existed records none of them, so
    its documented command must not record them at their defaults either (Connect Four's
    bundled model is reproduced byte for byte)."""
    plain = make_learner(ttt, "ntuple", seed=1).params.to_json()
    assert not {"overlap", "average_halflife", "average_from"} & set(plain)
    assert {"alpha_start", "sync_games", "actors"} <= set(plain)  # the earlier ones stay
    assert make_learner(ttt, "ntuple", seed=1, params={"overlap": 1}).params.to_json()[
        "overlap"] == 1
