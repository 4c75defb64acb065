import re

import numpy as np
import pytest

from gameai.games import get_game
from gameai.games.mnk.board import Board
from gameai.games.mnk.keys import base3_keys, canonical_keys
from gameai.trainer.learners.export import boards_of, child_keys, expand
from gameai.trainer.learners.hashtable import EMPTY, HashTable, find, insert
from gameai.trainer.training import make_learner
from gameai.trainer.walkers.bitboard import make_spec
from gameai.trainer.walkers.rng import below, next_u64, seed_state, uniform

from .conftest import random_boards

GAMES = ["tictactoe", "mnk-3x4-3", "four-in-a-row", "connect-4x5-4"]


@pytest.mark.parametrize("name", GAMES)
def test_child_keys_match_the_game_core(name):
    game = get_game(name)
    boards = random_boards(game, 60, seed=3)
    x = np.array([b.x for b in boards], dtype=np.uint64)
    o = np.array([b.o for b in boards], dtype=np.uint64)
    kids = expand(game, x, o)
    canon, raw = child_keys(game, x, o), child_keys(game, x, o, canonical=False)
    for i, board in enumerate(boards):
        for move in board.legal_moves():
            child = board.play(move)
            assert kids.legal[i, move]
            assert (kids.x[i, move], kids.o[i, move]) == (child.x, child.o)
            assert bool(kids.won[i, move]) == (child.winner() is not None)
            assert bool(kids.full[i, move]) == child.is_full()
            one = np.array([child.x], np.uint64), np.array([child.o], np.uint64)
            assert canon[i, move] == canonical_keys(game, *one)[0]
            assert raw[i, move] == base3_keys(game, *one)[0]
        assert kids.legal[i].sum() == len(board.legal_moves())


def test_boards_round_trip_through_keys():
    game = get_game("mnk-3x4-3")
    boards = random_boards(game, 30, seed=5)
    x = np.array([b.x for b in boards], dtype=np.uint64)
    o = np.array([b.o for b in boards], dtype=np.uint64)
    bx, bo = boards_of(game, base3_keys(game, x, o))
    assert np.array_equal(bx, x) and np.array_equal(bo, o)


def test_generator_is_seeded_and_uniform():
    a, b = seed_state(7), seed_state(7)
    assert [int(next_u64(a)) for _ in range(5)] == [int(next_u64(b)) for _ in range(5)]
    assert int(next_u64(seed_state(7))) != int(next_u64(seed_state(8)))
    rng = seed_state(1)
    draws = np.array([below(rng, 9) for _ in range(9000)])
    assert draws.min() == 0 and draws.max() == 8
    assert np.all(np.abs(np.bincount(draws) - 1000) < 150)
    assert 0.0 <= min(uniform(rng) for _ in range(1000)) < 0.01


def test_table_finds_inserts_and_keeps_rows_when_it_grows():
    table = HashTable({"v": (np.float64, (), 0.5), "n": (np.int64, (2,), 0)}, capacity=16)
    keys = np.arange(1, 200, dtype=np.uint64) * np.uint64(7919)
    for i, key in enumerate(keys[:5]):
        slot = insert(table.keys, table.used, key)
        table.columns["v"][slot] = i
    table.reserve(len(keys))
    assert table.capacity >= 2 * (5 + len(keys)) - 1
    for key in keys[5:]:
        insert(table.keys, table.used, key)
    assert len(table) == len(keys)
    slots = table.lookup(keys[:5])
    assert table.columns["v"][slots].tolist() == [0, 1, 2, 3, 4]
    assert table.columns["v"][table.lookup(keys[5:6])][0] == 0.5  # the initial value
    assert find(table.keys, np.uint64(3)) == -1
    assert EMPTY not in table.keys[table.slots()]
    assert np.all(np.diff(table.keys[table.slots()].astype(np.float64)) > 0)


def test_a_table_that_would_outgrow_the_memory_limit_refuses_before_growing(monkeypatch):
    """A td learner on four-in-a-row under a 2 MB limit: the growth that would pass it is
    refused at once, naming the sizes and the limit; the learner stops playing (issue 28:
    it says why in ``full``) and the table it had is kept."""
    monkeypatch.setenv("GAMEAI_MEMORY_LIMIT", "2M")
    learner = make_learner(get_game("four-in-a-row"), "td", seed=1)
    for _ in range(1000):
        if learner.play(100).games < 100:
            break
    assert re.search(r"growing a learner's table from [\d,]+ to [\d,]+ slots .* over the "
                     r"memory limit of 2\.0 MB \(GAMEAI_MEMORY_LIMIT=2M\)", learner.full or "")
    kept = learner.table.capacity
    assert learner.table.nbytes() <= 2 << 20 and len(learner.table) <= kept / 2
    monkeypatch.setenv("GAMEAI_MEMORY_LIMIT", "64M")
    assert learner.play(100).games == 100  # a higher limit lets it go on from there
    assert learner.table.capacity > kept and learner.full is None


def test_spec_refuses_boards_too_large_for_keys():
    with pytest.raises(ValueError, match="at most 40"):
        make_spec(get_game("mnk-6x7-4"))


@pytest.mark.parametrize("algorithm", ["tally", "td", "qlearning"])
@pytest.mark.parametrize("name", GAMES)
def test_every_learner_plays_legal_complete_games_of_every_game(algorithm, name):
    game = get_game(name)
    learner = make_learner(game, algorithm, seed=2)
    stats = learner.play(300)
    assert stats.x_wins + stats.o_wins + stats.draws == 300
    assert 300 * game.k <= stats.moves <= 300 * game.cells
    model = learner.export()
    assert len(model.keys) > 0
    assert np.nanmin(model.values) >= -1 and np.nanmax(model.values) <= 1
    # every stored row is a real position of the game, in its canonical orientation
    x, o = boards_of(game, model.keys)
    for a, b in list(zip(x.tolist(), o.tolist(), strict=True))[:50]:
        board = Board.parse(game, str(Board(game, a, b)))
        assert not board.is_over()
        assert model.best_move(board).index in board.legal_moves()
