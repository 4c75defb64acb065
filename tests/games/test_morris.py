"""Three Men's Morris and its variants: names, rules, the precise errors, keys."""

from __future__ import annotations

import random

import pytest

from gameai.games import GameOver, IllegalMove, InvalidBoard, UnknownGame, get_game
from gameai.games.morris.board import MorrisBoard
from gameai.games.morris.game import MorrisGame, variants

STANDARD = "three-mens-morris"


def game(name: str = STANDARD) -> MorrisGame:
    g = get_game(name)
    assert isinstance(g, MorrisGame)
    return g


def movement(g: MorrisGame, frm: int, to: int) -> int:
    return g.action_of(to, frm)


# -- names -------------------------------------------------------------------------------

def test_names_and_their_options():
    assert (game().anywhere, game().diagonals_win, game().centre_opening) == (False, True, True)
    assert game("nine-holes").anywhere
    assert game("three-mens-morris-anywhere") is game("nine-holes")
    g = game("Three-Mens-Morris-No-Center-Opening ")
    assert g.name == "three-mens-morris-no-centre-opening" and not g.centre_opening
    assert game("nine-holes-no-diagonals-no-centre-opening") in variants()
    assert len({v.name for v in variants()}) == 8


def test_a_repeated_option_or_an_unknown_name_is_refused():
    with pytest.raises(UnknownGame, match="twice"):
        get_game("nine-holes-no-diagonals-no-diagonals")
    with pytest.raises(UnknownGame, match="three-mens-morris"):
        get_game("three-mens-morris-sideways")


# -- rules -------------------------------------------------------------------------------

def test_placement_then_movement_to_orthogonal_neighbours():
    g = game()
    b = g.initial()
    assert b.to_move == "X" and b.legal_actions() == list(range(9))
    for cell in (0, 1, 3, 4, 8, 6):  # X 0 3 8, O 1 4 6: no line
        b = b.play(cell)
    assert str(b) == "XO-|XO-|O-X" and b.to_move == "X" and not b.placing
    moves = {(m.from_index, m.index) for m in b.moves()}
    assert moves == {(8, 5), (8, 7)}  # 0 and 3 are hemmed in; no diagonal steps


def test_nine_holes_moves_to_any_empty_point():
    g = game("nine-holes")
    b = g.parse("XO-|XO-|O-X", to_move="X")
    assert {(m.from_index, m.index) for m in b.moves()} == {
        (f, t) for f in (0, 3, 8) for t in (2, 5, 7)}


def test_diagonals_win_unless_the_variant_says_not():
    text = "X-O|OX-|---"
    assert game().parse(text).play(8).winner() == "X"
    assert game("three-mens-morris-no-diagonals").parse(text).play(8).winner() is None


def test_a_line_wins_in_the_movement_phase():
    g = game()
    b = g.parse("X-X|OXO|--O", to_move="X")
    assert b.play(movement(g, 4, 7)).winner() is None
    won = b.play(movement(g, 4, 1))
    assert won.winner() == "X" and won.is_over() and won.legal_actions() == []
    with pytest.raises(GameOver, match="X has won"):
        won.play(0)


def test_a_side_that_cannot_move_loses():
    g = game("three-mens-morris-no-diagonals")  # with diagonals, O's 2-4-6 would be a line
    stuck = g.parse("XXO|XO-|O--", to_move="X")  # X at 0, 1, 3: every neighbour is taken
    assert stuck.winner() == "O" and stuck.legal_actions() == []
    with pytest.raises(GameOver, match="O has won"):
        stuck.require_playable()
    free = g.parse("XXO|XO-|O--".replace("O--", "-O-"), to_move="X")
    assert free.winner() is None and free.legal_actions()


def test_the_centre_opening_can_be_barred():
    g = game("three-mens-morris-no-centre-opening")
    assert 4 not in g.initial().legal_actions() and len(g.initial().legal_actions()) == 8
    with pytest.raises(IllegalMove, match="first placement may not be the centre"):
        g.initial().play(4)
    assert 4 in g.initial().play(0).legal_actions()  # only the first placement is barred
    with pytest.raises(InvalidBoard, match="may not be the centre"):
        g.parse("---|-X-|---")


# -- the precise errors -----------------------------------------------------------------

