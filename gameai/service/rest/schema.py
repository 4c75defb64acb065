"""The REST API's documented shapes: request and answer models, and the error answers of
each route. The move routes parse their bodies themselves (see :mod:`gameai.service.rest`); these
models describe them at ``/docs`` and in ``/openapi.json``."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from fastapi import Path
from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

# The game path parameter, with an example so generated API tests reach past the 404.
Game = Annotated[str, Path(examples=["tictactoe"])]


class LevelName(StrEnum):
    """The levels of play, weakest first (docs/levels.md)."""

    # gameai.models.levels.LEVELS, the levels themselves: tests/service/
    # test_generated_client.py holds the two equal

    beginner = "beginner"
    casual = "casual"
    strong = "strong"
    best = "best"


class Side(StrEnum):
    """A player: X moves first."""

    X = "X"
    O = "O"  # noqa: E741  (the player's name)


class Outcome(StrEnum):
    """An exact result under perfect play, for the player named."""

    win = "win"
    draw = "draw"
    loss = "loss"


class LineEnd(StrEnum):
    """How the line the model expects ends."""

    x_wins = "X wins"
    o_wins = "O wins"
    draw = "draw"
    draw_by_repetition = "draw by repetition"
    continues = "continues"


_DEPTH = ("how many plies a model that searches (kind ntuple) looks ahead beyond each "
          "move, alpha-beta over its values; at most the server's GAMEAI_MAX_DEPTH; left "
          "out: the game's default. A model that does not search refuses it")


class MoveRequest(BaseModel):
    # A field a client may leave out, with no null in the schema: the server wants text
    # (or a number) when it is given, so a generated client must not send null.
    board: str | SkipJsonSchema[None] = Field(None, examples=["X--|-O-|---"],
                                              description="required unless moves is given")
    to_move: Side | SkipJsonSchema[None] = Field(
        None, description="'X' or 'O': required where the board does not tell whose turn "
        "it is (morris games once all six pieces are down; GET /v1/games says so in a "
        "game's to_move)")
    moves: str | SkipJsonSchema[None] = Field(
        None, description="instead of board and to_move, for games with a move notation: "
        "the moves from the start ('' is the start position). Gravity games (connect-four): "
        "one column per move from 1 at the left, e.g. '4453'; morris games: e.g. "
        "'5 1 9 3 7 2 9-6' (a placement is its point 1-9 row by row, a movement from-to); "
        "other games' notations: docs/games.md")
    model: str = Field("", description="alias or version number; empty or 'production' "
                       "means the production track with its canary share")
    client_id: str = Field("", description="keys the sticky canary split")


_NODES = ("a node budget for the search of a model that searches: it deepens one ply at a "
          "time up to depth (left out: the server's GAMEAI_MAX_DEPTH) while the budget "
          "lasts, and the deepest depth finished answers. Capped at the server's "
          "GAMEAI_MAX_NODES (the answer's search.limits says what applied). A model that "
          "does not search answers by its values")
_TIME_MS = ("a time budget in milliseconds, as nodes (either or both); capped at the "
            "server's GAMEAI_MAX_TIME_MS")
_TOP = ("also the model's top best moves (1 to 10) in order, each with its value, its exact "
        "outcome and distance where the solver proves the position, and its line")


class SearchedRequest(MoveRequest):
    depth: int | None = Field(None, ge=0, examples=[2], description=_DEPTH)
    nodes: int | SkipJsonSchema[None] = Field(None, ge=1, examples=[100000],
                                              description=_NODES)
    time_ms: int | SkipJsonSchema[None] = Field(None, ge=1, examples=[50],
                                                description=_TIME_MS)


class AnalyzeRequest(SearchedRequest):
    pass


class EvaluateRequest(SearchedRequest):
    top: int | SkipJsonSchema[None] = Field(None, ge=1, le=10, examples=[3],
                                            description=_TOP)


class BestMoveRequest(EvaluateRequest):
    level: LevelName = Field(LevelName.best, examples=["casual"], description="the level "
                             "of play: beginner, casual, strong or best (the model's best "
                             "move; the default); docs/levels.md has each level's policy "
                             "and strength")
    seed: int | None = Field(None, ge=0, le=2**63 - 1, description="makes the level's "
                             "choices repeatable: the same seed, level and position, the "
                             "same move; without one they differ from game to game")
    solve_ms: int | SkipJsonSchema[None] = Field(
        None, ge=0, examples=[100], description="level best only: milliseconds the exact "
        "solver may spend proving this position's optimal moves before the network answers "
        "(at most the server's GAMEAI_MAX_SOLVE_MS); left out: the game's GAMEAI_EXACT_MS "
        "(connect-four: 1); 0: no proof. More time proves more of the middle game and "
        "opening (docs/levels.md, 'A request's own budget')")


class BatchRequest(BaseModel):
    boards: list[str]
    to_move: Side | SkipJsonSchema[None] = Field(
        None, description="'X' or 'O' for every board, where the board does not tell "
        "(morris)")
    model: str = ""
    client_id: str = ""
    include_move_values: bool = False
    depth: int | SkipJsonSchema[None] = Field(
        None, ge=0, examples=[2], description="how many plies a model that searches (kind "
        "ntuple) looks ahead beyond each move, alpha-beta over its values; at most the "
        "server's GAMEAI_MAX_DEPTH, and then at most a tenth of GAMEAI_MAX_BATCH boards. "
        "Left out: the network's own values, no search (unlike evaluate, whose default is "
        "the game's depth). A model that does not search refuses it")
    nodes: int | SkipJsonSchema[None] = Field(
        None, ge=1, description="a node budget for the whole batch: every board is searched "
        "one ply deeper at a time from 0, up to depth (left out: GAMEAI_MAX_DEPTH), while "
        "it lasts; the deepest depth finished for every board answers. Capped at "
        "GAMEAI_MAX_NODES; then at most a tenth of GAMEAI_MAX_BATCH boards")
    time_ms: int | SkipJsonSchema[None] = Field(
        None, ge=1, description="a time budget for the whole batch, as nodes; capped at "
        "GAMEAI_MAX_TIME_MS")


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


class SearchLimitsOut(BaseModel):
    depth: int | None = Field(description="the deepest the search could go (null: the model "
                              "does not search)")
    nodes: int | None = Field(description="the node budget that applied (null: none given)")
    time_ms: int | None = Field(description="the time budget that applied (null: none given)")


class SearchOut(BaseModel):
    """What the query's search used (KataGo's and UCI's report)."""

    depth: int | None = Field(description="the depth the search finished (null: the model "
                              "does not search)")
    nodes: int = Field(description="nodes the search took")
    time_us: int = Field(description="the query's work in microseconds: search, lines and "
                         "solver (a repeated query may be answered from the server's cache: "
                         "the figures are then those of the search that made it)")
    complete: bool = Field(description="whether the search finished the depth it could go "
                           "to (false: the budget stopped it)")
    exact: bool = Field(description="whether the values are proved: the solver proved the "
                        "position, or the search saw the end of every line")
    limits: SearchLimitsOut


