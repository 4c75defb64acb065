"""Column-sequence notation for gravity games: round trips and every error, named."""

from __future__ import annotations

import random

import pytest

from gameai.games import GameOver, IllegalMove, InvalidBoard, get_game
from gameai.games.mnk.columns import drop_cell, to_moves

C4 = get_game("connect-four")


def test_moves_build_the_position_they_name():
    board = C4.parse_moves("4453")
    assert str(board) == "-------|-------|-------|-------|---O---|--OXX--"
    assert board.to_move == "X"
    assert C4.parse_moves("4 4 5 3") == board == C4.parse_moves(" 4,4,5,3 ")
    assert C4.parse_moves("") == C4.initial()


def test_random_games_round_trip_through_the_notation():
    rng = random.Random(5)
    for name in ("connect-four", "connect-4x5-4", "connect-3x12-4"):
        game = get_game(name)
        for _ in range(50):
            board, columns = game.initial(), []
            while not board.is_over() and rng.random() < 0.95:
                col = rng.choice(sorted({m % game.cols for m in board.legal_moves()}))
                board = board.play(drop_cell(board, col))
                columns.append(col)
            assert game.parse_moves(to_moves(game, columns)) == board
            assert game.parse(str(board)) == board


@pytest.mark.parametrize(("text", "error", "message"), [
    ("4448", IllegalMove, "moves: move 4 (8): column 8 is out of range (columns are 1-7)"),
    ("40", IllegalMove, "moves: move 2 (0): column 0 is out of range (columns are 1-7)"),
    ("4444444", IllegalMove, "moves: move 7 (4): column 4 is full"),
    ("44556677", IllegalMove, "moves: move 8 (7): the game was already over: X won at move 7"),
    ("44x", InvalidBoard, "moves: move 3 ('x') is not a column number 1-7"),
    ("4" * 201, InvalidBoard, "moves: 201 characters long; at most 200 are accepted"),
])
def test_bad_moves_name_the_move_and_the_problem(text, error, message):
    with pytest.raises(error) as caught:
        C4.parse_moves(text)
    assert str(caught.value) == message
    assert caught.value.field == "moves"


def test_moves_that_fill_the_board_then_continue_are_refused():
    game = get_game("connect-2x2-2")
    with pytest.raises(IllegalMove, match="already over: X won at move 3"):
        game.parse_moves("1121")
    drawn = get_game("connect-1x2-2").parse_moves("12")
    with pytest.raises(GameOver):
        drawn.require_playable()


def test_non_gravity_games_take_boards_only():
    with pytest.raises(InvalidBoard, match="takes a board, not a list of moves"):
        get_game("mnk-4x5-4").parse_moves("1")
    with pytest.raises(InvalidBoard, match="must be text"):
        C4.parse_moves(44)


def test_a_game_lists_its_moves_as_actions_one_by_one():
    """``parse_game``: what a review replays, each move's cell in order, the same
    position as ``parse_moves`` at the end; the same errors."""
    c4 = get_game("connect-four")
    actions = c4.parse_game("4453")
    assert actions == [38, 31, 39, 37]  # bottom row is 35-41: columns 4, 4 (on top), 5, 3
    state = c4.initial()
    for action in actions:
        state = state.play(action)
    assert state == c4.parse_moves("4453")
    assert c4.parse_game("") == []
    with pytest.raises(IllegalMove, match="move 7 \\(4\\): column 4 is full"):
        c4.parse_game("4444444")
    with pytest.raises(InvalidBoard, match="give the moves as actions"):
        get_game("tictactoe").parse_game("123")


def reference_board(game, columns):
    """The plain reference for the notation: Board.play move by move (which checks the whole
    board before each move), and the game's end as the board says it."""
    board = game.initial()
    for col in columns:
        board = board.play(drop_cell(board, col))
    return board


@pytest.mark.parametrize("name", ["connect-four", "connect-4x5-4", "connect-3x12-4",
                                  "connect-2x2-2"])
def test_the_notation_gives_board_plays_position_and_end_move_by_move(name):
    """parse_moves tests only the lines through each cell filled; Board.play, the reference,
    the whole board: the same positions, the same end, every prefix of random games played
    to the end (won or full)."""
    game = get_game(name)
    rng = random.Random(11)
    ended = 0
    for _ in range(60):
        board, columns = game.initial(), []
        while not board.is_over():
            col = rng.choice(sorted({m % game.cols for m in board.legal_moves()}))
            board = board.play(drop_cell(board, col))
            columns.append(col)
            parsed = game.parse_moves(to_moves(game, columns))
            assert parsed == reference_board(game, columns) == board
            assert parsed.is_over() == board.is_over()
        # one move more is refused, naming how the game ended and at which move
        open_columns = [c for c in range(game.cols) if drop_cell(board, c) is not None]
        if open_columns:
            ended += 1
            how = f"{board.winner()} won" if board.winner() else "the board was full"
            with pytest.raises(IllegalMove, match=f"already over: {how}.* at move "
                                                  f"{len(columns)}$"):
                game.parse_moves(to_moves(game, [*columns, open_columns[0]]))
    assert ended  # some game ended with a column still open
