"""What the server answers, as plain functions both transports call.

Each function takes the :class:`~gameai.service.registry.Registry` and the request's fields and
returns a plain record, or raises a named error (``gameai.service.errors`` and the game core's);
REST and gRPC only translate. A request is checked in this order: game, model, board, then
the level of play and its seed.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from gameai.games import Game, OptimalMoves, State
from gameai.games.interface import Solution
from gameai.models import Evaluation, MoveValue, NtupleModel
from gameai.models.info import describe_judged, same_model
from gameai.models.levels import (
    DEFAULT_LEVEL,
    LEVELS,
    SEED_MAX,
    Level,
    UnknownLevel,
    choose,
    level_named,
    seeded,
    unseeded,
)
from gameai.models.model import valued_move
from gameai.service.analysis import Analysis
from gameai.service.analysis import analyze as hints
from gameai.service.batch import best_moves, require_text
from gameai.service.calibration import load_calibration
from gameai.service.errors import InvalidRequest, RequestTooLarge, UnknownModel
from gameai.service.exact import ExactPlay
from gameai.service.registry import Registry, Served
from gameai.service.search import (
    MAX_DEPTH,
    MAX_NODES,
    MAX_SOLVE_MS,
    MAX_TIME_MS,
    Budget,
    SearchUsed,
    budget,
    check_solve_ms,
    check_top,
    reached_depth,
    report_search,
)
from gameai.service.session import VALUE_DECIMALS, ModelSession, Position
from gameai.service.top import TopMove
from gameai.store import (
    AliasChange,
    Pin,
    ShadowReport,
    StoreUnavailable,
    UnknownVersion,
    VersionRecord,
    is_number,
)

MAX_TEXT = 200  # longest game name, model reference or client id accepted
SEARCHED_BATCH_SHARE = 10  # a batch with a depth takes a tenth of the boards of one without
_ALIAS = re.compile(r"[a-z][a-z0-9_-]{0,31}")


@dataclass(frozen=True)
class MoveAnswer:
    game: str
    version: int
    move: MoveValue
    value: float  # the model's value of the move played (at best: the position's value);
    # where the move is exact, its proved value (1 a win for the mover, 0 a draw, -1 a loss)
    board: str | None = None  # the position answered, when the request gave moves
    level: str = DEFAULT_LEVEL
    depth: int | None = None  # the search's depth, for a model that searches
    top: tuple[TopMove, ...] | None = None  # the best moves with their lines, when asked
    search: SearchUsed | None = None  # what the search used, when the query gave a depth,
    # a budget or top
    exact: bool = False  # the move is optimal by the solver's proof (level best only)


@dataclass(frozen=True)
class EvaluateAnswer:
    game: str
    version: int
    evaluation: Evaluation
    board: str | None = None  # the position answered, when the request gave moves
    depth: int | None = None  # the search's depth, for a model that searches
    top: tuple[TopMove, ...] | None = None
    search: SearchUsed | None = None


@dataclass(frozen=True)
class AnalyzeAnswer:
    game: str
    version: int
    analysis: Analysis
    board: str | None = None  # the position answered, when the request gave moves
    depth: int | None = None  # the search depth of a model that searches
    search: SearchUsed | None = None


@dataclass(frozen=True)
class LevelsAnswer:
    game: str
    levels: tuple[Level, ...]
    calibration: dict[str, Any] | None  # ``gameai bench levels``' report, if measured
    served_version: int | None = None  # production as this server holds it
    served_strength: str | None = None  # its own judged figures, in words
    # whether the calibration measured the served version (else it names another model)
    calibration_applies: bool = False


@dataclass(frozen=True)
class BatchAnswer:
    """Row ``i`` answers ``boards[i]``; ``move_values`` only when asked for. ``best`` holds
    action ids; ``best_from`` and ``best_to`` split them (``best_from`` -1 for a
    placement)."""

    game: Game
    version: int
    to_move: list[str]
    values: npt.NDArray[np.float64]
    best: npt.NDArray[np.intp]
    move_values: npt.NDArray[np.float64] | None
    depth: int | None = None  # the search's depth, when the request gave one
    search: SearchUsed | None = None  # what it used, when the request gave a depth or budget

    @property
    def best_from(self) -> npt.NDArray[np.int64]:
        return self.game.split_actions(self.best)[0]

    @property
    def best_to(self) -> npt.NDArray[np.int64]:
        return self.game.split_actions(self.best)[1]

    @property
    def moves_pieces(self) -> bool:
        """Whether the game's actions include movements (the answer then carries origins
        and a value per action rather than per cell)."""
        return self.game.num_actions > self.game.cells


@dataclass(frozen=True)
class GameSummary:
    game: Game
    aliases: dict[str, int]
    canary_weight: int
    loaded_versions: list[int]
    ready: bool
    pin: Pin | None = None
    shadow_share: int = 0


@dataclass(frozen=True)
class ModelSummary:
    """One version's metadata as the API shows it."""

    game: str
    version: int
    record: VersionRecord
    aliases: list[str]
    loaded: bool

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "version": self.version, **self.record.to_json(),
                "aliases": self.aliases, "loaded": self.loaded,
                "params": self.record.info.get("params", {})}