@pytest.mark.parametrize(("board", "to_move", "action", "message"), [
    ("XO-|XO-|O-X", "X", 2, "placing a fourth piece: X has all three pieces"),
    ("XO-|---|---", None, (0, 2), "moving during placement: X has placed 1 of 3"),
    ("XO-|XO-|O-X", "X", (1, 2), r"the piece at \(row 0, column 1\) is O's; X is to move"),
    ("XO-|XO-|O-X", "X", (2, 5), r"there is no piece at \(row 0, column 2\)"),
    ("XO-|XO-|O-X", "X", (0, 1), r"point \(row 0, column 1\) is taken"),
    ("XO-|XO-|O-X", "X", (8, 2), r"point \(row 0, column 2\) is not next to \(row 2, column 2"),
    ("XO-|---|---", None, 1, r"point \(row 0, column 1\) is taken"),
    ("XO-|---|---", None, 90, "out of range"),
])
def test_illegal_moves_say_what_is_wrong(board, to_move, action, message):
    g = game()
    b = g.parse(board, to_move=to_move)
    a = action if isinstance(action, int) else movement(g, *action)
    with pytest.raises(IllegalMove, match=message):
        b.play(a)


@pytest.mark.parametrize(("board", "to_move", "message"), [
    ("XO-|XO-|O-X", None, "to_move: required once all six pieces are down"),
    ("XO-|XO-|O-X", "", "to_move: required"),
    ("XO-|---|---", "O", "to_move: 'O' is impossible: pieces are still being placed \\(X has "
     "1, O has 1\\), so X is to move"),
    ("XO-|---|---", "x", "to_move: must be 'X' or 'O'"),
    ("XXX|OO-|O--", "X", "to_move: 'X' is impossible: X has three in a row"),
    ("XXX|OOO|---", "O", "both sides have three in a row"),
    ("XXXX|---|---", None, "row 0 has 4 cells"),
    ("XX-|X-X|---", None, "X has 4 pieces; each side has three"),
    ("OO-|---|---", None, "impossible piece counts: 0 X and 2 O"),
    ("XQ-|---|---", None, "unknown character 'Q' at row 0, column 1"),
    ("XXX|OOO|---" * 5, None, "characters long"),
    ("XX-|X--|OOO", "O", "to_move: 'O' is impossible: O has three in a row"),
])
def test_impossible_positions_are_named(board, to_move, message):
    with pytest.raises(InvalidBoard, match=message):
        game().parse(board, to_move=to_move)


def test_a_won_position_parses_and_is_over():
    b = game().parse("XXX|OO-|---")
    assert b.to_move == "O" and b.winner() == "X"
    with pytest.raises(GameOver, match="X has won"):
        b.require_playable()


def test_an_unreachable_position_is_refused_as_such():
    # X at 0, 1, 3 cannot move, so X cannot have moved last: O is never to move here
    g = game("three-mens-morris-no-diagonals")
    with pytest.raises(InvalidBoard, match="cannot arise in three-mens-morris-no-diagonals"):
        g.parse("XXO|XO-|O--", to_move="O")


# -- the interface: keys, symmetries, text ---------------------------------------------

def random_positions(g: MorrisGame, n: int, seed: int = 0) -> list[MorrisBoard]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        b = g.initial()
        for _ in range(rng.randrange(0, 30)):
            actions = b.legal_actions()
            if not actions:
                break
            b = b.play(rng.choice(actions))
        out.append(b)
    return out


@pytest.mark.parametrize("name", [v.name for v in variants()])
def test_text_round_trips_and_keys_identify_positions(name):
    g = game(name)
    for b in random_positions(g, 150):
        again = g.parse(str(b), to_move=b.to_move)
        assert again == b and again.key == b.key
        assert MorrisBoard(g, b.x, b.o, not b.x_to_move).key != b.key


@pytest.mark.parametrize("name", [STANDARD, "nine-holes-no-diagonals"])
def test_symmetric_images_share_a_canonical_key_and_their_moves_map(name):
    g = game(name)
    for b in random_positions(g, 60, seed=3):
        key, sym = b.canonical()
        for s, perm in enumerate(g.symmetries):
            image = MorrisBoard(g, _move(b.x, perm), _move(b.o, perm), b.x_to_move)
            assert image.canonical()[0] == key
            if s == sym:
                assert image.key == key
            moved = sorted(g.action_symmetries[s][a] for a in b.legal_actions())
            assert moved == image.legal_actions()
            for a in b.legal_actions()[:3]:
                after = b.play(a)
                assert image.play(g.action_symmetries[s][a]) == MorrisBoard(
                    g, _move(after.x, perm), _move(after.o, perm), after.x_to_move)


