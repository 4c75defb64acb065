"""The best moves of a position with their lines, as an engine's "multi-PV" gives them: the
``top`` N moves in order, each with the model's value, its exact outcome and distance where
the game's solver proves the position, and its principal variation.

A move's line is what the model expects to follow it. For a model that searches ``depth``
plies beyond a move, it is the line that search valued the move by: after the move, the
best reply by the search ``depth - 1`` deep, then the best answer to that ``depth - 2``
deep, and so on to the horizon (``depth + 1`` moves, fewer where the game ends), each step
a shallower search than the last, so a line costs less than the search it explains. For a
model that does not search (a table, seed 004's network: its values are final) it is the
model's best move for each side in turn to the end of the game, a third repetition or
:data:`~gameai.service.analysis.LINE_PLIES` plies.
"""

from __future__ import annotations

from dataclasses import dataclass

from gameai.games import State
from gameai.games.interface import Solution
from gameai.models import Evaluation, MoveValue
from gameai.service.analysis import LINE_PLIES, SOLUTIONS
from gameai.service.session import ModelSession


@dataclass(frozen=True)
class TopMove:
    """One of the best moves: the model's value of it, its exact ``outcome`` for the mover
    (``win``, ``draw``, ``loss``) and ``distance`` (plies to the end under perfect play,
    this move included) where the solver proved the position, and its line (the move
    first)."""

    move: MoveValue
    line: tuple[MoveValue, ...]
    outcome: str | None = None
    distance: int | None = None


def top_moves(session: ModelSession, state: State, evaluation: Evaluation, count: int,
              depth: int | None, solution: Solution | None) -> tuple[TopMove, ...]:
    """The ``count`` best moves of ``evaluation`` (of ``state``, best first), each with its
    line by ``session``'s model searching ``depth`` deep (None: a model that does not
    search) and, from ``solution`` where there is one, its exact outcome."""
    exact = {} if solution is None else {m.move: m for m in solution.moves}
    out = []
    for move in evaluation.moves[:count]:
        proved = exact.get(move.action_id)
        line = principal_variation(session, state, move, depth)
        out.append(TopMove(move, line, proved.outcome if proved else None,
                           proved.distance if proved else None))
    return tuple(out)


def principal_variation(session: ModelSession, state: State, move: MoveValue,
                        depth: int | None) -> tuple[MoveValue, ...]:
    """``move`` and the moves the model expects after it (see the module)."""
    line = [move]
    seen = {state.key: 1}
    left = LINE_PLIES if depth is None else depth
    while left > 0:
        state = state.play(line[-1].action_id)
        if state.is_over():
            break
        seen[state.key] = seen.get(state.key, 0) + 1
        if seen[state.key] >= 3:  # a third repetition draws
            break
        left -= 1
        searched = None if depth is None else left
        line.append(session.state_values(state, searched, best_only=True).best)
    return tuple(line)


def solved(state: State, seconds: float) -> Solution | None:
    """The exact solution of ``state`` if the solver has it or proves it within ``seconds``
    (0: only one already kept), else None."""
    if seconds <= 0:
        return SOLUTIONS.kept(state.game, state)
    return SOLUTIONS.proved(state.game, state, seconds)