@dataclass(frozen=True)
class ModelListing:
    game: str
    versions: list[ModelSummary]
    aliases: dict[str, int]
    canary_weight: int
    pin: Pin | None = None  # an operator's pin on production
    shadow_share: int = 0  # percent of production's best-move queries mirrored to shadow
    shadow: ShadowReport | None = None  # what shadowing found against production

    def shadow_json(self) -> dict[str, Any] | None:
        """The shadow test as the listing shows it (``None``: no shadow alias)."""
        version = self.aliases.get("shadow")
        if version is None:
            return None
        report = self.shadow or ShadowReport(self.game, version,
                                             self.aliases.get("production") or 0)
        return {"version": version, "share": self.shadow_share, **report.to_json(),
                "summary": report.describe()}


# -- moves -------------------------------------------------------------------------------

def best_move(registry: Registry, *, game: str, board: str = "", model: str = "",
              client_id: str = "", to_move: str = "", moves: object = None, level: object = "",
              seed: object = None, depth: object = None, top: object = None,
              nodes: object = None, time_ms: object = None, solve_ms: object = None,
              max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
              max_time_ms: int = MAX_TIME_MS, max_solve_ms: int = MAX_SOLVE_MS) -> MoveAnswer:
    """The move ``level`` (:mod:`gameai.models.levels`; ``best`` by default) plays for the side to
    move on ``board`` (with ``to_move`` where the game needs it), or after the move list
    ``moves``, by the answering version's values. A ``seed`` makes the level's draws
    repeatable: the same seed, level and position, the same move. ``depth``: how far a
    model that searches looks ahead (at most ``max_depth``; its game's default if None);
    ``nodes`` and ``time_ms`` bound that search (:func:`budget`). ``top``: also the model's
    ``top`` best moves with their lines (:mod:`gameai.service.top`). ``solve_ms``, at level
    best only: the solver's budget for this request instead of the game's
    (``GAMEAI_EXACT_MS``), at most ``max_solve_ms``; 0: no proof, the network's move.

    Raises:
        InvalidRequest: a bad field (named), or ``solve_ms`` at a level that never asks
            the solver.
    """
    started = time.perf_counter()
    loaded = _pick(registry, game, model, client_id)
    limits = budget(loaded, depth, nodes, time_ms, max_depth, max_nodes, max_time_ms)
    count = check_top(top)
    chosen, seed = _level(level), _seed(seed)
    asked_ms = check_solve_ms(solve_ms, max_solve_ms)
    if asked_ms and chosen.name != DEFAULT_LEVEL:
        raise InvalidRequest(f"applies at level {DEFAULT_LEVEL} only: level {chosen.name} "
                             "never asks the solver", field="solve_ms")
    draws = bool(chosen.blunder or chosen.temperature)  # else the top move: search for it alone
    best_only = not draws and count in (None, 1)
    name = loaded.model.game.name
    exact = registry.exact if chosen.name == DEFAULT_LEVEL else None
    seconds = 0.0 if exact is None else (
        exact.budget(name) if asked_ms is None else asked_ms / 1000)
    proving = seconds > 0
    hot = count is None and depth is None and nodes is None and time_ms is None
    solution = None
    if proving and hot:  # the proof first: where it settles the move, no search is needed
        assert exact is not None
        state, position = _state(loaded, board, to_move, moves)
        solution = _proved(exact, state, seconds, asked_ms is None)
        if solution is not None and len(solution.optimal_moves) == 1:
            registry.metrics.count_level(name, chosen.name)
            _mirror(registry, model, loaded, f"{state} {state.to_move}", limits.depth)
            move = proved_move(solution, solution.optimal_moves[0])
            return MoveAnswer(name, loaded.version, move, move.value, position, chosen.name,
                              limits.depth, exact=True)
        answer = (loaded.position_of(state, limits.depth, best_only) if moves is not None
                  else _position(loaded, board, to_move, None, limits.depth, best_only)[0])
    else:
        answer, position = _position(loaded, board, to_move, moves, limits.depth, best_only,
                                     limits=limits)
    rng = None
    if draws:
        rng = seeded(seed, chosen, answer.text) if seed is not None else unseeded()
    e = answer.evaluation
    move = choose(chosen, e.moves, answer.wins, rng) if rng else _greedy(chosen, e, answer)
    registry.metrics.count_level(name, chosen.name)
    proved = False
    if proving:
        assert exact is not None
        if solution is None and not hot:
            text, side = answer.text.rsplit(" ", 1)
            solution = _proved(exact, loaded.model.game.parse(text, to_move=side), seconds,
                               asked_ms is None)
        if solution is not None:
            move, proved = _exact_move(loaded, answer, move, solution,
                                       reached_depth(answer, limits)), True
    _mirror(registry, model, loaded, answer.text, reached_depth(answer, limits))
    if hot:
        return MoveAnswer(name, loaded.version, move, move.value, position, chosen.name,
                          limits.depth, exact=proved)  # the hot path: nothing more asked
    ranked, used = report_search(loaded, answer, limits, count, started, asked=True)
    return MoveAnswer(name, loaded.version, move, move.value, position, chosen.name,
                      reached_depth(answer, limits), ranked, used, proved)


