"""Hexapawn's rules, notation, symmetry and errors, through gameai's interface only."""

from __future__ import annotations

import pytest
from gameai.games import GameOver, IllegalMove, InvalidBoard, get_game

from gameai_hexapawn.board import HexapawnBoard, mirrored
from gameai_hexapawn.game import HEXAPAWN

GAME = get_game("hexapawn")


def movements(state) -> set[str]:
    """The legal moves in the move notation (points 1-9)."""
    return {f"{m.from_index + 1}-{m.index + 1}" for m in state.moves()}


def test_the_registry_finds_this_family():
    assert GAME is HEXAPAWN and get_game("  HexaPawn ") is GAME
    assert GAME.num_actions == 90 and (GAME.rows, GAME.cols) == (3, 3)


def test_the_start_and_the_first_moves():
    start = GAME.initial()
    assert str(start) == "OOO|---|XXX" and start.to_move == "X"
    assert GAME.parse_moves("") == start == GAME.parse("OOO|---|XXX")
    assert movements(start) == {"7-4", "8-5", "9-6"}  # one square straight up, nothing else
    assert all(GAME.split_action(a)[0] is not None for a in start.legal_actions())


def test_a_pawn_captures_diagonally_forward_and_never_straight():
    state = GAME.parse_moves("8-5")
    assert str(state) == "OOO|-X-|X-X" and state.to_move == "O"
    # O's corner pawns take the centre or step down; the middle pawn is blocked
    assert movements(state) == {"1-4", "1-5", "3-5", "3-6"}
    taken = state.play(GAME.action_of(4, 0))
    assert str(taken) == "-OO|-O-|X-X" and taken.to_move == "X"
    assert movements(taken) == {"7-4", "7-5", "9-5", "9-6"}  # both corners may take back


def test_reaching_the_far_row_wins():
    state = GAME.parse_moves("8-5 1-5 7-4 5-8")
    assert str(state) == "-OO|X--|-OX"
    assert state.winner() == "O" and state.is_over() and state.legal_actions() == []
    with pytest.raises(GameOver, match="O has won"):
        state.play(GAME.action_of(0, 3))


def test_capturing_every_pawn_wins():
    alone = HexapawnBoard(GAME, x=1 << 4, o=0, x_to_move=False)
    assert alone.winner() == "X" and alone.legal_actions() == []


def test_a_side_without_a_move_loses():
    blocked = HexapawnBoard(GAME, x=1 << 3, o=1 << 0 | 1 << 2, x_to_move=True)
    assert blocked.legal_actions() == [] and blocked.winner() == "O"
    # the same pawns with O to move: the pawn facing X's is blocked too, the other steps
    assert HexapawnBoard(GAME, blocked.x, blocked.o, False).legal_actions() == [
        GAME.action_of(5, 2)]
    # and on a position legal play reaches: X's pawn faces O's, neither can move
    stuck = GAME.parse("-O-|-X-|---")
    assert stuck.to_move == "O" and stuck.winner() == "X"


def mirror(state: HexapawnBoard) -> HexapawnBoard:
    return HexapawnBoard(GAME, mirrored(state.x), mirrored(state.o), state.x_to_move)


def test_the_mirror_is_the_one_symmetry():
    assert GAME.symmetries == ((0, 1, 2, 3, 4, 5, 6, 7, 8), (2, 1, 0, 5, 4, 3, 8, 7, 6))
    left, right = GAME.parse_moves("7-4"), GAME.parse_moves("9-6")
    assert str(left) == "OOO|X--|-XX" and mirror(left) == right
    assert left.canonical()[0] == right.canonical()[0] and left.key != right.key
    for state in (GAME.initial(), left, GAME.parse_moves("7-4 2-4")):
        for action in state.legal_actions():  # a move's image is the move of the image
            image = GAME.action_symmetries[1][action]
            assert mirror(state.play(action)) == mirror(state).play(image)


