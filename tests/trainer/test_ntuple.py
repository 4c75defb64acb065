"""The n-tuple learner: deterministic per seed, it improves measurably in a short run, its
parameters are checked, and it warm-starts from its own model."""

import itertools

import numpy as np
import pytest

from gameai.games import get_game
from gameai.models import NtupleModel, load_model
from gameai.models.ntuple_kernels import cell_states, read_weights, side_table, tuple_indices
from gameai.trainer.evaluation.evaluate import losses, optimal_move_rate, vs_random
from gameai.trainer.learners.base import BadParameter
from gameai.trainer.learners.ntuple import lambda_returns, sibling_target
from gameai.trainer.training import CannotTrain, make_learner, train
from tests.models.test_ntuple import _model, random_board, ref_values


def test_same_seed_same_model_bytes(ttt):
    def trained(seed):
        learner = make_learner(ttt, "ntuple", seed=seed)
        learner.play(3000)
        return learner.export(learner.info(training_seconds=0.0,
                                           created_at="2026-01-01T00:00:00Z")).to_bytes()

    assert trained(4) == trained(4)
    assert trained(4) != trained(5)


def forward_lambda_return(best, chosen, greedy, last, lam, gamma, t):
    """The lambda-return of ply ``t`` as the forward sum of n-step returns (Sutton and
    Barto 12.1) in negamax form: the n-step return is ``(-gamma)^n`` times the mover's best
    afterstate value n plies on (the last move's own value at the end), and stops growing
    at the first exploratory move after ``t``."""
    def n_step(n):
        for k in range(1, n + 1):
            if t + k == last:
                return (-gamma) ** k * (chosen[last] if greedy[last] else best[last])
            if not greedy[t + k] or k == n:
                return (-gamma) ** k * best[t + k]
        raise AssertionError
    horizon = last - t
    total = sum((1 - lam) * lam ** (n - 1) * n_step(n) for n in range(1, horizon))
    return total + lam ** (horizon - 1) * n_step(horizon)


@pytest.mark.parametrize("gamma", [1.0, 0.97])
@pytest.mark.parametrize("lam", [0.0, 0.5, 0.8, 1.0])
def test_lambda_returns_are_the_forward_sums_of_n_step_returns(lam, gamma):
    rng = np.random.default_rng(int(lam * 10 + gamma * 100))
    for _ in range(200):
        last = int(rng.integers(1, 30))
        best = rng.uniform(-1, 1, last + 1)
        greedy = rng.random(last + 1) < 0.8
        chosen = best - np.where(greedy, 0.0, rng.uniform(0, 1, last + 1))
        chosen[last] = rng.choice([0.0, 1.0])
        if greedy[last]:
            best[last] = chosen[last]
        out = np.full(last + 1, np.nan)
        lambda_returns(best, chosen, greedy, last, lam, gamma, out)
        want = [forward_lambda_return(best, chosen, greedy, last, lam, gamma, t)
                for t in range(last)]
        np.testing.assert_allclose(out[:last], want, rtol=1e-12, atol=1e-12)


def test_a_discount_values_a_win_by_how_soon_it_comes(ttt):
    """With ``gamma`` < 1 a win two plies on is worth at most ``gamma ** 2``: the network
    learns it so, where without a discount it values such a win nearer 1."""
    def trained(params):
        learner = make_learner(ttt, "ntuple", seed=1, params=params)
        learner.play(20_000)
        return learner.export()

    # X holds 0 and 4, O holds 1 and 2, X to move: 8 wins at once; 3 or 5 make two
    # threats, so X wins on its next move whatever O does
    position = ttt.initial()
    for cell in (0, 1, 4, 2):
        position = position.play(cell)

    def values(model):
        return {m.action_id: m.value for m in model.evaluate(position).moves}

    discounted, plain = values(trained({"gamma": "0.9"})), values(trained({}))
    assert discounted[8] == plain[8] == 1.0
    forks = (3, 5)
    assert max(discounted[c] for c in forks) < 0.9 ** 2 < max(plain[c] for c in forks)
    assert min(discounted[c] for c in forks) > 0.3  # still clearly winning


