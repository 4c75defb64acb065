"""Named errors of the game core.

Every error a caller can cause is one of these. They subclass ``ValueError`` so that
plain Python callers can catch them broadly, and each transport (CLI, REST, gRPC) maps
them to its own status once, at its edge.
"""

from __future__ import annotations


class GameError(ValueError):
    """Base class of every error the game core raises for bad input.

    Attributes:
        field: the request field at fault, where the core knows it (``to_move``,
            ``moves``, ``boards[3]``); empty otherwise, and each transport names its own.
    """

    field: str = ""


class UnknownGame(GameError):
    """The game name names no game we know and matches no ``mnk-RxC-K`` form."""


class InvalidBoard(GameError):
    """A board that cannot occur in the game: malformed text or an impossible position.

    Attributes:
        reason: the problem in one sentence, without the board itself.
        field: the request field at fault when it is not the board itself (``to_move``).
    """

    def __init__(self, reason: str, *, field: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        if field is not None:
            self.field = field


class GameOver(GameError):
    """The position is a finished game, so there is no move to choose.

    Attributes:
        winner: ``"X"``, ``"O"``, or ``None`` for a draw.
    """

    def __init__(self, winner: str | None, *, why: str = "") -> None:
        what = f"{winner} has won" if winner else why or "the board is full (a draw)"
        super().__init__(f"the game is over: {what}")
        self.winner = winner


class IllegalMove(GameError):
    """A move the rules forbid here: to an occupied cell, off the board, not the lowest empty
    cell of a column (gravity), or for pieces that move, placing a fourth piece, moving
    during placement, moving the opponent's piece or to a point that is not next to it."""


class TooLarge(GameError):
    """The exact solver cannot enumerate the positions below this one within its limit."""