def _mirror(registry: Registry, model: str, loaded: ModelSession, text: str,
            depth: int | None) -> None:
    """The production track's query goes to the shadow test (off this path), at the depth
    that answered: a budget's cap (GAMEAI_MAX_DEPTH) is no depth to mirror, and what a time
    budget bought here is what the shadow is compared on."""
    if registry.mirror is not None and model.strip() in ("", "production"):
        board, side = text.rsplit(" ", 1)
        registry.mirror(loaded.model.game.name, loaded, board, side, depth)


def _proved(exact: ExactPlay, state: State, seconds: float, learn: bool
            ) -> Solution | OptimalMoves | None:
    """The proof of ``state``'s optimal moves for level best: held, in the shared table, or
    proved within ``seconds`` (:meth:`ExactPlay.prove`; ``learn``: the game's own budget,
    whose stages learn where it fails), counted as an exact move or not."""
    game = state.game.name
    solution = exact.prove(state, seconds, learn=learn)
    exact.metrics.exact_moves.labels(game, "true" if solution else "false").inc()
    return solution


def proved_move(proof: Solution | OptimalMoves, action: int) -> MoveValue:
    """The optimal move ``action`` of a proved position, valued by its proof (an optimal
    move keeps the position's value): 1 a win for the mover, 0 a draw, -1 a loss."""
    return valued_move(proof.board.game, action, float(proof.value))


def _exact_move(loaded: ModelSession, answer: Position, move: MoveValue,
                solution: Solution | OptimalMoves, depth: int | None) -> MoveValue:
    """The best level's move in a proved position: of the optimal moves, the one the
    network values most (a search for the best move alone valued no other: every move's
    value then), valued by its proof."""
    optimal = set(solution.optimal_moves)
    if move.action_id not in optimal:
        text, side = answer.text.rsplit(" ", 1)
        valued = loaded.position(text, side, depth).evaluation.moves
        move = next(m for m in valued if m.action_id in optimal)
    return proved_move(solution, move.action_id)


