"""One model version as the server holds it: verified, warmed, and a bounded cache of its
answers (:class:`ModelSession`). The registry keeps one per version it serves."""

from __future__ import annotations

from dataclasses import dataclass, replace

from gameai.games import GameError, State
from gameai.models import Evaluation, Model, SearchReport
from gameai.models.levels import winning_actions
from gameai.store import VersionRecord

ANSWER_CACHE_SIZE = 100_000  # per version; a tictactoe model has 4,520 live positions
VALUE_DECIMALS = 6


class ModelSession:
    """One verified, warmed model version and a bounded cache of its answers.

    Versions are immutable, so an answer cached under the board text is exact for as
    long as the version lives.
    """

    def __init__(self, version: int, model: Model, record: VersionRecord) -> None:
        self.version = version
        self.model = model
        self.record = record
        self._answers: dict[str, Position] = {}

    def evaluate(self, board: str, to_move: str = "") -> Evaluation:
        """The evaluation of ``board`` (text) with ``to_move`` (where the game needs it).
        Raises the game core's errors."""
        return self.position(board, to_move).evaluation

    def position(self, board: str, to_move: str = "", depth: int | None = None,
                 best_only: bool = False, *, nodes: int | None = None,
                 seconds: float | None = None) -> Position:
        """:meth:`evaluate` with what a level of play needs besides (the wins in one and
        the position's text); with ``depth``, by the model's search that deep, and with
        ``best_only`` as well, of the best move alone (what a level that plays the best
        move needs; the search proves the others worse sooner than it values them). With
        a ``nodes`` or ``seconds`` budget, by the deepest search to ``depth`` that fits it
        (never cached: what a time budget buys varies). Raises the game core's errors."""
        if nodes is not None or seconds is not None:
            state = self.model.game.parse(board, to_move=to_move)
            return self._answer(state, depth, best_only, nodes, seconds)
        key = board if not to_move else f"{board}\n{to_move}"
        if depth is not None:
            key = f"{key}\0{depth}"
            full = self._answers.get(key)  # every move's value holds the best one's too
            if full is not None:
                return full
            if best_only:
                key += "best"
        hit = self._answers.get(key)
        if hit is not None:
            return hit
        answer = self._answer(self.model.game.parse(board, to_move=to_move), depth, best_only)
        if len(self._answers) < ANSWER_CACHE_SIZE:
            self._answers[key] = answer
        return answer

    def state_values(self, state: State, depth: int | None = None, best_only: bool = False
                     ) -> Evaluation:
        """The evaluation of a state already parsed and checked playable (a reviewed game's
        positions, a line's), every move valued (by the search ``depth`` deep; with
        ``best_only``, the best move alone): :meth:`position` without the wins in one,
        which a review does not need (a seventh of its time); cached apart from
        :meth:`position`'s answers, which carry them."""
        key = f"{state}\n{state.to_move}\0{depth}\0values"
        hit = self._answers.get(key)
        if hit is None and best_only:
            key += "best"
            hit = self._answers.get(key)
        if hit is not None:
            return hit.evaluation
        e = self.model.evaluate(state) if depth is None else self.model.search(
            state, depth, best_only=best_only)
        answer = Position(rounded(e), (), "")
        if len(self._answers) < ANSWER_CACHE_SIZE:
            self._answers[key] = answer
        return answer.evaluation

    def searched_values(self, state: State, depth: int, *, nodes: int | None,
                        seconds: float | None) -> tuple[Evaluation, SearchReport]:
        """:meth:`state_values` by the deepest search to ``depth`` that fits a ``nodes`` or
        ``seconds`` budget (never cached: what a time budget buys varies), with what it
        used."""
        e, report = self.model.search_within(state, depth, nodes=nodes, seconds=seconds)
        return rounded(e), report

    def evaluate_moves(self, moves: str) -> tuple[Evaluation, State]:
        """The evaluation of the position the move list ``moves`` reaches, and that
        position. Raises the game core's errors."""
        answer, state = self.position_after(moves)
        return answer.evaluation, state

    def position_after(self, moves: str, depth: int | None = None, best_only: bool = False,
                       *, nodes: int | None = None, seconds: float | None = None
                       ) -> tuple[Position, State]:
        """:meth:`position` of the position the move list ``moves`` reaches, and that
        position. Raises the game core's errors."""
        state = self.state_after(moves)
        return self._answer(state, depth, best_only, nodes, seconds), state

    def state_after(self, moves: str) -> State:
        """The position the move list ``moves`` reaches, checked playable. Raises the game
        core's errors."""
        state = self.model.game.parse_moves(moves)
        try:
            state.require_playable()
        except GameError as e:
            e.field = "moves"  # the game ended within the moves given
            raise
        return state

    def position_of(self, state: State, depth: int | None = None, best_only: bool = False
                    ) -> Position:
        """:meth:`position` of a state already parsed and checked playable (not cached,
        as :meth:`position_after`'s answers are not)."""
        return self._answer(state, depth, best_only)

    def _answer(self, state: State, depth: int | None = None, best_only: bool = False,
                nodes: int | None = None, seconds: float | None = None) -> Position:
        if depth is None:
            e, report = self.model.evaluate(state), None
        else:
            e, report = self.model.search_within(state, depth, nodes=nodes, seconds=seconds,
                                                 best_only=best_only)
        return Position(rounded(e), winning_actions(state), f"{state} {state.to_move}",
                        report)

    def warm(self) -> None:
        """Run each query path once (numba compiles, numpy allocates) before serving."""
        empty = self.model.game.initial()
        self.model.evaluate(empty)
        self.model.move_values([empty, empty])
        if self.model.default_depth is not None:  # compiles the search (about a second)
            self.model.search(empty, 1)
        winning_actions(empty)


@dataclass(frozen=True, slots=True)
class Position:
    """One position as a version answers it: the evaluation, the actions that win at once
    (what a level that never misses a win needs) and the position as text (board and side
    to move: what a seeded level's draws depend on), and what its search used. A cached
    answer keeps the figures of the search that made it."""

    evaluation: Evaluation
    wins: tuple[int, ...]
    text: str
    # what the search used (:class:`~gameai.models.SearchReport`; None: no search)
    report: SearchReport | None = None


def rounded(evaluation: Evaluation) -> Evaluation:
    """Values to 6 decimals: models keep float32, whose noise (0.4000000059604645) would
    otherwise show in every answer."""
    moves = tuple(replace(m, value=round(m.value, VALUE_DECIMALS)) for m in evaluation.moves)
    return Evaluation(evaluation.to_move, round(evaluation.value, VALUE_DECIMALS), moves)


