"""The game interface, its families and the exact solvers.

Everything outside this package works through :class:`Game` and :class:`State`
(:mod:`gameai.games.interface`) and finds games by name with :func:`get_game`
(:mod:`gameai.games.registry`, the one module that knows every family). Families:
m,n,k games (:mod:`gameai.games.mnk`: tic-tac-toe, four-in-a-row, Connect Four with
gravity), morris games (:mod:`gameai.games.morris`: pieces that move), and any family
another distribution registers through the ``gameai.games`` entry point.
"""

from gameai.games.errors import (
    GameError,
    GameOver,
    IllegalMove,
    InvalidBoard,
    TooLarge,
    UnknownGame,
)
from gameai.games.interface import Game, Move, MoveOutcome, OptimalMoves, Solution, State
from gameai.games.registry import get_game, known_games

__all__ = [
    "Game",
    "GameError",
    "GameOver",
    "IllegalMove",
    "InvalidBoard",
    "Move",
    "MoveOutcome",
    "OptimalMoves",
    "Solution",
    "State",
    "TooLarge",
    "UnknownGame",
    "get_game",
    "known_games",
]
