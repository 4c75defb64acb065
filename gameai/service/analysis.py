"""Hints: a position's every move with the model's value and, where the game has an exact
solver, the move's exact outcome and distance; and the line of play the model expects.

The exact figures come from the game's own solver (``game.solve``: whole-game tables,
retrograde analysis, search), never from the model, so a hint can tell a player what the
model gets wrong. A position the solver cannot afford is answered without them, saying
why. Solutions are kept (a bounded cache per process): they depend on the position only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gameai.games import Game, State, TooLarge
from gameai.games.interface import Solution
from gameai.models import Evaluation, MoveValue

if TYPE_CHECKING:
    from gameai.service.exact import ExactPlay

Evaluate = Callable[[State], Evaluation]

LINE_PLIES = 60  # the longest principal line shown
SOLUTIONS_KEPT = 50_000
SOLVES_AT_ONCE = 2
SOLVE_SECONDS = 2.0  # a search (Connect Four) past this answers without exact figures


@dataclass(frozen=True)
class MoveHint:
    """One legal move: the model's value and, where solved, the exact outcome for the
    player making it (``win``, ``draw``, ``loss``) and the plies to the end under perfect
    play, this move included."""

    move: MoveValue
    outcome: str | None = None
    distance: int | None = None


@dataclass(frozen=True)
class LineStep:
    to_move: str
    move: MoveValue  # its value is the model's, from the mover's view


@dataclass(frozen=True)
class Analysis:
    evaluation: Evaluation
    moves: tuple[MoveHint, ...]  # in the evaluation's order: the model's best first
    outcome: str | None  # the position's exact outcome for the side to move, if solved
    distance: int | None
    unsolved: str  # why there are no exact figures ("" when there are)
    line: tuple[LineStep, ...]
    line_end: str  # "X wins", "O wins", "draw", "draw by repetition" or "continues"


class _Solutions:
    """Exact solutions by position, or why there is none; bounded, shared by threads."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, str], Solution | str] = {}
        self._lock = threading.Lock()
        # solves at once: a flood of hints on unsolved positions takes these cores at most,
        # never every thread of the pool
        self._solving = threading.BoundedSemaphore(SOLVES_AT_ONCE)

    def get(self, game: Game, state: State, shared: ExactPlay | None = None
            ) -> Solution | str:
        """The solution of ``state`` (or why there is none): kept here, else read from the
        shared table of proved positions (``shared``), else solved within
        :data:`SOLVE_SECONDS` and offered to that table."""
        key = (game.name, f"{state} {state.to_move}")
        found = self._kept.get(key)
        if found is None and shared is not None:
            found = shared.lookup(state)
        if found is None:
            try:
                with self._solving:
                    found = game.solve(state, time_limit=SOLVE_SECONDS)
            except TooLarge as e:
                found = unproved(e)
            if shared is not None and not isinstance(found, str):
                shared.record(state, found)
            with self._lock:
                if len(self._kept) >= SOLUTIONS_KEPT:
                    self._kept.clear()
                self._kept[key] = found
        return found


    def proved(self, game: Game, state: State, time_limit: float) -> Solution | None:
        """The solution of ``state`` if it is kept or the solver proves it within
        ``time_limit`` seconds, else ``None``. Only proofs are kept: a shorter budget that
        fails says nothing of what a longer one finds (and a position that failed within
        :data:`SOLVE_SECONDS` is not tried again in less)."""
        key = (game.name, f"{state} {state.to_move}")
        found = self._kept.get(key)
        if found is not None:
            return None if isinstance(found, str) else found
        try:
            with self._solving:
                solution = game.solve(state, time_limit=time_limit)
        except TooLarge:
            return None
        self.keep(game, state, solution)
        return solution

    def kept(self, game: Game, state: State) -> Solution | None:
        """The solution of ``state`` if one is kept (never solves)."""
        found = self._kept.get((game.name, f"{state} {state.to_move}"))
        return None if found is None or isinstance(found, str) else found

    def kept_text(self, game: Game, text: str) -> Solution | None:
        """:meth:`kept` of a position given as its text and side (``"XO-|... X"``)."""
        found = self._kept.get((game.name, text))
        return None if found is None or isinstance(found, str) else found

    def forget(self) -> None:
        """Forget every kept solution (what a fresh process holds: tests of the shared
        table start from it)."""
        with self._lock:
            self._kept.clear()

    def keep(self, game: Game, state: State, solution: Solution) -> None:
        """Keep a solution found elsewhere (a streamed analysis' proof)."""
        with self._lock:
            if len(self._kept) >= SOLUTIONS_KEPT:
                self._kept.clear()
            self._kept[(game.name, f"{state} {state.to_move}")] = solution


SOLUTIONS = _Solutions()


def unproved(error: TooLarge) -> str:
    """Why a position has no exact figures, in words for people (the web board shows it)."""
    partial = getattr(error, "partial", None)  # a search that ran out of time
    if partial is not None:
        settled = sum(1 for m in partial.moves if m.lower == m.upper)
        return (f"The solver could not prove this position within {SOLVE_SECONDS:g} s "
                f"({partial.nodes:,} positions searched; {settled} of {len(partial.moves)} "
                "moves settled), so no exact outcome is shown.")
    return (f"This position is too large for the solver on this server ({error}), so no "
            "exact outcome is shown.")


def analyze(state: State, evaluate: Evaluate, shared: ExactPlay | None = None) -> Analysis:
    """The hints for ``state``, by the model that ``evaluate`` asks; exact figures read from
    (and proofs written to) the shared table of proved positions where ``shared`` is
    given."""
    evaluation = evaluate(state)
    solution = SOLUTIONS.get(state.game, state, shared)
    if isinstance(solution, str):
        hints = tuple(MoveHint(m) for m in evaluation.moves)
        outcome, distance, unsolved = None, None, solution
    else:
        exact = {m.move: m for m in solution.moves}
        hints = tuple(MoveHint(m, exact[m.action_id].outcome, exact[m.action_id].distance)
                      for m in evaluation.moves)
        outcome, distance, unsolved = solution.outcome, solution.distance, ""
    line, end = principal_line(state, evaluate)
    return Analysis(evaluation, hints, outcome, distance, unsolved, line, end)


def principal_line(state: State, evaluate: Evaluate) -> tuple[tuple[LineStep, ...], str]:
    """The line the model expects: its best move for each side in turn, to the end of the
    game (a third repetition draws), or :data:`LINE_PLIES` plies."""
    steps: list[LineStep] = []
    seen = {state.key: 1}
    while True:
        best = evaluate(state).best
        steps.append(LineStep(state.to_move, best))
        state = state.play(best.action_id)
        if state.is_over():
            winner = state.winner()
            return tuple(steps), f"{winner} wins" if winner else "draw"
        seen[state.key] = seen.get(state.key, 0) + 1
        if seen[state.key] >= 3:
            return tuple(steps), "draw by repetition"
        if len(steps) >= LINE_PLIES:
            return tuple(steps), "continues"