def _greedy(level: Level, evaluation: Evaluation, answer: Position) -> MoveValue:
    """A level without draws: the top move, or the model's favourite win in one."""
    top = evaluation.best
    if not level.takes_wins or not answer.wins or top.action_id in answer.wins:
        return top
    return next((m for m in evaluation.moves if m.action_id in answer.wins), top)


def evaluate(registry: Registry, *, game: str, board: str = "", model: str = "",
             client_id: str = "", to_move: str = "", moves: object = None,
             depth: object = None, top: object = None, nodes: object = None,
             time_ms: object = None, max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
             max_time_ms: int = MAX_TIME_MS) -> EvaluateAnswer:
    """The position's value and every legal move's value, best first (by a search
    ``depth`` plies ahead within ``nodes`` and ``time_ms``, for a model that searches:
    see :func:`best_move`); with ``top``, the best moves with their lines too."""
    started = time.perf_counter()
    loaded = _pick(registry, game, model, client_id)
    limits = budget(loaded, depth, nodes, time_ms, max_depth, max_nodes, max_time_ms)
    count = check_top(top)
    answer, position = _position(loaded, board, to_move, moves, limits.depth, limits=limits)
    ranked, used = report_search(loaded, answer, limits, count, started,
                           asked=depth is not None or nodes is not None or time_ms is not None)
    return EvaluateAnswer(loaded.model.game.name, loaded.version, answer.evaluation, position,
                          reached_depth(answer, limits), ranked, used)


def analyze(registry: Registry, *, game: str, board: str = "", model: str = "",
            client_id: str = "", to_move: str = "", moves: object = None,
            depth: object = None, nodes: object = None, time_ms: object = None,
            max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
            max_time_ms: int = MAX_TIME_MS) -> AnalyzeAnswer:
    """Hints for the position (:mod:`gameai.service.analysis`): every legal move's value (by the
    search ``depth`` deep within ``nodes`` and ``time_ms``, for a model that searches, as
    :func:`evaluate`; the line by the depth that search reached) and, where the game has an
    exact solver, its outcome and distance; the line the model expects. May take a
    solver's time: the transports run it off the event loop."""
    started = time.perf_counter()
    loaded = _pick(registry, game, model, client_id)
    limits = budget(loaded, depth, nodes, time_ms, max_depth, max_nodes, max_time_ms)
    answer, position = _position(loaded, board, to_move, moves, limits.depth, limits=limits)
    text, side = answer.text.rsplit(" ", 1)
    state = loaded.model.game.parse(text, to_move=side)
    reached = None if answer.report is None else answer.report.depth

    def values(s: State) -> Evaluation:
        if s is state:
            return answer.evaluation
        return loaded.position(str(s), s.to_move, reached).evaluation

    analysis = hints(state, values, registry.exact)
    _, used = report_search(loaded, answer, limits, None, started,
                      asked=depth is not None or nodes is not None or time_ms is not None)
    if used is not None and analysis.outcome is not None:
        used = replace(used, exact=True)
    return AnalyzeAnswer(loaded.model.game.name, loaded.version, analysis, position,
                         reached, used)


def list_levels(registry: Registry, *, game: str) -> LevelsAnswer:
    """The levels of play and, where ``gameai bench levels`` measured them, their strength
    for ``game``."""
    state = registry.served(_text(game, "game", required=True))
    name = state.game.name
    calibration = _calibration().get(name)
    version = state.aliases.get("production")
    session = state.models.get(version) if version is not None else None
    if session is None:
        return LevelsAnswer(name, tuple(LEVELS.values()), calibration, version)
    info = session.record.info
    judged = (info.get("evaluation") or {}).get("judged")
    strength = None
    if isinstance(judged, dict) and judged.get("measures"):
        strength = f"judged at {judged.get('policy', 'its default')}: {describe_judged(judged)}"
    applies = calibration is not None and same_model(calibration.get("model") or {}, info)
    return LevelsAnswer(name, tuple(LEVELS.values()), calibration, version, strength, applies)