class TopMoveOut(MoveValueOut):
    outcome: Outcome | None = Field(None, description="where the solver proved the position: "
                                    "win, draw or loss for the player making the move")
    distance: int | None = Field(None, description="with outcome: plies to the end under "
                                 "perfect play, this move included")
    line: list[MoveOut] = Field(description="the move and what the model expects after it: "
                                "for a model that searches, the line its search valued the "
                                "move by (depth + 1 moves at most); otherwise its best move "
                                "for each side in turn to the end (60 plies at most)")


_TOP_OUT = "with top: the best moves, best first"
_SEARCH_OUT = ("what the search used: present when the request gave depth, nodes, time_ms "
               "or top")


class BestMoveOut(BaseModel):
    game: str
    model_version: int
    move: MoveOut
    value: float = Field(description="the model's value of the move played (at level best, "
                         "the position's value)")
    level: LevelName = Field(description="the level that chose the move")
    depth: int | None = Field(None, description="the search's depth (models that search)")
    top: list[TopMoveOut] | None = Field(None, description=_TOP_OUT + " (the move played "
                                         "may be another, at a level that draws)")
    search: SearchOut | None = Field(None, description=_SEARCH_OUT)
    exact: bool = Field(False, description="true when the move is optimal by the solver's "
                        "proof (level best, where the game has a solver budget: "
                        "docs/levels.md); false when it is the network's move")


class EvaluateOut(BaseModel):
    game: str
    model_version: int
    to_move: Side
    value: float
    moves: list[MoveValueOut]
    board: str | None = Field(None, description="the position answered, when the request "
                              "gave moves")
    depth: int | None = Field(None, description="the search's depth (models that search)")
    top: list[TopMoveOut] | None = Field(None, description=_TOP_OUT)
    search: SearchOut | None = Field(None, description=_SEARCH_OUT)


class HintOut(MoveValueOut):
    outcome: Outcome | None = Field(None, description="where the game has an exact solver: "
                                "win, draw or loss for the player making the move, under "
                                "perfect play")
    distance: int | None = Field(None, description="with outcome: plies to the end under "
                                 "perfect play, this move included")


