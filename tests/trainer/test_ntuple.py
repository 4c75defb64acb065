"""The n-tuple learner: deterministic per seed, it improves measurably in a short run, its
parameters are checked, and it warm-starts from its own model."""

import numpy as np
import pytest

from gameai.games import get_game
from gameai.models import NtupleModel, load_model
from gameai.trainer.evaluation.evaluate import losses, optimal_move_rate, vs_random
from gameai.trainer.learners.base import BadParameter
from gameai.trainer.training import CannotTrain, make_learner, train


def test_same_seed_same_model_bytes(ttt):
    def trained(seed):
        learner = make_learner(ttt, "ntuple", seed=seed)
        learner.play(3000)
        return learner.export(learner.info(training_seconds=0.0,
                                           created_at="2026-01-01T00:00:00Z")).to_bytes()

    assert trained(4) == trained(4)
    assert trained(4) != trained(5)


def test_a_short_run_learns_tictactoe(ttt):
    learner = make_learner(ttt, "ntuple", seed=1)
    untrained = learner.export()
    before = losses(untrained, side="X") + losses(untrained, side="O")
    rate = optimal_move_rate(untrained)
    result = train(learner, games=20_000, eval_every=2_000)
    assert before > 0
    # the network alone (--until-unbeatable judges the served policy, which tic-tac-toe's
    # depth-4 search makes unbeatable at once: tests/trainer/test_stop_rules.py)
    alone = [p.games for p in result.history
             if p.evaluation["losses_as_x"] == p.evaluation["losses_as_o"] == 0]
    assert alone, [(p.games, p.evaluation["losses_as_o"]) for p in result.history]
    assert result.evaluation["optimal_move_rate"] > rate + 0.1
    assert isinstance(result.model, NtupleModel)
    assert load_model(result.model.to_bytes()).to_bytes() == result.model.to_bytes()


def test_one_set_of_tables_a_side_learns_and_is_exported_whole(ttt):
    learner = make_learner(ttt, "ntuple", seed=1, params={"sides": "2"})
    result = train(learner, games=20_000, until_unbeatable=True, eval_every=2_000)
    assert result.stopped == "unbeatable", result.evaluation
    model = result.model
    assert isinstance(model, NtupleModel) and model.sides == 2
    assert model.weights.shape[0] == 2 * model.tuples.shape[0]
    x_tables, o_tables = model.tables
    assert np.abs(x_tables).max() > 0 and np.abs(o_tables).max() > 0
    assert not np.array_equal(x_tables, o_tables)  # each player learned its own
    twin = make_learner(ttt, "ntuple", seed=9)
    twin.warm_start(model)
    assert np.array_equal(twin.export().weights, model.weights)


def test_tcl_exp_learns_tictactoe_with_a_large_step(ttt):
    """TCL-EXP with a step ten times the default's, which its per-weight damping keeps
    stable, learns tic-tac-toe unbeatable."""
    params = {"tcl": "true", "tcl_beta": "2.7", "alpha_start": "5", "alpha_end": "5"}
    result = train(make_learner(ttt, "ntuple", seed=1, params=params), games=30_000,
                   until_unbeatable=True, eval_every=2_000)
    assert result.stopped == "unbeatable", result.evaluation


def test_four_in_a_row_improves_in_seconds():
    game = get_game("four-in-a-row")
    learner = make_learner(game, "ntuple", seed=2)
    before = vs_random(learner.export(), games=300, seed=3)
    learner.play(20_000)
    after = vs_random(learner.export(), games=300, seed=3)
    lost_before = before["as_x"]["loss"] + before["as_o"]["loss"]
    lost_after = after["as_x"]["loss"] + after["as_o"]["loss"]
    assert lost_after * 5 < lost_before, (before, after)


def test_gravity_games_tell_playable_cells_apart():
    game = get_game("connect-4x5-4")
    learner = make_learner(game, "ntuple", seed=0)
    assert learner.net.states == 4
    assert make_learner(game, "ntuple", params={"states": "3"}).net.states == 3
    stats = learner.play(500)
    assert stats.games == 500 and stats.x_wins + stats.o_wins + stats.draws == 500
    assert np.abs(learner.weights).max() > 0


def test_warm_start_continues_the_same_network(ttt):
    learner = make_learner(ttt, "ntuple", seed=1)
    learner.play(2000)
    model = learner.export()
    twin = make_learner(ttt, "ntuple", seed=1)
    twin.warm_start(model)
    assert np.array_equal(twin.weights, learner.weights)
    # another seed (a restarted worker draws a fresh one) adopts the model's tuples
    other = make_learner(ttt, "ntuple", seed=9)
    assert not np.array_equal(other.tuples, model.tuples)
    other.warm_start(model)
    assert np.array_equal(other.tuples, model.tuples)
    assert np.array_equal(other.export().weights, model.weights)
    other.play(100)
    assert np.abs(other.weights - model.weights).max() > 0
    with pytest.raises(ValueError, match="n-tuple model"):
        twin.warm_start(make_learner(ttt, "td").export())


