"""The errors a request can end in, and their one mapping to HTTP and gRPC statuses.

The core raises these (and the game core's :class:`~gameai.games.GameError` family); each
transport turns them into its status exactly once, with :func:`classify`, so REST and
gRPC cannot drift apart:

============================  ====  ====================  ============================
error                         HTTP  gRPC                  when
============================  ====  ====================  ============================
InvalidRequest, InvalidBoard   422  INVALID_ARGUMENT      malformed or impossible input
GameOver                       409  FAILED_PRECONDITION   the board is a finished game
UnknownGame, UnknownModel      404  NOT_FOUND             unknown game, alias or version
RequestTooLarge                413  RESOURCE_EXHAUSTED    too many boards, too many bytes
Busy                           429  RESOURCE_EXHAUSTED    too many batch requests waiting
Unavailable, Loading           503  UNAVAILABLE           store down and nothing cached;
                                                          the version named is loading
Unauthenticated                401  UNAUTHENTICATED       admin route without the token
============================  ====  ====================  ============================
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from gameai.games import GameError, GameOver, InvalidBoard, UnknownGame
from gameai.models import CorruptModel
from gameai.store.errors import AliasRefused, InvalidArgument, StoreUnavailable


class ServiceError(Exception):
    """Base of the server's own errors. ``field`` names the request field at fault."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class InvalidRequest(ServiceError):
    """A request field is missing, of the wrong type or out of range."""


class UnknownModel(ServiceError, LookupError):
    """No such alias or version for the game (or it is not served here)."""


class RequestTooLarge(ServiceError):
    """More boards, or more bytes, than the server accepts in one request."""


class Busy(ServiceError):
    """Too many batch requests are already waiting on this server: retry later."""


class Unavailable(ServiceError):
    """The store cannot be reached and this server holds nothing that could answer."""


class Loading(Unavailable):
    """The version the store names for the request is being loaded: retry in a moment."""


class Unauthenticated(ServiceError):
    """An admin request without the configured bearer token."""


@dataclass(frozen=True)
class Status:
    """How one error is reported: HTTP status, gRPC code, request field and message; for a
    finished game also who won, so a client learns the end from the rules it asked (the web
    board does, for games whose rules it does not know)."""

    http: int
    grpc: grpc.StatusCode
    field: str
    message: str
    retry_after: int | None = None  # seconds a client should wait before trying again
    over: bool = False  # a finished game (GameOver)
    winner: str | None = None  # its winner, "X" or "O"; None for a draw

    @property
    def code_name(self) -> str:
        return self.grpc.name

    def to_json(self) -> dict[str, object]:
        error: dict[str, object] = {"status": self.http, "code": self.code_name,
                                    "field": self.field, "message": self.message}
        if self.over:
            error["winner"] = self.winner
        return {"error": error}

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """gRPC's trailing metadata: the field and, for a finished game, the winner
        (``draw`` for a draw)."""
        if not self.over:
            return (("gameai-field", self.field),)
        return (("gameai-field", self.field), ("gameai-winner", self.winner or "draw"))


_TABLE: tuple[tuple[type[BaseException], int, grpc.StatusCode], ...] = (
    (GameOver, 409, grpc.StatusCode.FAILED_PRECONDITION),
    (UnknownGame, 404, grpc.StatusCode.NOT_FOUND),
    (UnknownModel, 404, grpc.StatusCode.NOT_FOUND),
    (RequestTooLarge, 413, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (Busy, 429, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (Unavailable, 503, grpc.StatusCode.UNAVAILABLE),
    (StoreUnavailable, 503, grpc.StatusCode.UNAVAILABLE),
    (Unauthenticated, 401, grpc.StatusCode.UNAUTHENTICATED),
    (AliasRefused, 409, grpc.StatusCode.FAILED_PRECONDITION),
    (CorruptModel, 409, grpc.StatusCode.FAILED_PRECONDITION),
    (InvalidRequest, 422, grpc.StatusCode.INVALID_ARGUMENT),
    (InvalidArgument, 422, grpc.StatusCode.INVALID_ARGUMENT),
    (InvalidBoard, 422, grpc.StatusCode.INVALID_ARGUMENT),
    (GameError, 422, grpc.StatusCode.INVALID_ARGUMENT),
)
_DEFAULT_FIELD = {GameOver: "board", InvalidBoard: "board", UnknownGame: "game"}
_RETRY_AFTER: dict[type[BaseException], int] = {Loading: 2, Busy: 1, Unavailable: 5,
                                                StoreUnavailable: 5}


def classify(error: BaseException) -> Status | None:
    """The status for an error a request caused, or ``None`` for a bug (a 500)."""
    for kind, http, code in _TABLE:
        if isinstance(error, kind):
            field = getattr(error, "field", "") or _default_field(error)
            message = str(error)
            if field and not message.startswith(f"{field}:"):
                message = f"{field}: {message}"
            if isinstance(error, GameOver):
                return Status(http, code, field, message, over=True, winner=error.winner)
            return Status(http, code, field, message, _RETRY_AFTER.get(type(error)))
    return None


def _default_field(error: BaseException) -> str:
    for kind, field in _DEFAULT_FIELD.items():
        if isinstance(error, kind):
            return field
    return ""
