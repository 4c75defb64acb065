from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gameai.games import GameOver, TooLarge, get_game
from gameai.games.mnk.board import Board
from gameai.games.mnk.solver import game_table, solve

from .strategies import boards

TTT = get_game("tictactoe")


def test_tictactoe_is_a_draw():
    solution = solve(Board.empty(TTT))
    assert solution.value == 0 and solution.outcome == "draw" and solution.distance == 9
    assert len(solution.optimal_moves) == 9  # every opening draws with perfect play


@pytest.mark.slow
def test_four_in_a_row_is_a_draw_over_all_its_positions():
    table = game_table(get_game("four-in-a-row"))
    assert len(table) == 1_217_977
    assert solve(Board.empty(get_game("four-in-a-row"))).value == 0


@pytest.mark.parametrize(
    ("pattern", "value", "optimal"),
    [
        ("OX-|-X-|O--", 1, {7}),  # seed 000, question 3: win at once in the bottom middle
        ("XO-|-O-|--X", 0, {7}),  # seed 000, question 4: block the bottom middle
        ("X--|---|---", 0, {4}),  # a corner opening must be answered in the centre
        ("----|----|----|----", 0, None),
    ],
)
def test_known_positions(pattern, value, optimal):
    game = TTT if len(pattern) == 11 else get_game("four-in-a-row")
    solution = solve(Board.parse(game, pattern))
    assert solution.value == value
    if optimal is not None:
        assert set(solution.optimal_moves) == optimal


def test_faster_win_is_preferred():
    # X can win now at cell 2 or later via cell 6: only the immediate win is optimal.
    solution = solve(Board.parse(TTT, "XX-|OO-|---"))
    assert solution.optimal_moves == (2,)
    assert solution.moves[0].distance == 1


def test_finished_and_oversized_positions_are_refused():
    with pytest.raises(GameOver):
        solve(Board.parse(TTT, "XXX|OO-|---"))
    with pytest.raises(TooLarge):
        solve(Board.empty(get_game("mnk-8x8-5")), limit=10_000)  # past tables and search


@cache
def _minimax(board: Board) -> tuple[int, int]:
    """(value, plies to the end) by plain recursion: the reference the solver must match."""
    if board.winner():
        return -1, 0
    if board.is_full():
        return 0, 0
    best: tuple[int, int] | None = None
    for move in board.legal_moves():
        v, d = _minimax(board.play(move))
        cand = (-v, d + 1)
        if best is None or _better(cand, best):
            best = cand
    assert best is not None
    return best


def _better(a: tuple[int, int], b: tuple[int, int]) -> bool:
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1] if a[0] > 0 else a[1] > b[1] if a[0] < 0 else False


@settings(max_examples=60, deadline=None)
@given(boards(["tictactoe", "mnk-3x4-3", "connect-4x4-3", "mnk-2x4-2"], playable=True))
def test_solver_matches_plain_minimax(board):
    solution = solve(board)
    value, distance = _minimax(board)
    assert solution.value == value
    if value != 0:
        assert solution.distance == distance
    for m in solution.moves:
        child_value, _child_distance = _minimax(board.play(m.move))
        assert {"win": 1, "draw": 0, "loss": -1}[m.outcome] == -child_value


@settings(max_examples=40, deadline=None)
@given(boards(["tictactoe", "mnk-3x4-3"], playable=True), st.data())
def test_symmetric_boards_have_the_same_value(board, data):
    sym = data.draw(st.integers(0, len(board.game.symmetries) - 1))
    a, b = solve(board), solve(board.transformed(sym))
    assert (a.value, a.distance) == (b.value, b.distance)
    perm = board.game.symmetries[sym]
    assert {perm[m] for m in a.optimal_moves} == set(b.optimal_moves)