class AnalyzeOut(BaseModel):
    game: str
    model_version: int
    to_move: Side
    value: float = Field(description="the model's value of the position")
    outcome: Outcome | None = Field(description="the position's exact outcome for the side to "
                                "move (null when unsolved)")
    distance: int | None = Field(description="plies to the end under perfect play")
    unsolved: str | None = Field(None, description="why there are no exact figures, when "
                                 "there are none")
    moves: list[HintOut] = Field(description="every legal move, the model's best first")
    line: list[MoveValueOut] = Field(description="the line the model expects: its best "
                                     "move for each side in turn, to_move first")
    line_end: LineEnd = Field(description="X wins, O wins, draw, draw by repetition or "
                          "continues (60 plies shown at most)")
    board: str | None = Field(None, description="the position answered, when the request "
                              "gave moves")
    depth: int | None = Field(None, description="the search's depth (models that search)")
    search: SearchOut | None = Field(None, description=_SEARCH_OUT + " (exact also when the "
                                     "solver proved the position)")


class LevelOut(BaseModel):
    name: LevelName
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
    default: LevelName
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
    to_move: list[Side]
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
    depth: int | None = Field(None, description="the search's depth, when the request gave "
                              "one")
    search: SearchOut | None = Field(None, description="what the batch's search used, when "
                                     "the request gave depth, nodes or time_ms")


class Judgment(StrEnum):
    """What a reviewed move was: by the loss in the model's value (best: none; good: below
    0.1; inaccuracy: below 0.2; mistake: below 0.3; blunder: 0.3 or more) or, where the
    solver proves it, what it did to the exact outcome."""

    best = "best"
    good = "good"
    inaccuracy = "inaccuracy"
    mistake = "mistake"
    blunder = "blunder"
    throws_away_win = "throws_away_win"
    walks_into_loss = "walks_into_loss"


class ReviewRequest(BaseModel):
    moves: str | SkipJsonSchema[None] = Field(
        None, examples=["4453"], description="the game in its move notation, for games "
        "that have one (connect-four: columns from 1, '4453'; morris: '5 1 9 3 7 2 9-6')")
    actions: list[int] | SkipJsonSchema[None] = Field(
        None, examples=[[4, 0, 8]], description="instead of moves, any game: the moves as "
        "action ids from the start (a placement on cell c = row * cols + col is c; a "
        "movement from f to t is cells + f * cells + t)")
    model: str = Field("", description="alias or version number, as for best-move")
    client_id: str = Field("", description="keys the sticky canary split")
    depth: int | SkipJsonSchema[None] = Field(None, ge=0, examples=[2], description=_DEPTH)
    solve_ms: int | SkipJsonSchema[None] = Field(
        None, ge=0, examples=[100], description="milliseconds the exact solver may spend on "
        "the whole review, from the last ply back (at most the server's "
        "GAMEAI_MAX_SOLVE_MS); left out: 100; 0: no exact figures")
    nodes: int | SkipJsonSchema[None] = Field(
        None, ge=1, description="a node budget for the model's search over the whole game: "
        "the plies still to search share what is left evenly, each deepening up to depth "
        "(left out: GAMEAI_MAX_DEPTH) within its share; capped at GAMEAI_MAX_NODES")
    time_ms: int | SkipJsonSchema[None] = Field(
        None, ge=1, description="a time budget for the model's search over the whole game, "
        "as nodes; capped at GAMEAI_MAX_TIME_MS")


class ExactOut(BaseModel):
    before: Outcome = Field(description="the position's exact outcome for the mover")
    distance_before: int
    after: Outcome = Field(description="the move's exact outcome for the mover")
    distance_after: int
    optimal: bool = Field(description="whether the move played was optimal")


class ReviewedPlyOut(BaseModel):
    ply: int = Field(description="from 1")
    side: Side
    move: MoveValueOut = Field(description="the move played, with the model's value of it")
    value_before: float = Field(description="the model's value of the position for the "
                                "mover (its best move's value)")
    value_after: float = Field(description="the model's value of the move played")
    loss: float = Field(description="value_before - value_after")
    best: MoveValueOut = Field(description="the model's best move")
    judgment: Judgment
    exact: ExactOut | None = Field(None, description="where the solver proved the position "
                                   "within the budget")
    depth: int | None = Field(None, description="with a node or time budget: the depth this "
                              "ply's values come from")


class SideSummaryOut(BaseModel):
    side: Side
    moves: int
    best: int
    good: int
    inaccuracy: int
    mistake: int
    blunder: int
    throws_away_win: int
    walks_into_loss: int
    mean_loss: float


