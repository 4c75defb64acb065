import pytest
from hypothesis import given

from gameai.games import GameOver, IllegalMove, InvalidBoard, get_game
from gameai.games.mnk.board import Board

from .strategies import boards

TTT = get_game("tictactoe")
C4 = get_game("connect-four")


def test_parse_and_print_the_seed_pattern():
    board = Board.parse(TTT, "X--|-O-|---")
    assert str(board) == "X--|-O-|---"
    assert board.to_move == "X"
    assert board.cell(0) == "X" and board.cell(4) == "O"


@given(boards())
def test_print_parse_round_trip(board):
    assert Board.parse(board.game, str(board)) == board


@given(boards(playable=True))
def test_play_fills_one_cell_and_passes_the_turn(board):
    for move in board.legal_moves():
        after = board.play(move)
        assert after.ply == board.ply + 1
        assert after.to_move != board.to_move
        assert after.cell(move) == board.to_move


@given(boards())
def test_winning_actions_are_the_generic_rules(board):
    """Board.winning_actions tests the lines through each playable cell; the reference,
    State.winning_actions, plays every legal action and asks the result who won."""
    from gameai.games.interface import State

    assert board.winning_actions() == State.winning_actions(board)


def test_winning_actions_find_every_kind_of_win():
    # X to move: a row (cell 2), or the column under gravity
    assert Board.parse(TTT, "XX-|OO-|---").winning_actions() == (2,)
    assert C4.parse_moves("414141").winning_actions() == (17,)  # on top of column 4
    assert C4.parse_moves("4141415").winning_actions() == (14,)  # O's, on top of column 1
    assert C4.parse_moves("4141").winning_actions() == ()
    assert C4.parse_moves("4141414").winning_actions() == ()  # X won: the game is over


@pytest.mark.parametrize(
    ("game", "pattern", "fragment"),
    [
        (TTT, "X--|-O-", "expected 3 rows"),
        (TTT, "X--|-O-|---|", "expected 3 rows"),
        (TTT, "X---|-O-|---", "row 0 has 4 cells"),
        (TTT, "X--|-A-|---", "unknown character 'A' at row 1, column 1"),
        (TTT, "x--|---|---", "unknown character 'x'"),
        (TTT, "XX-|---|---", "impossible piece counts: 2 X and 0 O"),
        (TTT, "O--|---|---", "impossible piece counts: 0 X and 1 O"),
        (TTT, "XXX|OOO|X--", "both players have a line"),
        (TTT, "XXX|OO-|O--", "X has a line but O moved last"),
        (TTT, "OOO|XX-|X-X", "O has a line but X moved last"),
        (TTT, "XXX|OOX|OXO", None),  # X won with the last move: valid
        (get_game("four-in-a-row"), "XXXX|OOO-|XXXX|OOOO",
         "both players have a line"),
        (get_game("mnk-5x5-3"), "XXX--|-----|XXX--|OO---|OOO--", "both players"),
        (get_game("mnk-5x5-3"), "XXX--|OO---|XXX--|OO---|O----", "one last move"),
        (C4, "-------|-------|-------|-------|---X---|-------", "floating piece at row 4"),
        (C4, "-------|-------|-------|-------|-------|O--X---", None),
        (C4, "-------|-------|-------|-------|X--X---|O--O---", "no X on the bottom row"),
        (C4, "-------|-------|-------|XX-----|OO-----|XO-----", "O moved last, but no column"),
        (C4, "-------|-------|-------|-------|O--X---|X--O---", None),
        (TTT, 42, "must be text"),
        (TTT, "-" * 500, "limit is"),
    ],
)
def test_invalid_boards_name_the_problem(game, pattern, fragment):
    if fragment is None:  # a valid board, as a control for its neighbours
        Board.parse(game, pattern)
        return
    with pytest.raises(InvalidBoard) as err:
        Board.parse(game, pattern)
    assert fragment in str(err.value)


def test_finished_game_is_a_distinct_error():
    board = Board.parse(TTT, "XXX|OO-|---")
    assert board.winner() == "X"
    with pytest.raises(GameOver) as err:
        board.play(5)
    assert not isinstance(err.value, InvalidBoard)
    assert err.value.winner == "X"
    with pytest.raises(GameOver):
        Board.parse(TTT, "XOX|XOO|OXX").require_playable()


def test_illegal_moves():
    board = Board.parse(TTT, "X--|---|---")
    with pytest.raises(IllegalMove, match="already taken"):
        board.play(0)
    with pytest.raises(IllegalMove, match="off the board"):
        board.play(9)


def test_gravity_moves_drop_to_the_lowest_empty_cell():
    board = Board.empty(C4)
    assert board.legal_moves() == list(range(35, 42))
    after = board.play(38)
    assert 31 in after.legal_moves() and 38 not in after.legal_moves()
    with pytest.raises(IllegalMove, match="lowest empty cell"):
        after.play(3)
