"""The judge of larger boards, checked on tic-tac-toe where everything is known: the
solver's own model never loses to perfect play and makes no error; a model that knows
nothing does; the noisy solver never plays a losing move where another one holds."""

import random

import numpy as np
import pytest

from gameai.games import get_game
from gameai.models import ModelInfo, TableModel
from gameai.models.oracle import solver_model
from gameai.trainer.evaluation.calibrate import perfect_player
from gameai.trainer.evaluation.judge import NoisySolver, judge, model_player, stage_positions
from gameai.trainer.training import make_learner


def test_the_perfect_model_never_loses_and_never_errs():
    game = get_game("tictactoe")
    report = judge(solver_model(game), depths=[None], games=30, noisy_games=30, per_stage=20,
                   progress=lambda _: None)
    figures = report["policies"]["network"]
    assert figures["vs_perfect_as_x"]["loss"] == figures["vs_perfect_as_o"]["loss"] == 0
    assert figures["vs_perfect_as_x"]["draw"] == 30  # tic-tac-toe is a draw
    for p in (0.1, 0.2, 0.3):
        assert figures[f"vs_noisy_{p}_as_o"]["loss"] == 0
    for stage in report["errors"]["policies"]["network"].values():
        assert stage["errors"] == 0 and stage["positions"] > 0


def test_a_model_that_knows_nothing_loses_and_errs():
    game = get_game("tictactoe")
    empty = TableModel(game, ModelInfo(game="tictactoe", algorithm="empty"),
                       np.zeros(0, np.uint64), np.zeros((0, 9), np.float32))
    report = judge(empty, depths=[None], games=30, noisy_games=10, per_stage=30,
                   progress=lambda _: None)
    assert report["policies"]["network"]["vs_perfect_as_x"]["loss"] > 0
    errors = report["errors"]["policies"]["network"]
    assert sum(s["errors"] for s in errors.values()) > 0


def test_the_noisy_solver_plays_no_losing_move_when_it_has_a_choice():
    game = get_game("tictactoe")
    noisy = NoisySolver(game, perfect_player(game), 1.0, time_limit=1.0)
    rng = random.Random(1)
    for states in stage_positions(game, 30, seed=2).values():
        for state in states:
            outcomes = {m.move: m.outcome for m in game.solve(state).moves}
            move = noisy(state, rng)
            assert outcomes[move] != "loss" or set(outcomes.values()) == {"loss"}


def test_the_noisy_solver_says_when_its_noise_gave_the_win_away():
    """Watched, a noisy solver's ``gave_away`` turns true in a game exactly when one of its
    moves left a position the solver no longer wins (mnk-3x4-3, a first player's win with
    drawn positions within reach; the opponent plays at random)."""
    game = get_game("mnk-3x4-3")
    noisy = NoisySolver(game, perfect_player(game), 0.4, time_limit=1.0, watch=True)
    rng, seen = random.Random(5), set()
    for _ in range(60):
        noisy.begin_game()
        state, given = game.initial(), False
        while not state.is_over():
            if state.to_move == "X":
                state = state.play(noisy(state, rng))
                given = given or (not state.is_over() and game.solve(state).value != -1)
            else:
                state = state.play(rng.choice(state.legal_actions()))
        assert noisy.gave_away == given and not noisy.unsure
        seen.add(given)
    assert seen == {True, False}


def test_the_judge_tallies_the_games_the_noise_gave_away():
    game = get_game("mnk-3x4-3")
    perfect = judge(solver_model(game), depths=[None], games=10, noisy_games=40, per_stage=0,
                    progress=lambda _: None, sides="O")["policies"]["network"]
    empty = TableModel(game, ModelInfo(game=game.name, algorithm="empty"),
                       np.zeros(0, np.uint64), np.zeros((0, game.num_actions), np.float32))
    knows_nothing = judge(empty, depths=[None], games=10, noisy_games=40, per_stage=0,
                          progress=lambda _: None, sides="O")["policies"]["network"]
    for figures in (perfect, knows_nothing):
        for p in (0.1, 0.2, 0.3):
            match = figures[f"vs_noisy_{p}_as_o"]
            assert match["given_away"]["games"] <= match["games"]
            assert match["given_away"]["win"] + match["given_away"]["draw"] <= match["draw"] \
                + match["win"]
    # The solver's own play holds every game it is given; at p=0.3 some are given.
    assert perfect["vs_noisy_0.3_as_o"]["given_away"]["games"] > 0
    assert all(perfect[f"vs_noisy_{p}_as_o"]["given_away"]["loss"] == 0 for p in (0.1, 0.2, 0.3))
    assert sum(knows_nothing[f"vs_noisy_{p}_as_o"]["given_away"]["loss"]
               for p in (0.1, 0.2, 0.3)) > 0