class ReviewOut(BaseModel):
    game: str
    model_version: int
    depth: int | None = Field(None, description="the search's depth (models that search)")
    result: LineEnd = Field(description="how the game stands after the last move")
    solve_ms: int = Field(description="the solver's budget")
    solve_ms_used: int
    proved: int = Field(description="plies with exact figures")
    plies: list[ReviewedPlyOut]
    sides: list[SideSummaryOut]
    search: SearchOut | None = Field(None, description="with a node or time budget, what the "
                                     "search used: depth is the shallowest any ply finished, "
                                     "nodes and time_us the whole review's; exact when every "
                                     "ply is proved")


class Priority(StrEnum):
    """Interactive work goes before background work on a server."""

    interactive = "interactive"
    background = "background"


class StreamRequest(MoveRequest):
    depth: int | SkipJsonSchema[None] = Field(
        None, ge=0, examples=[3], description="the deepest model search: one update per "
        "depth from 1 (a model that does not search: one update); left out: the game's "
        "default")
    time_ms: int | SkipJsonSchema[None] = Field(
        None, ge=0, examples=[2000], description="milliseconds the solver may spend (at "
        "most GAMEAI_MAX_SOLVE_MS); left out: 10000; 0: the model's values only")
    nodes: int | SkipJsonSchema[None] = Field(
        None, ge=1, description="a node budget for the model phase (capped at "
        "GAMEAI_MAX_NODES): from depth 0, each depth searched in full; a depth that would "
        "pass it is abandoned and the phase ends there; left out: the depths only")
    priority: Priority = Field(Priority.interactive, description="background work waits "
                               "while interactive work waits")


class Phase(StrEnum):
    """A streamed update's step: the model's values at one more depth, what the solver
    proved so far, or the last update."""

    model = "model"
    solver = "solver"
    done = "done"


class BoundOut(MoveValueOut):
    at_least: Outcome | None = Field(None, description="what the solver proved: the move's "
                                     "outcome for the mover at least (absent: nothing yet)")
    at_most: Outcome | None = Field(None, description="... and at most")
    exact: bool | None = Field(None, description="at_least and at_most meet")
    distance: int | None = Field(None, description="plies to the end under perfect play, "
                                 "where known")


class StreamUpdate(BaseModel):
    """One event of POST /v1/games/{game}/analyze/stream (its data, as JSON)."""

    phase: Phase
    game: str
    model_version: int
    to_move: Side
    best: BoundOut = Field(description="the best move so far")
    moves: list[BoundOut]
    elapsed_ms: int
    nodes: int = Field(description="the solver's nodes for this stream so far")
    proved: bool
    depth: int | None = Field(None, description="model phase: the depth done")
    outcome: Outcome | None = Field(None, description="proved: the position's outcome for "
                                    "the side to move")
    distance: int | None = None
    reason: str | None = Field(None, description="done: why it stopped")
    board: str | None = Field(None, description="the position, when the request gave moves")
    model_nodes: int | None = Field(None, description="with a node budget: the nodes of "
                                    "the model phase's depths finished so far")


# What each Server-Sent Event of a stream is (schemathesis checks every event against it):
# the event's name and its data, a StreamUpdate as JSON (an error event: an ErrorOut).
STREAM_EVENT = {
    "type": "object", "required": ["event", "data"],
    "properties": {
        "event": {"type": "string", "enum": ["model", "solver", "done", "error"]},
        "data": {"type": "string", "contentMediaType": "application/json",
                 "contentSchema": {"anyOf": [{"$ref": "#/components/schemas/StreamUpdate"},
                                             {"$ref": "#/components/schemas/ErrorOut"}]}}}}


class ErrorCode(StrEnum):
    """The gRPC status name of an error (``code`` of every error answer)."""

    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    FAILED_PRECONDITION = "FAILED_PRECONDITION"
    NOT_FOUND = "NOT_FOUND"
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"
    UNAVAILABLE = "UNAVAILABLE"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    UNIMPLEMENTED = "UNIMPLEMENTED"
    UNKNOWN = "UNKNOWN"


class ErrorDetail(BaseModel):
    status: int
    code: ErrorCode = Field(description="the gRPC status name of the same error")
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
    429: "too many requests of its priority class are waiting on this server: retry later",
    422: "a field is missing, mistyped or impossible; the body is not JSON",
    503: "the store is unreachable and this server does not hold the version",
}
MOVE_ERRORS = _errors(404, 409, 413, 422, 503)
BATCH_ERRORS = _errors(404, 409, 413, 422, 429, 503)
MODEL_ERRORS = _errors(404, 422, 503)
REVIEW_ERRORS = _errors(404, 413, 422, 429, 503)
ANALYZE_ERRORS = _errors(404, 409, 413, 422, 429, 503)
ADMIN_ERRORS = _errors(400, 401, 404, 409, 413, 422, 503)
