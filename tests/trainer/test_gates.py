"""Promotion gates, pure and against a real store."""

import pytest

from gameai.models import TableModel
from gameai.store import ModelStore
from trainer.evaluate import evaluate
from trainer.gates import check_gates, publish
from trainer.training import with_evaluation

from .conftest import prefer

PERFECT = {"losses_as_x": 0, "losses_as_o": 0, "optimal_move_rate": 0.99, "game_value": "draw"}


def test_gates_pass_an_unbeatable_model_no_worse_than_production():
    assert check_gates(PERFECT, None).passed
    assert check_gates(PERFECT, {**PERFECT, "optimal_move_rate": 0.99}).passed
    assert check_gates({**PERFECT, "optimal_move_rate": 1.0}, PERFECT).passed


def test_gates_refuse_a_worse_model():
    worse = check_gates({**PERFECT, "optimal_move_rate": 0.98}, PERFECT)
    assert not worse.passed
    assert worse.reasons == ["optimal_move_rate 0.9800 is below production's 0.9900"]
    beaten = check_gates({**PERFECT, "losses_as_o": 12}, None)
    assert not beaten.passed and beaten.reasons == ["loses 12 lines as O"]
    blind = check_gates({"optimal_move_rate": 1.0}, None)
    assert len(blind.reasons) == 2 and "not measured" in blind.reasons[0]
    unmeasured = check_gates({"losses_as_x": 0, "losses_as_o": 0}, PERFECT)
    assert not unmeasured.passed and "optimal_move_rate was not measured" in unmeasured.reasons[0]


def test_in_a_won_game_the_loser_may_lose_lines_but_the_winner_must_win():
    won = {"losses_as_x": 0, "draws_as_x": 0, "losses_as_o": 300, "optimal_move_rate": 0.9,
           "game_value": "x_wins"}
    assert check_gates(won, None).passed
    drawn = check_gates({**won, "draws_as_x": 2}, None)
    assert drawn.reasons == ["draws 2 lines as X, which wins this game"]


def _evaluated(model, **info):
    return with_evaluation(lambda r: TableModel(model.game, model.info.with_updates(
        evaluation=r, **info), model.keys, model.values), evaluate(model, random_games=50))


def _weaker(oracle):
    """The oracle, except that it misses an immediate win in a position its own play never
    reaches: still unbeatable, but no longer optimal everywhere."""
    return prefer(oracle, "OO-|XX-|---", 8, algorithm="weaker")


@pytest.fixture
def store(redis_url):
    with ModelStore.from_url(redis_url) as s:
        yield s


def test_auto_promotion_refuses_a_worse_model(store, oracle):
    best = _evaluated(oracle, algorithm="solver")
    first = publish(store, best, by="test", promote="auto")
    assert first.promoted and first.production == first.version
    weaker = _evaluated(_weaker(oracle))
    assert weaker.info.evaluation["losses_as_x"] == weaker.info.evaluation["losses_as_o"] == 0
    assert weaker.info.evaluation["optimal_move_rate"] < 1.0
    second = publish(store, weaker, by="test", promote="auto")
    assert not second.promoted
    assert second.gates is not None
    assert second.gates.reasons[0].startswith("optimal_move_rate 0.99")
    assert store.rollout(game="tictactoe").production == first.version
    assert store.version(game="tictactoe", version=second.version) is not None  # kept


def test_manual_promotion_only_publishes(store, oracle):
    done = publish(store, _evaluated(oracle), by="test", promote="manual")
    assert not done.promoted and done.gates is None
    assert store.rollout(game="tictactoe").production is None
    record = store.version(game="tictactoe", version=done.version)
    assert record.evaluation["optimal_move_rate"] == 1.0


def test_a_retried_publish_does_not_publish_twice(store, oracle):
    model = _evaluated(oracle)
    a = publish(store, model, by="test", promote="auto", token="round-1")
    b = publish(store, model, by="test", promote="auto", token="round-1")
    assert a.version == b.version and b.promoted
    assert len(store.versions(game="tictactoe")) == 1