@lru_cache(maxsize=1)
def _calibration() -> dict[str, dict[str, Any]]:
    return load_calibration()


def _position(loaded: ModelSession, board: object, to_move: object, moves: object,
              depth: int | None = None, best_only: bool = False, *,
              limits: Budget | None = None) -> tuple[Position, str | None]:
    """The request's position as ``loaded`` answers it (:meth:`ModelSession.position`): ``board``
    (and ``to_move``), or exactly instead of them, ``moves`` (None: not given; ``""``: no
    move yet, the start position); with the position's board when it came from moves;
    searched within the node and time bounds of ``limits``.

    Raises:
        InvalidRequest: neither a board nor moves, or both.
    """
    board, to_move, moves = _asked(board, to_move, moves)
    bounds: dict[str, Any] = {}
    if limits is not None and depth is not None and (limits.nodes or limits.time_ms):
        bounds = {"nodes": limits.nodes, "seconds": limits.seconds}  # a searching model's
    if moves is not None:
        answer, state = loaded.position_after(moves, depth, best_only, **bounds)
        return answer, str(state)
    if bounds:
        return loaded.position(board, to_move, depth, best_only, **bounds), None
    return loaded.position(board, to_move, depth, best_only), None


def _state(loaded: ModelSession, board: object, to_move: object, moves: object
           ) -> tuple[State, str | None]:
    """The request's position as :func:`_position` reads it, parsed but not valued; with
    the position's board when it came from moves."""
    board, to_move, moves = _asked(board, to_move, moves)
    if moves is not None:
        state = loaded.state_after(moves)
        return state, str(state)
    return loaded.model.game.parse(board, to_move=to_move), None


def _asked(board: object, to_move: object, moves: object) -> tuple[str, str, str | None]:
    """The request's ``board``, ``to_move`` and ``moves`` as texts (moves None: not given).

    Raises:
        InvalidRequest: neither a board nor moves, or both.
    """
    to_move = _text(to_move, "to_move")
    board = _text(board, "board")
    if moves is not None:
        moves = _text(moves, "moves")
        if board or to_move:
            raise InvalidRequest("give either moves or a board (with to_move), not both",
                                 field="moves")
        return board, to_move, moves
    if not board:
        raise InvalidRequest("is required (or moves, for a game with a move notation)",
                             field="board")
    return board, to_move, None


def _level(value: object) -> Level:
    try:
        return level_named(_text(value, "level"))
    except UnknownLevel as e:
        raise InvalidRequest(str(e), field="level") from None