def test_cross_entropy_moves_a_value_the_network_is_wrongly_sure_of(ttt):
    """Every afterstate starts valued tanh(-3) = -0.995 (sure to lose): the squared error's
    step, times tanh's slope of 0.01 there, hardly moves it in 50 games; the
    cross-entropy's step has no slope and learns that none of X's first moves loses."""
    def first_moves(loss):
        learner = make_learner(ttt, "ntuple", seed=1, params={
            "loss": loss, "alpha_start": "0.1", "alpha_end": "0.1"})
        learner.weights[:] = -3.0 / learner.net.pt_cells.shape[0]  # each sum -3
        learner.play(50)
        return [m.value for m in learner.export().evaluate(ttt.initial()).moves]

    squared, cross_entropy = first_moves("squared"), first_moves("cross-entropy")
    assert max(squared) < -0.9
    assert min(cross_entropy) > -0.7


def test_the_second_player_explores_as_much_as_asked(ttt):
    """``second_explores`` multiplies the second player's epsilon only: at 10 times an
    epsilon of 0.1, O moves at random throughout and X wins most self-play games; at 0 O
    never explores, and X, still exploring, wins fewer than with the default."""
    def x_wins(times):
        learner = make_learner(ttt, "ntuple", seed=1, params={
            "epsilon_start": "0.1", "epsilon_end": "0.1", "second_explores": str(times)})
        learner.play(3000)  # learn first, then count
        return learner.play(2000).x_wins

    default, random_o, greedy_o = x_wins(1), x_wins(10), x_wins(0)
    assert random_o > 1200 > default
    assert greedy_o <= default


@pytest.mark.parametrize("name", ["tictactoe", "connect-4x5-4", "connect-four"])
def test_a_siblings_target_is_the_opponents_best_afterstate(name):
    """The kernel's value of the opponent's best reply to a move, from its incremental
    view, against reading every reply's afterstate from scratch (the model tests' plain
    reference): 1 if a reply wins, 0 if it fills the board."""
    model = _model(name, sides=2)
    net, W3 = model.net, model.tables
    rng = np.random.default_rng(8)
    checked = wins = 0
    while checked < 60:
        board = random_board(model.game, rng)
        mover = 0 if board.to_move == "X" else 1
        mine, theirs = (board.x, board.o) if mover == 0 else (board.o, board.x)
        for cell in board.legal_moves():
            after = board.play(cell)
            if after.is_over():
                continue  # a move that ends the game is no sibling
            expected = max(v for v in ref_values(model, after) if v is not None)
            states = np.empty(net.cells, np.int64)
            idx = np.empty(net.pt_cells.shape[0], np.int64)
            cur = np.empty(net.pt_cells.shape[0], np.float32)
            cell_states(net, np.uint64(theirs), np.uint64(mine), states)
            tuple_indices(net, states, idx)
            base = read_weights(net, side_table(W3, 1 - mover), idx, cur)
            pend = np.zeros(idx.size, np.int64)
            got = sibling_target(net, side_table(W3, 1 - mover), states, idx, cur, base,
                                 np.uint64(theirs), np.uint64(board.x | board.o), cell,
                                 pend, np.empty(idx.size, np.int64))
            assert got == pytest.approx(expected, abs=1e-5), (board, cell)
            checked += 1
            wins += got == 1.0
    assert wins > 0  # some replies win at once


def test_siblings_learn_the_moves_self_play_does_not_play(ttt):
    """Greedy self-play (no exploration) hardly plays a move that hands the opponent a
    win in one, so its tables learn such afterstates only through what they share with
    others; learning two siblings a ply, each towards minus its opponent's best reply
    (-1 here: the reply wins), values them far more surely as the losses they are."""
    def blunders_valued(siblings):
        learner = make_learner(ttt, "ntuple", seed=1, params={
            "sides": "2", "epsilon_start": "0", "epsilon_end": "0",
            "siblings": str(siblings)})
        learner.play(1000)
        model, values = learner.export(), []  # O's afterstates, by the plain reference
        for first, second in itertools.permutations(range(9), 2):
            board = ttt.initial().play(first).play(second)
            for third in board.legal_moves():
                after = board.play(third)
                if any(after.play(r).winner() for r in after.legal_moves()):
                    continue
                for reply in after.legal_moves():  # O leaves X a win in one
                    position = after.play(reply)
                    if not position.is_over() and any(
                            position.play(m).winner() for m in position.legal_moves()):
                        values.append(ref_values(model, after)[reply])
        return float(np.mean(values)), len(values)

    plain, count = blunders_valued(0)
    learned, _ = blunders_valued(2)
    assert count > 1000
    assert learned < -0.6
    assert learned < plain - 0.3


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
    ({"gamma": "0"}, "gamma"),
    ({"gamma": "1.01"}, "gamma"),
    ({"loss": "hinge"}, "loss"),
    ({"second_explores": "-1"}, "second_explores"),
    ({"siblings": "9"}, "siblings"),
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
