"""The exploration schedules the learners share: a parameter that decays from a start
value towards an end value as games are played."""

from __future__ import annotations


def annealed(start: float, end: float, halflife: float, games: float) -> float:
    """``end + (start - end) / 2 ** (games / halflife)``: halfway from ``start`` to ``end``
    every ``halflife`` games (td's temperature and epsilon, qlearning's epsilon)."""
    return float(end + (start - end) * 0.5 ** (games / halflife))
