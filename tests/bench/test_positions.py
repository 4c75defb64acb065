"""Benchmark positions: reproducible, classed as asked, and labelled right: against a plain
negamax on small gravity boards, the table solver on connect-4x5-4, and on 6x7 against an
independent solver (bitbully, a test-only dependency: AGPL, never imported by the
package)."""

from __future__ import annotations

import numpy as np
import pytest

from gameai.bench.positions import (
    buckets,
    difficulty_of,
    generate,
    stage_of,
    stage_plies,
)
from gameai.games import get_game
from gameai.games.mnk.positions import enumerate_positions
from gameai.games.mnk.search import Searcher
from gameai.games.mnk.solver import solve_positions
from tests.games.test_search import reference

C4 = get_game("connect-four")


def pons_score(score: int, ply: int) -> int:
    """Our ``big - t`` score of a move from a position at ``ply`` as the Pons/bitbully
    score: ``(44 - e) // 2`` for the winner of the stone ``e`` (6x7 only)."""
    if score == 0:
        return 0
    t = C4.big - abs(score)
    e = ply + t
    return (44 - e) // 2 * (1 if score > 0 else -1)


@pytest.fixture(scope="module")
def searcher() -> Searcher:
    return Searcher(C4, tt_bits=22)


def test_the_same_seed_draws_the_same_labelled_positions(searcher):
    first = generate(C4, stage="end", difficulty="easy", count=5, seed=4, searcher=searcher)
    again = generate(C4, stage="end", difficulty="easy", count=5, seed=4,
                     searcher=Searcher(C4, tt_bits=16))
    other = generate(C4, stage="end", difficulty="easy", count=5, seed=5, searcher=searcher)
    assert first == again and first != other


@pytest.mark.parametrize(("stage", "difficulty"), [("end", "easy"), ("middle", "easy"),
                                                   ("middle", "medium")])
def test_positions_are_of_their_class_and_agree_with_bitbully(searcher, stage, difficulty):
    bitbully = pytest.importorskip("bitbully")
    solver = bitbully.BitBully(opening_book=None)
    for p in generate(C4, stage=stage, difficulty=difficulty, count=6, seed=1,
                      searcher=searcher):
        board = C4.parse_moves(p.moves)
        assert str(board) == p.board and board.ply == p.ply
        assert stage_of(C4, p.ply) == stage and difficulty_of(p.distance) == difficulty
        assert set(p.move_scores) == {m % 7 + 1 for m in board.legal_moves()}
        assert p.score == max(p.move_scores.values())
        theirs = solver.score_all_moves(bitbully.Board.from_moves(
            [int(c) - 1 for c in p.moves]))
        ours = {c - 1: pons_score(s, p.ply) for c, s in p.move_scores.items()}
        assert ours == theirs, p.moves


def test_a_hard_beginning_position_agrees_with_bitbully(searcher):
    bitbully = pytest.importorskip("bitbully")
    (p,) = generate(C4, stage="beginning", difficulty="hard", count=1, seed=2,
                    searcher=searcher)
    assert p.ply <= 14 and p.distance >= 28
    theirs = bitbully.BitBully(opening_book=None).score_all_moves(
        bitbully.Board.from_moves([int(c) - 1 for c in p.moves]))
    assert {c - 1: pons_score(s, p.ply) for c, s in p.move_scores.items()} == theirs


def test_labels_on_small_boards_match_plain_negamax():
    game = get_game("connect-4x4-3")
    ref = reference("connect-4x4-3")
    for stage, difficulty in buckets(game):
        for p in generate(game, stage=stage, difficulty=difficulty, count=3, seed=0,
                          tries=5_000):
            board = game.parse_moves(p.moves)
            assert p.score == ref[(board.x, board.o)]


@pytest.mark.slow
def test_labels_on_connect_4x5_4_match_the_table_solver():
    game = get_game("connect-4x5-4")
    table = solve_positions(enumerate_positions(game.initial()))
    searcher = Searcher(game, tt_bits=18)
    checked = 0
    for stage, difficulty in buckets(game):
        try:
            found = generate(game, stage=stage, difficulty=difficulty, count=4, seed=0,
                             searcher=searcher, tries=2_000)
        except ValueError:
            continue  # a class this board rarely reaches by random play
        for p in found:
            board = game.parse_moves(p.moves)
            key = np.array([board.canonical()[0]], dtype=np.uint64)
            assert p.score == int(table.lookup(key)[0]), p.moves
            checked += 1
    assert checked >= 12


def test_stages_and_classes():
    assert [stage_plies(C4, s) for s in ("beginning", "middle", "end")] == [
        range(8, 15), range(15, 29), range(29, 42)]
    assert [difficulty_of(d) for d in (1, 13, 14, 27, 28, 40)] == [
        "easy", "easy", "medium", "medium", "hard", "hard"]
    assert ("middle", "hard") not in set(buckets(C4)) and ("end", "medium") not in set(
        buckets(C4))
    with pytest.raises(ValueError, match="unknown stage"):
        generate(C4, stage="opening", difficulty="easy", count=1)
    with pytest.raises(ValueError, match="gravity games"):
        generate(get_game("mnk-4x5-4"), stage="end", difficulty="easy", count=1)