def test_first_mistakes_as_o_are_where_the_given_away_games_were_lost():
    """With mistakes, each noisy match as O names, for every game the noise gave away and
    the model lost, its first move whose exact outcome is worse than its position's (after
    the give-away: a drawn or won position left for a lost one); the solver's own model
    loses none and has none."""
    game = get_game("mnk-3x4-3")
    empty = TableModel(game, ModelInfo(game=game.name, algorithm="empty"),
                       np.zeros(0, np.uint64), np.zeros((0, game.num_actions), np.float32))
    me, rng = model_player(empty, None), random.Random(0)

    def outcome(state, move):
        return {m.move: {"win": 1, "draw": 0, "loss": -1}[m.outcome]
                for m in game.solve(state).moves}[move]

    figures = judge(empty, depths=[None], games=4, noisy_games=40, per_stage=0,
                    progress=lambda _: None, sides="O", mistakes=True)["policies"]["network"]
    lost = 0
    for p in (0.1, 0.2, 0.3):
        given = figures[f"vs_noisy_{p}_as_o"]["given_away"]
        found = given["first_mistakes"]
        assert found["games"] == given["loss"] and found["unsure"] == 0
        lost += given["loss"]
        for e in found["positions"]:
            state = game.parse(e["position"])
            assert state.to_move == "O" and e["ply"] == e["position"].count("X") * 2 - 1
            assert e["played"] == me(state, rng)
            best = max(outcome(state, a) for a in state.legal_actions())
            assert outcome(state, e["played"]) < best and best >= 0  # holdable, let go
            assert sorted(e["best"]) == sorted(a for a in state.legal_actions()
                                               if outcome(state, a) == best)
        assert sum(e["games"] for e in found["positions"]) == found["games"]
        assert sum(found["by_ply"].values()) == found["games"]
    assert lost > 0
    perfect = judge(solver_model(game), depths=[None], games=4, noisy_games=40,
                    per_stage=0, progress=lambda _: None, sides="O",
                    mistakes=True)["policies"]["network"]
    for p in (0.1, 0.2, 0.3):
        assert perfect[f"vs_noisy_{p}_as_o"]["given_away"]["first_mistakes"]["games"] == 0


def test_first_mistakes_are_the_first_moves_that_worsen_the_outcome():
    """Against a plain replay of the same games (same seed, the solver's outcomes of every
    move): each game the model did not win as X is counted at its first move whose exact
    outcome is below the position's, and the other policy's move there is judged the
    same way. A model that knows nothing (mnk-3x4-3, a first player's win) against the
    solver's own model as the other policy, which is right everywhere."""
    game = get_game("mnk-3x4-3")
    empty = TableModel(game, ModelInfo(game=game.name, algorithm="empty"),
                       np.zeros(0, np.uint64), np.zeros((0, game.num_actions), np.float32))
    report = judge(empty, depths=[None], games=30, noisy_games=0, per_stage=0,
                   progress=lambda _: None, sides="X", mistakes=True)
    found = report["policies"]["network"]["vs_perfect_as_x"]["first_mistakes"]

    def outcome(state, move):
        return {m.move: {"win": 1, "draw": 0, "loss": -1}[m.outcome]
                for m in game.solve(state).moves}[move]

    me, perfect, rng = model_player(empty, None), perfect_player(game), random.Random(0)
    expected: dict[tuple[str, int], int] = {}
    for _ in range(30):
        state, line = game.initial(), []
        while not state.is_over():
            if state.to_move == "X":
                line.append(state)
                state = state.play(me(state, rng))
            else:
                state = state.play(perfect(state, rng))
        if state.winner() == "X":
            continue
        for i, before in enumerate(line):
            best = max(outcome(before, a) for a in before.legal_actions())
            if outcome(before, me(before, rng)) < best:
                expected[(str(before), 2 * i)] = expected.get((str(before), 2 * i), 0) + 1
                break
    got = {(e["position"], e["ply"]): e["games"] for e in found["positions"]}
    assert got == expected and sum(expected.values()) == found["games"] > 0
    assert found["unsure"] == 0 and found["others_right"] == {}

    # a little-trained network and its depth-1 search, each judged where the other erred
    learner = make_learner(game, "ntuple", seed=1)
    learner.play(20)
    model = learner.export()
    policies = judge(model, depths=[None, 1], games=30, noisy_games=0, per_stage=0,
                     progress=lambda _: None, sides="X", mistakes=True)["policies"]
    assert policies["network"]["vs_perfect_as_x"]["first_mistakes"]["positions"]
    for name, other in (("network", "depth 1"), ("depth 1", "network")):
        found = policies[name]["vs_perfect_as_x"]["first_mistakes"]
        assert found["others_right"][other] == sum(
            e["games"] for e in found["positions"] if e["others"][other]["right"])
        for e in found["positions"]:
            state = game.parse(e["position"])
            best = max(outcome(state, a) for a in state.legal_actions())
            assert outcome(state, e["played"]) < best
            move = e["others"][other]["move"]
            assert e["others"][other]["right"] == (outcome(state, move) == best)


def test_judging_one_side_plays_only_that_side():
    game = get_game("tictactoe")
    said = []
    report = judge(solver_model(game), depths=[None], games=12,
                   noisy_games=12, per_stage=0, progress=said.append, sides="X")
    figures = report["policies"]["network"]
    assert set(figures) == {"vs_perfect_as_x"}
    assert figures["vs_perfect_as_x"]["draw"] == 12
    assert "as X" in said[0] and "as O" not in said[0]
    as_o = judge(solver_model(game), depths=[None], games=12, noisy_games=5, per_stage=0,
                 progress=lambda _: None, sides="O")["policies"]["network"]
    assert set(as_o) == {"vs_perfect_as_o", "vs_noisy_0.1_as_o", "vs_noisy_0.2_as_o",
                         "vs_noisy_0.3_as_o"}
    with pytest.raises(ValueError, match="sides: X, O or XO"):
        judge(solver_model(game), depths=[None], games=1, sides="XX")
