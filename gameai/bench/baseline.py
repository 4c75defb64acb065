"""The plain-Python yardstick of ``gameai bench selfplay``: the td learner's self-play and
updates written as an ordinary Python loop over integer bitmasks and a dict, with the same
canonical keys, Boltzmann choice and backward replay as :mod:`gameai.trainer.learners.td`."""

from __future__ import annotations

import math
import random

from gameai.games.mnk.game import MnkGame as Game


def python_td_games(game: Game, games: int, *, seed: int = 0, tau: float = 0.1,
                    alpha: float = 0.1) -> dict[int, float]:
    """Play ``games`` games of td self-play in pure Python; returns the value table."""
    rng = random.Random(seed)
    pow3 = [[3 ** perm[c] for c in range(game.cells)] for perm in game.symmetries]
    lines = [list(game.lines_through[c]) for c in range(game.cells)]
    full = game.full_mask
    values: dict[int, float] = {}
    for _ in range(games):
        masks = [0, 0]
        keys = [0] * len(pow3)
        path: list[tuple[int, int]] = []  # (mover, afterstate key or -1 if terminal)
        winner = -1
        for ply in range(game.cells):
            mover = ply & 1
            digit = 1 + mover
            empty = [c for c in range(game.cells) if not (masks[0] | masks[1]) >> c & 1]
            scored = []
            for c in empty:
                mine = masks[mover] | 1 << c
                if any(mine & line == line for line in lines[c]):
                    scored.append((1.0, c, -1))
                elif (masks[0] | masks[1] | 1 << c) == full:
                    scored.append((0.5, c, -1))
                else:
                    key = min(k + digit * p[c] for k, p in zip(keys, pow3, strict=True))
                    scored.append((values.get(key, 0.5), c, key))
            best = max(v for v, _, _ in scored)
            weights = [math.exp((v - best) / tau) for v, _, _ in scored]
            value, cell, key = rng.choices(scored, weights)[0]
            masks[mover] |= 1 << cell
            keys = [k + digit * p[cell] for k, p in zip(keys, pow3, strict=True)]
            path.append((mover, key))
            if value == 1.0 and key == -1:
                winner = mover
            if key == -1:
                break
        for player in (0, 1):
            target = 1.0 if winner == player else 0.5 if winner < 0 else 0.0
            for mover, key in reversed(path):
                if mover != player or key < 0:
                    continue
                v = values.get(key, 0.5)
                v += alpha * (target - v)
                values[key] = target = v
    return values