def test_every_position_tells_whose_turn_it_is():
    """Captures break the counts, but no reachable position arises with both sides to move,
    so ``to_move`` may be left out of every board."""
    keys = {int(k) for k in GAME.state_graph().raw_keys}
    assert len(keys) == 135
    assert not {k for k in keys if k < 3 ** 9 and k + 3 ** 9 in keys}
    for key in keys:
        x = sum(1 << i for i in range(9) if key // 3 ** i % 3 == 1)
        o = sum(1 << i for i in range(9) if key // 3 ** i % 3 == 2)
        state = HexapawnBoard(GAME, x, o, key < 3 ** 9)
        assert GAME.parse(str(state)) == state == GAME.parse(str(state), to_move=state.to_move)


@pytest.mark.parametrize(("board", "to_move", "field", "message"), [
    ("OOO|---|XX", None, "", "row 2 has 2 cells, expected 3"),
    ("OOO|---", None, "", "expected 3 rows separated by '|', got 2"),
    ("OOO|-K-|XXX", None, "", "unknown character 'K' at row 1, column 1"),
    (None, None, "", "board must be text like 'OOO|---|XXX', got NoneType"),
    ("O" * 50, None, "", "board is 50 characters long; a hexapawn board is 11"),
    ("---|---|---", None, "", "the board is empty"),
    ("OOO|X--|XXX", None, "", "X has 4 pawns; each side has three"),
    ("X-O|---|O--", None, "", "both X and O have a pawn on the far row"),
    ("OOO|---|XXX", "O", "to_move", "to_move: 'O' is impossible: this position arises only "
                                    "with X to move"),
    ("OOO|---|XXX", "Z", "to_move", "to_move: must be 'X' or 'O', got 'Z'"),
    ("X-O|-O-|---", "X", "to_move", "to_move: 'X' is impossible: X has reached the far row"),
    ("-O-|---|XXX", None, "", "this position cannot arise in hexapawn"),
    ("OOO|XXX|---", None, "", "this position cannot arise in hexapawn"),
])
def test_impossible_boards_are_refused_by_name(board, to_move, field, message):
    with pytest.raises(InvalidBoard) as caught:
        GAME.parse(board, to_move=to_move)
    assert str(caught.value).startswith(message) and caught.value.field == field


@pytest.mark.parametrize(("moves", "error", "message"), [
    ("5", InvalidBoard, "moves: move 1 ('5') is not a move like '8-5' from one point 1-9 to "
                        "another (Hexapawn has no placements"),
    ("8-5 x", InvalidBoard, "moves: move 2 ('x') is not a move like '8-5'"),
    (17, InvalidBoard, "moves: must be text like '8-5 3-5 9-5', got int"),
    ("8-5 " * 60, InvalidBoard, "moves: 240 characters long; at most 200"),
    ("1-4", IllegalMove, "moves: move 1 (1-4): the pawn on 1 (row 0, column 0) is O's; X is "
                         "to move"),
    ("5-2", IllegalMove, "moves: move 1 (5-2): there is no pawn on 5 (row 1, column 1)"),
    ("8-2", IllegalMove, "moves: move 1 (8-2): 2 (row 0, column 1) is not one row forward of "
                         "8 (row 2, column 1): X's pawns move one row up"),
    ("8-5 2-5", IllegalMove, "moves: move 2 (2-5): 5 (row 1, column 1) is taken: a pawn "
                             "moves straight forward only to an empty square"),
    ("8-4", IllegalMove, "moves: move 1 (8-4): 4 (row 1, column 0) is empty: a pawn moves "
                         "diagonally only to capture an O pawn"),
    ("8-5 1-5 7-4 5-8 4-1", IllegalMove, "moves: move 5 (4-1): the game was already over: O "
                                         "had won"),
])
def test_illegal_and_malformed_moves_are_named_by_number(moves, error, message):
    with pytest.raises(error) as caught:
        GAME.parse_moves(moves)
    assert str(caught.value).startswith(message) and caught.value.field == "moves"


@pytest.mark.parametrize(("action", "message"), [
    (4, "a placement on 5 (row 1, column 1): Hexapawn has no placements"),
    (90, "move 90 is out of range (actions are 0..89"),
    (True, "move True is out of range"),
    (9 + 6 * 9 + 4, "5 (row 1, column 1) is empty: a pawn moves diagonally only to capture"),
])
def test_play_refuses_what_the_rules_forbid(action, message):
    with pytest.raises(IllegalMove) as caught:
        GAME.initial().play(action)
    assert str(caught.value).startswith(message)


def test_the_rules_a_client_needs():
    rules = GAME.rules()
    assert rules["pieces"] == 3 and rules["forward"] == {"X": -1, "O": 1}
    assert "hexapawn" in GAME.describe()
