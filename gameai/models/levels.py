"""Levels of play: documented policies over a model's move values, from ``beginner`` to ``best``.

A level turns one position's evaluation (every legal move and the model's value of it, best
first) into the move to play. Each level is three numbers, the same for every game and
every model, so a new game or a new kind of model gets the levels for free:

* ``blunder``: the probability of playing a legal move drawn uniformly at random;
* ``temperature``: otherwise, a move is drawn with probability proportional to
  ``exp(value / temperature)`` (values lie in [-1, 1]); 0 plays the model's top move (ties:
  the lowest action, as before levels existed);
* ``takes_wins``: a move that wins at once is always played (the model's favourite among
  several), whatever the model's values say; from ``strong`` up.

``best`` is the default: the model's top move, as every answer was before levels (a
perfect model's top move already wins at once where it can; a win in one is played even
when an imperfect model ranks it lower). How strong each level plays against perfect and
random play is measured by ``gameai bench levels`` (:mod:`gameai.trainer.evaluation.calibrate`) and
published in docs/levels.md. The move server (:func:`gameai.service.core.best_move`) and the
calibration play by the same functions.

Randomness: with a ``seed`` the draws are a function of the seed, the level and the
position (:func:`seeded`), so a game replays move for move on any server and either
transport; without one they come from the operating system, so games differ.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from gameai.games import State
from gameai.models.model import MoveValue

SEED_MAX = 2**63 - 1  # a seed is a whole number from 0 to this (gRPC's int64)


@dataclass(frozen=True)
class Level:
    """One level of play: how often it blunders, how it weighs the values, whether it
    always takes a win in one."""

    name: str
    blunder: float
    temperature: float
    takes_wins: bool
    description: str

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "blunder": self.blunder, "temperature": self.temperature,
                "takes_wins": self.takes_wins, "description": self.description}


LEVELS: dict[str, Level] = {level.name: level for level in (
    Level("beginner", 0.5, 0.5, False,
          "half of its moves at random, the others favouring good moves only loosely; "
          "misses wins"),
    Level("casual", 0.2, 0.2, False,
          "one move in five at random, the others mostly good ones; may miss a win"),
    Level("strong", 0.05, 0.05, True,
          "one move in twenty at random, the others nearly always the model's best; "
          "never misses a win in one"),
    Level("best", 0.0, 0.0, True, "the model's best move every time (the default)"),
)}
DEFAULT_LEVEL = "best"
_SYSTEM = random.SystemRandom()  # no state to share between forked workers


class Draws(Protocol):
    """A source of uniform draws in [0, 1) (``random.Random`` is one)."""

    def random(self) -> float: ...


class UnknownLevel(ValueError):
    """A level name that is not one of :data:`LEVELS`."""


def level_named(name: str) -> Level:
    """The level called ``name`` (``""`` is the default).

    Raises:
        UnknownLevel: the message lists the levels.
    """
    level = LEVELS.get(name or DEFAULT_LEVEL)
    if level is None:
        raise UnknownLevel(f"unknown level {name[:40]!r}; levels: {', '.join(LEVELS)}")
    return level


def winning_actions(state: State) -> tuple[int, ...]:
    """The actions that win at once for the side to move (ascending)."""
    return state.winning_actions()


def choose(level: Level, moves: Sequence[MoveValue], wins: Collection[int],
           rng: Draws) -> MoveValue:
    """The move ``level`` plays among ``moves`` (every legal move, best first), given the
    actions that win at once (``wins``) and a source of draws."""
    if level.takes_wins and wins:
        return next(m for m in moves if m.action_id in wins)
    if level.blunder and rng.random() < level.blunder:
        return moves[min(int(rng.random() * len(moves)), len(moves) - 1)]
    if level.temperature <= 0 or len(moves) == 1:
        return moves[0]
    top = moves[0].value
    weights = [math.exp((m.value - top) / level.temperature) for m in moves]
    u = rng.random() * sum(weights)
    for move, weight in zip(moves, weights, strict=True):
        u -= weight
        if u < 0:
            return move
    return moves[-1]  # rounding left u a hair above the total


def probabilities(level: Level, moves: Sequence[MoveValue], wins: Collection[int]
                  ) -> list[float]:
    """The probability that :func:`choose` plays each of ``moves`` (the policy written
    out: the tests check :func:`choose`'s frequencies against it)."""
    n = len(moves)
    if level.takes_wins and wins:
        first = next(i for i, m in enumerate(moves) if m.action_id in wins)
        return [1.0 if i == first else 0.0 for i in range(n)]
    if level.temperature <= 0 or n == 1:
        greedy = [1.0] + [0.0] * (n - 1)
    else:
        top = moves[0].value
        weights = [math.exp((m.value - top) / level.temperature) for m in moves]
        total = sum(weights)
        greedy = [w / total for w in weights]
    return [level.blunder / n + (1 - level.blunder) * p for p in greedy]


class _Digest:
    """Draws read from a hash: four 64-bit words, each a uniform in [0, 1) (a choice takes
    two at most)."""

    def __init__(self, digest: bytes) -> None:
        self._words = [int.from_bytes(digest[i:i + 8], "big") for i in range(0, 32, 8)]

    def random(self) -> float:
        return (self._words.pop() >> 11) * 2.0 ** -53


def seeded(seed: int, level: Level, position: str) -> Draws:
    """The draws of a seeded request: the same seed, level and position (board and side to
    move), the same move, on every server (BLAKE2b of the three)."""
    return _Digest(hashlib.blake2b(f"{seed}\n{level.name}\n{position}".encode(),
                                   digest_size=32).digest())


def unseeded() -> Draws:
    """The draws of a request without a seed: fresh from the operating system."""
    return _SYSTEM