def _move(mask: int, perm: tuple[int, ...]) -> int:
    return sum(1 << perm[i] for i in range(9) if mask >> i & 1)


def test_moves_carry_their_origin():
    g = game()
    placement = g.move(4)
    assert (placement.index, placement.row, placement.col, placement.from_index) == (4, 1, 1,
                                                                                     None)
    step = g.move(g.action_of(5, 8))
    assert (step.from_index, step.from_row, step.from_col, step.index, step.row, step.col) == (
        8, 2, 2, 5, 1, 2)
    assert str(step) == "(2, 2) -> (1, 2)"
    assert g.split_action(step.action) == (8, 5)


# -- the move notation ------------------------------------------------------------------

def test_moves_from_the_empty_board_reach_the_position():
    g = game()
    b = g.parse_moves("1 2 4, 5 9 7 9-6")
    assert str(b) == "XO-|XOX|O--" and b.to_move == "O"
    assert g.parse_moves("") == g.initial()


@pytest.mark.parametrize(("moves", "error", "message"), [
    ("1 2 4 5 9 7 10", InvalidBoard, r"move 7 \('10'\) is not a point 1-9"),
    ("1 2 4 5 9 7 9_6", InvalidBoard, "is not a point 1-9 or a movement"),
    ("1 2 4 5 9 7 3", IllegalMove, r"move 7 \(3\): placing a fourth piece: X has all three"),
    ("1 2 1-3", IllegalMove, r"move 3 \(1-3\): moving during placement: X has placed 1 of 3"),
    ("1 2 4 5 9 7 2-3", IllegalMove, r"move 7 \(2-3\): the piece at \(row 0, column 1\) is O's"),
    ("1 2 4 5 9 7 9-3", IllegalMove, r"move 7 \(9-3\): point \(row 0, column 2\) is not next"),
    ("1 2 4 5 9 7 9-7", IllegalMove, r"move 7 \(9-7\): point \(row 2, column 0\) is taken"),
    ("1 2 2", IllegalMove, r"move 3 \(2\): point \(row 0, column 1\) is taken"),
    ("5 2 1 3 9 4", IllegalMove, r"move 6 \(4\): the game was already over: X had won"),
])
def test_a_bad_move_is_named_by_its_number(moves, error, message):
    with pytest.raises(error, match=message) as caught:
        game().parse_moves(moves)
    assert caught.value.field == "moves"


def test_the_third_repetition_draws():
    g = game("nine-holes")
    start = "1 2 3 4 5 6"  # X on 1 3 5, O on 2 4 6; then X 1 <-> 8 and O 2 <-> 9, no line
    shuffle = " 1-8 2-9 8-1 9-2"
    g.parse_moves(start + shuffle)  # the start position's second occurrence: on
    with pytest.raises(GameOver, match=r"move 14 .* for the third time") as caught:
        g.parse_moves(start + shuffle * 2)
    assert caught.value.winner is None and caught.value.field == "moves"
    with pytest.raises(IllegalMove, match=r"move 15 .* drawn at move 14"):
        g.parse_moves(start + shuffle * 2 + " 1-7")


def test_a_game_without_move_notation_says_so():
    with pytest.raises(InvalidBoard, match="tictactoe takes a board, not a list of moves"):
        get_game("tictactoe").parse_moves("1 2 3")


def test_a_game_drawn_by_repetition_lists_its_moves_to_the_draw():
    """``parse_game`` takes a game that ends by the draw rule (``parse_moves`` refuses its
    position: there is no move to choose) and refuses a move after it."""
    from gameai.games import GameOver, IllegalMove, get_game

    game = get_game("three-mens-morris")
    drawn = "1 2 4 5 9 7 9-6 5-8 6-9 8-5 9-6 5-8 6-9 8-5"
    actions = game.parse_game(drawn)
    assert len(actions) == 14 and actions[:6] == [0, 1, 3, 4, 8, 6]
    assert actions[6] == game.action_of(5, 8)  # 9-6: from point 9 to point 6
    with pytest.raises(GameOver):
        game.parse_moves(drawn)
    with pytest.raises(IllegalMove, match="move 15"):
        game.parse_game(drawn + " 9-6")