@pytest.mark.parametrize(("params", "message"), [
    ({"lam": "1.5"}, "lam"),
    ({"states": "5"}, "states"),
    ({"alpha_end": "0.9", "alpha_start": "0.1"}, "alpha_end"),
    ({"exploring_starts": "2"}, "exploring_starts"),
    ({"tcl_beta": "2.7"}, "0 unless tcl=true"),
    ({"sides": "3"}, "sides"),
    ({"merge": "median"}, "merge"),
    ({"staleness": "-1"}, "staleness"),
    ({"actors": "2", "staleness": "100", "merge": "mean"}, "scaled or sum"),
    ({"actors": "2", "tcl": "true"}, "tcl"),
    ({"nonsense": "1"}, "unknown parameter"),
])
def test_bad_parameters_are_named(ttt, params, message):
    with pytest.raises(BadParameter, match=message):
        make_learner(ttt, "ntuple", params=params)


def test_impossible_geometry_is_refused(ttt):
    with pytest.raises(CannotTrain, match="gravity"):
        make_learner(ttt, "ntuple", params={"states": "4"})
    with pytest.raises(CannotTrain, match="does not fit"):
        make_learner(ttt, "ntuple", params={"length": "10"})
    with pytest.raises(CannotTrain, match="patterns"):
        make_learner(ttt, "ntuple", params={"patterns": "0,1;2"})


def test_parallel_actors_are_deterministic_and_learn(ttt):
    def trained(actors, seed=3):
        learner = make_learner(ttt, "ntuple", seed=seed,
                               params={"actors": str(actors), "sync_games": "256"})
        stats = learner.play(4000)
        assert stats.games == 4000 == stats.x_wins + stats.o_wins + stats.draws
        return learner

    two = trained(2)
    assert np.array_equal(two.weights, trained(2).weights)  # whatever the threads' timing
    assert not np.array_equal(two.weights, trained(1).weights)
    model = two.export()
    assert losses(model, side="X") + losses(model, side="O") < losses(
        make_learner(ttt, "ntuple").export(), side="X")
    with pytest.raises(BadParameter, match="sync_games"):
        make_learner(ttt, "ntuple", params={"actors": "4", "sync_games": "2"})


def test_shared_weights_actors_learn(ttt):
    """sync_games=0: the actors update one set of weights at once (not reproducible)."""
    learner = make_learner(ttt, "ntuple", seed=3, params={"actors": "2", "sync_games": "0"})
    stats = learner.play(4000)
    assert stats.games == 4000 == stats.x_wins + stats.o_wins + stats.draws
    model = learner.export()
    assert losses(model, side="X") + losses(model, side="O") < losses(
        make_learner(ttt, "ntuple").export(), side="X")


def test_position_errors_count_the_moves_the_solver_ranks_lower():
    """bench ntuple --positions: an error by exact score is a move whose exact score is
    below the best move's, by outcome one whose exact outcome is worse; both recounted here
    from the solver's own answers. The served best level with a budget that proves every
    position errs on none."""
    from gameai.bench.ntuple import BEST_LEVEL, position_errors
    from gameai.games import get_game as game_named

    game = game_named("connect-4x5-4")
    learner = make_learner(game, "ntuple", seed=2)
    learner.play(300)
    model = learner.export()
    report = position_errors(model, depths=[None, 1], count=6, seed=1,
                             classes=(("middle", "easy"),), exact_ms=1000,
                             progress=lambda _: None)
    figures = report["classes"]["middle easy"]
    assert figures["positions"] == 6
    from gameai.bench.positions import cached_set
    from gameai.games.mnk.search import Searcher
    from gameai.host import cache_dir

    rank = {"loss": 0, "draw": 1, "win": 2}
    by_score_total = by_outcome_total = 0
    for name, policy in (("network", model), ("depth 1", model.with_search(1))):
        by_score = by_outcome = 0
        for position in cached_set(game, stage="middle", difficulty="easy", count=6, seed=1,
                                   searcher=Searcher(game), cache_dir=cache_dir()):
            board = game.parse(position.board)
            solved = game.solve(board).moves
            mine = next(m for m in solved if m.move == policy.evaluate(board).best.index)
            by_outcome += rank[mine.outcome] < max(rank[m.outcome] for m in solved)
            by_score += not mine.optimal
        assert figures[name]["by_score"]["errors"] == by_score
        assert figures[name]["by_outcome"]["errors"] == by_outcome
        by_score_total += by_score
        by_outcome_total += by_outcome
    assert by_score_total >= by_outcome_total  # an outcome error is a score error too
    assert by_score_total > 0  # the network does err: the count is not vacuous
    assert figures[BEST_LEVEL]["by_score"]["errors"] == 0  # every position proved in 1 s


@pytest.mark.parametrize("merge", ["scaled", "mean"])  # sum overshoots (docs/ntuple.md)
def test_each_merge_rule_learns(ttt, merge):
    learner = make_learner(ttt, "ntuple", seed=3, params={"actors": "3", "sync_games": "300",
                                                         "merge": merge})
    learner.play(4000)
    model = learner.export()
    assert losses(model, side="X") + losses(model, side="O") < losses(
        make_learner(ttt, "ntuple").export(), side="X")


def test_asynchronous_actors_learn_within_their_staleness(ttt):
    """staleness=N: deltas merged as they come, never more than N games behind."""
    learner = make_learner(ttt, "ntuple", seed=3, params={"actors": "2", "sync_games": "200",
                                                         "staleness": "200"})
    stats = learner.play(4000)
    assert stats.games == 4000 == stats.x_wins + stats.o_wins + stats.draws
    status = learner.selfplay.status
    assert 0 <= status.staleness <= 200
    model = learner.export()
    assert losses(model, side="X") + losses(model, side="O") < losses(
        make_learner(ttt, "ntuple").export(), side="X")
