"""Seed 004's distillation: a small network plus exceptions plays as its teacher."""

import numpy as np
import pytest

from gameai.games.mnk.board import Board
from gameai.models import MlpModel, load_model
from gameai.trainer.evaluation.evaluate import evaluate, optimal_moves, unbeatable
from gameai.trainer.learners.base import BadParameter, build_params
from gameai.trainer.learners.export import expand
from gameai.trainer.learners.mlp import MlpParams, distill, training_positions
from gameai.trainer.training import make_learner, train


def _choices(model, boards):
    return np.nanargmax(model.move_values(boards), axis=1)


def _assert_plays_as_teacher(student, teacher):
    game = teacher.game
    x, o = training_positions(teacher)
    boards = [Board(game, a, b) for a, b in zip(x.tolist(), o.tolist(), strict=True)]
    assert np.array_equal(_choices(student, boards), _choices(teacher, boards))


def _every_reachable_board(game):
    """Every non-terminal board any sequence of legal moves reaches, each orientation as
    the board it is (4,520 for tic-tac-toe)."""
    x, o = np.zeros(1, np.uint64), np.zeros(1, np.uint64)
    boards = []
    while len(x):
        boards += [Board(game, a, b) for a, b in zip(x.tolist(), o.tolist(), strict=True)]
        kids = expand(game, x, o)
        rows, cells = np.nonzero(kids.legal & ~kids.terminal)
        pairs = np.unique(np.stack([kids.x[rows, cells], kids.o[rows, cells]], axis=1), axis=0)
        x, o = pairs[:, 0].copy(), pairs[:, 1].copy()
    return boards


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 6))
def test_the_student_plays_its_teachers_move_everywhere(ttt, seed):
    """Issue 28, item 7: the network plus its exceptions plays exactly as the table, move
    for move over every reachable position in every orientation, ties included (the
    teacher's own tie-break: the lowest of its equal cells in the board's orientation).
    Before, a tied move of the network was let pass and only the canonical orientation was
    compared: the student of td seed 3 then lost lines as O that its teacher never loses."""
    teacher = train(make_learner(ttt, "td", seed=seed), games=1_000_000,
                    until_unbeatable=True).model
    student = distill(teacher, seed=seed).model
    boards = _every_reachable_board(ttt)
    assert len(boards) == 4520
    differ = [str(b) for b in boards
              if student.best_move(b).index != teacher.best_move(b).index]
    assert differ == []
    assert np.array_equal(_choices(student, boards), _choices(teacher, boards))
    report = evaluate(student, random_games=20)
    assert (report["losses_as_x"], report["losses_as_o"]) == (0, 0)


@pytest.fixture(scope="module")
def distilled(td_model):
    return distill(td_model, seed=1)


def test_student_is_unbeatable_and_smaller(distilled, td_model):
    student = distilled.model
    assert isinstance(student, MlpModel)
    assert student.hidden == 27
    report = evaluate(student, random_games=200)
    assert unbeatable(report)
    assert distilled.student_bytes < distilled.teacher_bytes
    assert len(student.to_bytes()) == distilled.student_bytes
    assert distilled.positions >= len(td_model.keys)
    assert 0.5 < distilled.network_accuracy <= 1.0
    assert distilled.teacher_move_us > 0 and distilled.student_move_us > 0
    _assert_plays_as_teacher(student, td_model)


def test_exceptions_cover_what_a_tiny_network_gets_wrong(td_model):
    result = distill(td_model, params=MlpParams(hidden=1, epochs=30), seed=1)
    assert result.network_accuracy < 0.9
    assert result.exceptions > 0.1 * result.positions
    assert len(result.model.exception_keys) == result.exceptions
    _assert_plays_as_teacher(result.model, td_model)
    assert unbeatable(evaluate(result.model, random_games=50))


def test_a_perfect_teachers_student_is_perfect_everywhere(ttt):
    teacher = train(make_learner(ttt, "td", seed=1), games=1_000_000, until_perfect=True).model
    assert optimal_moves(teacher) == (4520, 4520)
    tiny = distill(teacher, params=MlpParams(hidden=1, epochs=30), seed=1)
    assert tiny.positions == 627  # every reachable canonical position, not only the table's
    assert optimal_moves(tiny.model) == (4520, 4520)


def test_distillation_is_deterministic(td_model):
    a = distill(td_model, params=MlpParams(epochs=200), seed=3).model
    b = distill(td_model, params=MlpParams(epochs=200), seed=3).model
    assert np.array_equal(a.w1, b.w1) and np.array_equal(a.b2, b.b2)
    assert np.array_equal(a.exception_keys, b.exception_keys)
    back = load_model(a.to_bytes())
    assert np.array_equal(back.w2, a.w2)


def test_student_names_its_teacher(distilled, td_model):
    params = distilled.model.info.params
    assert params["hidden"] == 27
    assert params["teacher"]["algorithm"] == "td"
    assert params["teacher"]["games_played"] == td_model.info.games_played
    assert len(params["teacher"]["sha256"]) == 64


def test_bad_mlp_parameters():
    with pytest.raises(BadParameter, match="'hidden'"):
        build_params(MlpParams, {"hidden": "0"})
