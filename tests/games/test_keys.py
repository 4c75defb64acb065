import random

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from gameai.games import get_game
from gameai.games.mnk.board import Board
from gameai.games.mnk.keys import (
    base3_keys,
    canonical_keys,
    canonical_keys_and_syms,
    column_keys,
    masks_from_base3,
)

from .strategies import boards

TTT = get_game("tictactoe")


def test_base3_key_follows_seed_003():
    # X counts 1, O counts 2, times 3**index (index 0 is the top-left cell).
    board = Board.parse(TTT, "X--|-O-|---")
    assert board.key == 1 + 2 * 3**4
    assert Board.from_key(TTT, board.key) == board


@given(boards(), st.data())
def test_symmetric_boards_share_the_canonical_key(board, data):
    sym = data.draw(st.integers(0, len(board.game.symmetries) - 1))
    assert board.transformed(sym).canonical()[0] == board.canonical()[0]


@given(boards())
def test_canonical_symmetry_maps_to_the_canonical_board(board):
    key, sym = board.canonical()
    assert board.transformed(sym).key == key
    assert key == min(board.transformed(s).key for s in range(len(board.game.symmetries)))


def test_different_positions_have_different_keys():
    corner, edge = Board.parse(TTT, "X--|---|---"), Board.parse(TTT, "-X-|---|---")
    assert corner.canonical()[0] != edge.canonical()[0]


@given(st.lists(boards(["tictactoe", "four-in-a-row", "mnk-4x5-4"]), min_size=1, max_size=8))
def test_vectorised_keys_match_scalar_keys(batch):
    game = batch[0].game
    batch = [b for b in batch if b.game is game]
    x = np.array([b.x for b in batch], dtype=np.uint64)
    o = np.array([b.o for b in batch], dtype=np.uint64)
    assert canonical_keys(game, x, o).tolist() == [b.canonical()[0] for b in batch]
    keys = base3_keys(game, x, o)
    assert keys.tolist() == [b.key for b in batch]
    back_x, back_o = masks_from_base3(game, keys)
    assert back_x.tolist() == x.tolist() and back_o.tolist() == o.tolist()


def test_column_keys_are_unique_invertible_and_canonical():
    """Connect Four's 42 cells take the column key: unique per position, fits 64 bits,
    inverts to the board, and the vectorised canonical form agrees with the scalar one."""
    game = get_game("connect-four")
    assert column_keys(game) and not column_keys(get_game("four-in-a-row"))
    rng = random.Random(11)
    seen: dict[int, tuple[int, int]] = {}
    boards = []
    for _ in range(2000):
        board = game.initial()
        for _ in range(rng.randrange(43)):
            if board.is_over():
                break
            board = board.play(rng.choice(board.legal_moves()))
        key = board.key
        assert 0 <= key < 1 << 64 and seen.setdefault(key, (board.x, board.o)) == (board.x,
                                                                                   board.o)
        assert Board.from_key(game, key) == board
        boards.append(board)
    x = np.array([b.x for b in boards], dtype=np.uint64)
    o = np.array([b.o for b in boards], dtype=np.uint64)
    keys, syms = canonical_keys_and_syms(game, x, o)
    assert [(int(k), int(s)) for k, s in zip(keys, syms, strict=True)] == [b.canonical()
                                                                           for b in boards]
    back_x, back_o = masks_from_base3(game, np.array([b.key for b in boards],
                                                     dtype=np.uint64))
    assert np.array_equal(back_x, x) and np.array_equal(back_o, o)
    assert len(seen) > 1500
