"""The walkers by name, and the one a game asks for.

A game says how self-play can move through its positions (:attr:`gameai.games.Game.walker`):
this module maps that name to the walker, so nothing here asks which family a game is.
"""

from __future__ import annotations

from gameai.games import Game
from gameai.trainer.walkers.bitboard import BitboardWalker
from gameai.trainer.walkers.interface import Walker
from gameai.trainer.walkers.position_graph import PositionGraphWalker

WALKERS: dict[str, type[Walker]] = {w.method: w for w in (BitboardWalker, PositionGraphWalker)}


def walker_type(game: Game, method: str | None = None) -> type[Walker]:
    """The walker ``game`` asks for (or the one named ``method``).

    Raises:
        ValueError: no walker has that name.
    """
    name = method or game.walker
    try:
        return WALKERS[name]
    except KeyError:
        raise ValueError(f"{game.name} is played by the walker {name!r}, which the learners "
                         f"do not have (they have {', '.join(WALKERS)})") from None


def walker_for(game: Game, *, symmetric: bool, method: str | None = None) -> Walker:
    """A new walker for ``game``; ``symmetric``: afterstate keys shared by symmetric images.

    Raises:
        ValueError: no walker of that name, or the walker cannot play ``game`` (a board
            without 64-bit keys, a state graph over the memory limit...).
    """
    return walker_type(game, method)(game, symmetric=symmetric)
