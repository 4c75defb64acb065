"""The rules of m,n,k games (and gravity variants), keys, the exact solver and statistics.

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
from gameai.games.game import Game, get_game, known_games
from gameai.games.keys import base3_key, canonical, canonical_key

__all__ = [
    "Board",
    "Game",
    "GameError",
    "GameOver",
    "IllegalMove",
    "InvalidBoard",
    "TooLarge",
    "UnknownGame",
    "base3_key",
    "canonical",
    "canonical_key",
    "get_game",
    "known_games",
]
