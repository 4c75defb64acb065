"""The REST API's documented shapes: request and answer models, and the error answers of
each route. The move routes parse their bodies themselves (see :mod:`gameai.service.rest`); these
models describe them at ``/docs`` and in ``/openapi.json``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path
from pydantic import BaseModel, Field

# The game path parameter, with an example so generated API tests reach past the 404.
Game = Annotated[str, Path(examples=["tictactoe"])]


_DEPTH = ("how many plies a model that searches (kind ntuple) looks ahead beyond each "
          "move, alpha-beta over its values; at most the server's GAMEAI_MAX_DEPTH; left "
          "out: the game's default. A model that does not search refuses it")


class MoveRequest(BaseModel):
    board: str = Field(examples=["X--|-O-|---"], description="required unless moves is given")
    to_move: str = Field("", description="'X' or 'O': required where the board does not tell "
                         "whose turn it is (morris games once all six pieces are down; GET "
                         "/v1/games says so in a game's to_move)")
    moves: str = Field("", description="instead of board and to_move, for games with a move "
                       "notation: the moves from the start. Gravity games (connect-four): one "
                       "column per move from 1 at the left, e.g. '4453'; morris games: e.g. "
                       "'5 1 9 3 7 2 9-6' (a placement is its point 1-9 row by row, a "
                       "movement from-to); other games' notations: docs/games.md")
    model: str = Field("", description="alias or version number; empty or 'production' "
                       "means the production track with its canary share")
    client_id: str = Field("", description="keys the sticky canary split")


class BestMoveRequest(MoveRequest):
    level: str = Field("best", examples=["casual"], description="the level of play: "
                       "beginner, casual, strong or best (the model's best move; the "
                       "default); docs/levels.md has each level's policy and strength")
    seed: int | None = Field(None, ge=0, le=2**63 - 1, description="makes the level's "
                             "choices repeatable: the same seed, level and position, the "
                             "same move; without one they differ from game to game")
    depth: int | None = Field(None, ge=0, examples=[2], description=_DEPTH)


class EvaluateRequest(MoveRequest):
    depth: int | None = Field(None, ge=0, examples=[2], description=_DEPTH)


class BatchRequest(BaseModel):
    boards: list[str]
    to_move: str = Field("", description="'X' or 'O' for every board, where the board does "
                         "not tell (morris)")
    model: str = ""
    client_id: str = ""
    include_move_values: bool = False


class AliasRequest(BaseModel):
    version: int
    pin: bool = Field(True, description="moving production pins it: the trainer's automatic "
                      "promotion holds off until DELETE /v1/games/{game}/pin")


class CanaryRequest(BaseModel):
    version: int | None = None
    weight: int


class PointOut(BaseModel):
    row: int
    col: int
    index: int


class MoveOut(PointOut):
    from_: PointOut | None = Field(None, alias="from", description="where a moving piece "
                                   "comes from (games whose pieces move); absent for a "
                                   "placement")


class MoveValueOut(MoveOut):
    value: float
    unknown: bool = Field(False, description="present (true) only when the model has no "
                          "value for this move: value is then 0 as a stand-in, never a draw")


class BestMoveOut(BaseModel):
    game: str
    model_version: int
    move: MoveOut
    value: float = Field(description="the model's value of the move played (at level best, "
                         "the position's value)")
    level: str = Field(description="the level that chose the move")
    depth: int | None = Field(None, description="the search's depth (models that search)")


class EvaluateOut(BaseModel):
    game: str
    model_version: int
    to_move: str
    value: float
    moves: list[MoveValueOut]
    board: str | None = Field(None, description="the position answered, when the request "
                              "gave moves")
    depth: int | None = Field(None, description="the search's depth (models that search)")


class HintOut(MoveValueOut):
    outcome: str | None = Field(None, description="where the game has an exact solver: "
                                "win, draw or loss for the player making the move, under "
                                "perfect play")
    distance: int | None = Field(None, description="with outcome: plies to the end under "
                                 "perfect play, this move included")


class AnalyzeOut(BaseModel):
    game: str
    model_version: int
    to_move: str
    value: float = Field(description="the model's value of the position")
    outcome: str | None = Field(description="the position's exact outcome for the side to "
                                "move (null when unsolved)")
    distance: int | None = Field(description="plies to the end under perfect play")
    unsolved: str | None = Field(None, description="why there are no exact figures, when "
                                 "there are none")
    moves: list[HintOut] = Field(description="every legal move, the model's best first")
    line: list[MoveValueOut] = Field(description="the line the model expects: its best "
                                     "move for each side in turn, to_move first")
    line_end: str = Field(description="X wins, O wins, draw, draw by repetition or "
                          "continues (60 plies shown at most)")
    board: str | None = Field(None, description="the position answered, when the request "
                              "gave moves")
    depth: int | None = Field(None, description="the search's depth (models that search)")


class LevelOut(BaseModel):
    name: str
    blunder: float = Field(description="probability of a uniformly random legal move")
    temperature: float = Field(description="otherwise a move is drawn with probability "
                               "proportional to exp(value / temperature); 0: the top move")
    takes_wins: bool = Field(description="a win in one is always played")
    description: str
    summary: str | None = Field(None, description="the measured strength in words")
    calibration: dict[str, Any] | None = Field(
        None, description="gameai bench levels' figures: against perfect and random play, "
        "as X and as O, win/draw/loss rates with 95% intervals; and the mean score")


class LevelsOut(BaseModel):
    game: str
    default: str
    levels: list[LevelOut] = Field(description="from the weakest to the strongest")
    calibration: dict[str, Any] | None = Field(
        None, description="how the figures were measured: model, games, seed, load, the "
        "order check; null where the game has not been calibrated")
    calibration_applies: bool = Field(
        False, description="whether the figures were measured with the version served now; "
        "when false each level's summary says which model they belong to")
    served_version: int | None = Field(None, description="the production version served")
    served_strength: str | None = Field(
        None, description="the served version's own judged figures (opponent, games, "
        "won/drawn/lost, score interval), where its trainer judged it")


class BatchOut(BaseModel):
    """Column by column: entry ``i`` of every list answers ``boards[i]``."""

    game: str
    model_version: int
    to_move: list[str]
    value: list[float]
    move_row: list[int]
    move_col: list[int]
    move_index: list[int]
    move_values: list[list[float | None]] | None = Field(
        None, description="with include_move_values: per board, every cell's value "
        "row-major, null where the move is illegal (games whose pieces move: every "
        "action's value, by action id)")
    move_from_index: list[int] | None = Field(
        None, description="games whose pieces move: where each best move comes from, -1 "
        "for a placement")
    actions: int | None = Field(None, description="games whose pieces move: values per board "
                                "in move_values")


class ErrorDetail(BaseModel):
    status: int
    code: str = Field(description="the gRPC status name of the same error")
    field: str = Field(description="the request field at fault")
    message: str = Field(description="starts with the field")


class ErrorOut(BaseModel):
    """Every error answer: docs/api.md has the table."""

    error: ErrorDetail


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": ErrorOut, "description": _ERROR_TEXT[status]}
            for status in statuses}


_ERROR_TEXT = {
    400: "the body could not be read",
    401: "no valid bearer token",
    404: "unknown game, alias or version, or a game not served here",
    409: "the board is a finished game (or, for admin changes, the store refused it)",
    413: "more bytes or boards than the server accepts",
    429: "too many batch requests are waiting on this server: retry later",
    422: "a field is missing, mistyped or impossible; the body is not JSON",
    503: "the store is unreachable and this server does not hold the version",
}
MOVE_ERRORS = _errors(404, 409, 413, 422, 503)
BATCH_ERRORS = _errors(404, 409, 413, 422, 429, 503)
MODEL_ERRORS = _errors(404, 422, 503)
ADMIN_ERRORS = _errors(400, 401, 404, 409, 413, 422, 503)