def _seed(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= SEED_MAX:
        raise InvalidRequest(f"must be a whole number from 0 to {SEED_MAX}, got "
                             f"{json.dumps(value, default=str)[:40]}", field="seed")
    return value


def evaluate_batch(registry: Registry, *, game: str, boards: Sequence[object], model: str = "",
                   client_id: str = "", max_batch: int = 10_000,
                   include_move_values: bool = False, to_move: str = "",
                   depth: object = None, nodes: object = None, time_ms: object = None,
                   max_depth: int = MAX_DEPTH, max_nodes: int = MAX_NODES,
                   max_time_ms: int = MAX_TIME_MS) -> BatchAnswer:
    """Many boards of one game (``to_move`` for every one of them, where the game needs
    it), answered by one version, values computed vectorised. Without ``depth`` a model
    that searches answers by its network's own values (no search: a batch is many
    positions fast); with it, by its search that deep (at most ``max_depth``), for at most
    ``max_batch // SEARCHED_BATCH_SHARE`` boards. A ``nodes`` or ``time_ms`` budget is
    for the whole batch: every board one depth deeper at a time, from 0 to ``depth``
    (without one, ``max_depth``), while it lasts (:func:`budget`'s caps).

    Raises:
        RequestTooLarge: more than ``max_batch`` boards (or the searched batch's share).
        InvalidRequest: a ``depth`` out of range, or one given to a model that does not
            search (``field`` depth); a bad ``nodes`` or ``time_ms``.
    """
    started = time.perf_counter()
    if len(boards) > max_batch:
        raise RequestTooLarge(f"{len(boards)} boards in one request; at most {max_batch} "
                              "are accepted", field="boards")
    loaded = _pick(registry, game, model, client_id)
    limits = budget(loaded, depth, nodes, time_ms, max_depth, max_nodes, max_time_ms,
                    searches_unasked=False)
    searched = limits.depth
    if searched is not None:
        most = max(1, max_batch // SEARCHED_BATCH_SHARE)
        if len(boards) > most:
            raise RequestTooLarge(f"{len(boards)} boards searched {searched} deep in one "
                                  f"request; at most {most} are accepted with a depth or a "
                                  f"budget (a tenth of the {max_batch} without one)",
                                  field="boards")
    require_text(boards)
    batch = loaded.model.game.parse_batch(boards, to_move=_text(to_move, "to_move"))
    report = None
    if searched is None:
        raw = loaded.model.batch_values(batch)
    else:
        assert isinstance(loaded.model, NtupleModel)  # budget refuses models that do not search
        assert batch.masks is not None  # an n-tuple network's games are bitmasks
        raw, report = loaded.model.values_within(*batch.masks, searched, nodes=limits.nodes,
                                                 seconds=limits.seconds)
    values: npt.NDArray[np.float64] = np.round(
        raw.astype(np.float64), VALUE_DECIMALS).astype(np.float64)
    best, value = best_moves(values)
    used = None
    if depth is not None or nodes is not None or time_ms is not None:
        used = SearchUsed(limits, None if report is None else report.depth,
                          0 if report is None else report.nodes,
                          round((time.perf_counter() - started) * 1e6),
                          report is None or report.complete,
                          report is not None and report.exact)
    return BatchAnswer(loaded.model.game, loaded.version, batch.to_move, value, best,
                       values if include_move_values else None,
                       searched if report is None else report.depth, used)


def _pick(registry: Registry, game: str, model: str, client_id: str) -> ModelSession:
    state = registry.served(_text(game, "game", required=True))
    return registry.pick(state, _text(model, "model"), _text(client_id, "client_id"))


def _text(value: object, field: str, *, required: bool = False) -> str:
    if not isinstance(value, str):
        raise InvalidRequest(f"must be text, got {type(value).__name__}", field=field)
    if required and not value.strip():
        raise InvalidRequest("must not be empty", field=field)
    if len(value) > MAX_TEXT and field != "board":
        raise InvalidRequest(f"is {len(value)} characters long; at most {MAX_TEXT} are "
                             "accepted", field=field)
    return value.strip() if field != "board" else value


# -- games and models --------------------------------------------------------------------

def list_games(registry: Registry) -> list[GameSummary]:
    """Every served game with the aliases this server follows."""
    return [_summary(registry.served(name)) for name in registry.games]


def _summary(state: Served) -> GameSummary:
    return GameSummary(state.game, dict(state.aliases), state.canary_weight,
                       sorted(state.models), state.ready, state.pin, state.shadow_share)


def list_models(registry: Registry, *, game: str) -> ModelListing:
    """A game's stored versions, oldest first; only the versions held here when the store
    is down (and :class:`Unavailable` if that is none)."""
    state = registry.served(_text(game, "game", required=True))
    name = state.game.name
    shadow = None
    try:
        _require_store(registry)
        records = registry.store.versions(game=name)
        rollout = registry.store.rollout(game=name)
        aliases, weight, pin = dict(rollout.aliases), rollout.canary_weight, rollout.pin
        share = rollout.shadow_share
        if rollout.shadow is not None:
            reports = registry.store.shadow_reports(game=name, version=rollout.shadow)
            shadow = next((r for r in reports if r.production == rollout.production), None)
    except StoreUnavailable:
        if not state.models:
            raise
        records = [m.record for m in state.models.values()]
        aliases, weight, pin = dict(state.aliases), state.canary_weight, state.pin
        share = state.shadow_share
    versions = [_model_summary(state, r.version, r, aliases) for r in records]
    return ModelListing(name, versions, aliases, weight, pin, share, shadow)


def get_model(registry: Registry, *, game: str, version: str) -> ModelSummary:
    """One version's metadata; ``version`` is a number or an alias."""
    state = registry.served(_text(game, "game", required=True))
    ref = _text(version, "version", required=True)
    name = state.game.name
    try:
        _require_store(registry)
        number = int(ref) if is_number(ref) else registry.store.resolve(game=name, ref=ref)
        record = registry.store.version(game=name, version=number) if number else None
        aliases = dict(registry.store.rollout(game=name).aliases)
    except StoreUnavailable:
        number = int(ref) if is_number(ref) else state.aliases.get(ref)
        held = state.models.get(number) if number is not None else None
        if held is None:
            raise
        record, aliases = held.record, dict(state.aliases)
    if number is None or record is None:
        raise UnknownModel(f"{name} has no version or alias {ref!r}", field="version")
    return _model_summary(state, number, record, aliases)


def _require_store(registry: Registry) -> None:
    """Fail fast to the held copy while the follower knows the store is down."""
    if not registry.store_up:
        raise StoreUnavailable("the store is unreachable")


def _model_summary(state: Served, version: int, record: VersionRecord,
                   aliases: dict[str, int]) -> ModelSummary:
    names = sorted(alias for alias, v in aliases.items() if v == version)
    return ModelSummary(state.game.name, version, record, names, version in state.models)


# -- admin -------------------------------------------------------------------------------

def set_alias(registry: Registry, *, game: str, alias: object, version: object,
              by: str, pin: object = True) -> AliasChange:
    """Point ``alias`` at ``version`` in the store; every server follows within a second.
    An operator's move of ``production`` pins it (``pin=False`` leaves it unpinned), so the
    trainer's automatic promotion holds off until :func:`release`."""
    state = registry.served(_text(game, "game", required=True))
    alias = _text(alias, "alias", required=True)
    if not _ALIAS.fullmatch(alias):
        raise InvalidRequest("must be 1-32 lowercase letters, digits, '-' or '_', starting "
                             "with a letter", field="alias")
    number = _version_number(version)
    if not isinstance(pin, bool):
        raise InvalidRequest(f"must be true or false, got {json.dumps(pin, default=str)[:40]}",
                             field="pin")
    try:
        change = registry.store.set_alias(game=state.game.name, alias=alias, version=number,
                                          by=by, pin=pin and alias == "production")
    except UnknownVersion as e:
        raise UnknownModel(f"{state.game.name} has no version {number}",
                           field="version") from e
    registry.wake()
    return change


def set_canary(registry: Registry, *, game: str, version: object, weight: object,
               by: str) -> None:
    """Set the canary's version (``None`` keeps it) and its share of traffic, 0-100."""
    state = registry.served(_text(game, "game", required=True))
    number = None if version is None else _version_number(version)
    if isinstance(weight, bool) or not isinstance(weight, int) or not 0 <= weight <= 100:
        raise InvalidRequest(f"must be a whole number of percent from 0 to 100, got "
                             f"{json.dumps(weight, default=str)[:40]}", field="weight")
    try:
        registry.store.set_canary(game=state.game.name, version=number, weight=weight, by=by)
    except UnknownVersion as e:
        raise UnknownModel(f"{state.game.name} has no version {number}",
                           field="version") from e
    registry.wake()


def pin(registry: Registry, *, game: str, by: str) -> Pin:
    """Pin production where it is: the trainer's automatic promotion holds off.

    Raises:
        AliasRefused: (409) the game has no production version.
    """
    state = registry.served(_text(game, "game", required=True))
    held = registry.store.pin(game=state.game.name, by=by)
    registry.wake()
    return held


def release(registry: Registry, *, game: str, by: str) -> Pin | None:
    """Release the pin on production (``None``: there was none, nothing changed)."""
    state = registry.served(_text(game, "game", required=True))
    released = registry.store.release(game=state.game.name, by=by)
    registry.wake()
    return released


def _version_number(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidRequest(f"must be a version number (1 or more), got "
                             f"{json.dumps(value, default=str)[:40]}", field="version")
    return value
