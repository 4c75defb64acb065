"""The levels' policies: each level's draws follow the probabilities docs/levels.md states,
and the levels play the model's top move more often from beginner to best."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from gameai.games import get_game
from gameai.games.mnk.board import Board
from gameai.models import TableModel
from gameai.models.levels import (
    LEVELS,
    choose,
    level_named,
    probabilities,
    seeded,
    winning_actions,
)
from gameai.models.oracle import solver_model

TTT = get_game("tictactoe")


@pytest.fixture(scope="module")
def perfect() -> TableModel:
    return solver_model(TTT)


@pytest.mark.parametrize("name", list(LEVELS))
def test_choices_follow_the_documented_probabilities(perfect: TableModel, name: str) -> None:
    """Each level's frequencies over 20,000 draws match :func:`probabilities` (the policy
    as the docs state it) within 4.5 standard deviations, on a position with wins, draws
    and losses."""
    level = level_named(name)
    state = Board.parse(TTT, "XX-|OO-|---")  # X to move: a win, a draw, three losses
    moves = perfect.evaluate(state).moves
    assert len({m.value for m in moves}) > 2
    expected = probabilities(level, moves, winning_actions(state))
    rng, n = random.Random(99), 20_000
    counts = Counter(choose(level, moves, winning_actions(state), rng).index for _ in range(n))
    for move, p in zip(moves, expected, strict=True):
        sd = (n * p * (1 - p)) ** 0.5
        assert abs(counts[move.index] - n * p) <= 4.5 * sd + 1e-9, (move, p)


def test_levels_are_ordered_by_how_often_they_play_the_top_move(perfect) -> None:
    state = Board.parse(TTT, "X-O|---|---")  # wins in 5, draws, a loss
    moves = perfect.evaluate(state).moves
    top = [probabilities(LEVELS[n], moves, ())[0] for n in ("beginner", "casual", "strong",
                                                           "best")]
    assert top == sorted(top) and top[-1] == 1.0 and len(set(top)) == 4


def test_seeded_draws_follow_the_same_probabilities(perfect: TableModel) -> None:
    """Over 20,000 seeds, the seeded choices of casual in one position have the policy's
    frequencies: the hash's draws are uniform enough to keep the calibration true."""
    level = level_named("casual")
    state = Board.parse(TTT, "X-O|---|---")
    moves = perfect.evaluate(state).moves
    expected = probabilities(level, moves, ())
    n = 20_000
    counts = Counter(choose(level, moves, (), seeded(seed, level, "X-O|---|--- X")).index
                     for seed in range(n))
    for move, p in zip(moves, expected, strict=True):
        sd = (n * p * (1 - p)) ** 0.5
        assert abs(counts[move.index] - n * p) <= 4.5 * sd + 1e-9, (move, p)
    assert choose(level, moves, (), seeded(5, level, "a")) == \
        choose(level, moves, (), seeded(5, level, "a"))
