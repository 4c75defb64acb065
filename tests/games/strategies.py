"""Hypothesis strategies for boards: random legal play from the empty board."""

from __future__ import annotations

from hypothesis import strategies as st

from gameai.games import Game, get_game
from gameai.games.mnk.board import Board

SMALL_GAMES = ["tictactoe", "four-in-a-row", "mnk-3x4-3", "mnk-4x5-4", "connect-4x5-4",
               "connect-four", "mnk-2x3-2"]


@st.composite
def boards(draw: st.DrawFn, games: list[str] | None = None, *, playable: bool = False) -> Board:
    """A board reached by random legal moves; ``playable`` boards are not finished."""
    game: Game = get_game(draw(st.sampled_from(games or SMALL_GAMES)))
    board = Board.empty(game)
    plies = draw(st.integers(min_value=0, max_value=game.cells))
    for _ in range(plies):
        moves = board.legal_moves()
        if not moves:
            break
        nxt = board.play(draw(st.sampled_from(moves)))
        if playable and nxt.is_over():
            break
        board = nxt
    return board
