"""The game interface and its families, keys, the exact solvers and statistics.

Families: m,n,k games (tic-tac-toe, four-in-a-row, Connect Four with gravity) and morris
games (Three Men's Morris and its variants: pieces that move). Everything outside this
package works through :class:`Game` and :class:`State` (:mod:`gameai.games.interface`).
Pure: no I/O except the solver's optional disk cache.
"""

from gameai.games.board import Board
from gameai.games.errors import (
    GameError,
    GameOver,
    IllegalMove,
    InvalidBoard,
    TooLarge,
    UnknownGame,
)
from gameai.games.game import MnkGame, get_game, get_mnk_game, known_games
from gameai.games.interface import Game, Move, State
from gameai.games.keys import base3_key, canonical, canonical_key
from gameai.games.morris import MorrisBoard, MorrisGame

__all__ = [
    "Board",
    "Game",
    "GameError",
    "GameOver",
    "IllegalMove",
    "InvalidBoard",
    "MnkGame",
    "MorrisBoard",
    "MorrisGame",
    "Move",
    "State",
    "TooLarge",
    "UnknownGame",
    "base3_key",
    "canonical",
    "canonical_key",
    "get_game",
    "get_mnk_game",
    "known_games",
]
