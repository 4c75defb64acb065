"""Promotion gates, pure and against a real store."""

import pytest

from gameai.models import TableModel
from gameai.store import ModelStore
from gameai.trainer.evaluation.evaluate import evaluate
from gameai.trainer.training import with_evaluation
from gameai.trainer.worker.gates import (
    ShadowGate,
    check_gates,
    measure,
    perfect,
    promote_version,
    publish,
)

from .conftest import prefer

PERFECT = {"losses_as_x": 0, "losses_as_o": 0, "optimal_move_rate": 1.0,
           "optimal_move_positions": 4520, "game_value": "draw"}
FLAWED = {**PERFECT, "optimal_move_rate": 0.99}  # unbeatable, but not optimal everywhere


def _vs_random(loss):
    return {"vs_random": {"as_x": {"win": 90, "draw": 10 - loss, "loss": loss},
                          "as_o": {"win": 80, "draw": 20, "loss": 0}}}


def test_gates_pass_a_perfect_model_over_a_flawed_or_missing_production():
    assert check_gates(PERFECT, None).passed
    assert check_gates(PERFECT, FLAWED).passed
    assert perfect(PERFECT) and not perfect(FLAWED) and not perfect(None)


def test_where_the_solver_can_tell_only_a_perfect_model_is_promoted():
    flawed = check_gates(FLAWED, None)
    assert flawed.reasons == ["optimal_move_rate 0.990000 of 4,520 positions is below 1: "
                              "where the solver can tell, only a perfect model is promoted"]


def test_nothing_replaces_a_perfect_production():
    again = check_gates(PERFECT, PERFECT)
    assert not again.passed
    assert again.reasons == ["production is already perfect (unbeatable, every move "
                             "optimal): nothing can beat it"]


def test_gates_refuse_a_beaten_or_unmeasured_model():
    beaten = check_gates({**PERFECT, "losses_as_o": 12}, None)
    assert not beaten.passed and beaten.reasons == ["loses 12 lines as O"]
    blind = check_gates({"optimal_move_rate": 1.0}, None)
    assert len(blind.reasons) == 2 and "not measured" in blind.reasons[0]


def test_without_the_solver_a_candidate_must_be_strictly_better():
    # a board too large for the solver: unbeatable (say), judged by random play
    big = {"losses_as_x": 0, "losses_as_o": 0, "game_value": None}
    better, worse = {**big, **_vs_random(1)}, {**big, **_vs_random(3)}
    assert check_gates(better, worse).passed
    same = check_gates(better, better)
    assert same.reasons == ["not better than production: unbeatable yes, optimal_move_rate "
                            "unmeasured, loss rate against random play 0.0050 against "
                            "unbeatable yes, optimal_move_rate unmeasured, loss rate against "
                            "random play 0.0050"]
    assert not check_gates(worse, better).passed
    assert measure(better) > measure(worse) > measure({"losses_as_x": 3})


def test_in_a_won_game_the_loser_may_lose_lines_but_the_winner_must_win():
    won = {"losses_as_x": 0, "draws_as_x": 0, "losses_as_o": 300, "optimal_move_rate": 1.0,
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


def test_auto_promotion_takes_only_a_perfect_model_and_then_nothing_more(store, oracle):
    weaker = _evaluated(_weaker(oracle))
    assert weaker.info.evaluation["losses_as_x"] == weaker.info.evaluation["losses_as_o"] == 0
    assert weaker.info.evaluation["optimal_move_rate"] < 1.0
    first = publish(store, weaker, by="test", promote="auto")
    assert not first.promoted and first.production is None
    assert first.gates.reasons[0].startswith("optimal_move_rate 0.99")
    best = publish(store, _evaluated(oracle, algorithm="solver"), by="test", promote="auto")
    assert best.promoted and best.production == best.version
    again = publish(store, _evaluated(oracle, algorithm="again"), by="test", promote="auto")
    assert not again.promoted and "already perfect" in again.gates.reasons[0]
    assert store.rollout(game="tictactoe").production == best.version
    assert store.version(game="tictactoe", version=first.version) is not None  # kept


def test_a_pin_holds_auto_promotion_off_until_released(store, oracle):
    weaker = publish(store, _evaluated(_weaker(oracle)), by="test", promote="manual")
    store.set_alias(game="tictactoe", alias="production", version=weaker.version, by="ops",
                    pin=True)
    best = _evaluated(oracle, algorithm="solver")
    held = publish(store, best, by="test", promote="auto")
    assert not held.promoted and held.gates.passed
    assert "pinned by ops" in held.held
    assert store.rollout(game="tictactoe").production == weaker.version
    store.release(game="tictactoe", by="ops")
    done = promote_version(store, game="tictactoe", version=held.version,
                           report=best.info.evaluation, by="test")
    assert done.promoted and store.rollout(game="tictactoe").production == held.version


def test_a_shadow_gate_shadows_first_and_promotes_once_live_traffic_agrees(store, oracle):
    weaker = publish(store, _evaluated(_weaker(oracle)), by="test", promote="manual")
    store.set_alias(game="tictactoe", alias="production", version=weaker.version, by="ops")
    gate = ShadowGate(min_proved=50, share=30)
    best = _evaluated(oracle, algorithm="solver")
    held = publish(store, best, by="test", promote="auto", shadow_gate=gate)
    assert not held.promoted and held.gates.passed
    assert held.held == ("shadow test: 0 of 50 proved live queries compared so far "
                         "(shadowed at 30%)")
    rollout = store.rollout(game="tictactoe")
    assert (rollout.production, rollout.shadow, rollout.shadow_share) == (
        weaker.version, held.version, 30)

    def again() -> object:
        return promote_version(store, game="tictactoe", version=held.version,
                               report=best.info.evaluation, by="test", shadow_gate=gate)
    # the servers' tallies: worse than production on the same proved queries
    store.record_shadow(game="tictactoe", version=held.version, production=weaker.version,
                        counts={"compared": 80, "proved": 60, "production_optimal": 55,
                                "shadow_optimal": 50})
    worse = again()
    assert not worse.promoted and worse.held.startswith("shadow test: optimal on 50 of 60")
    store.record_shadow(game="tictactoe", version=held.version, production=weaker.version,
                        counts={"compared": 40, "proved": 40, "shadow_optimal": 40,
                                "production_optimal": 30})
    done = again()  # 90 of 100 against production's 85
    assert done.promoted and store.rollout(game="tictactoe").production == held.version


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
