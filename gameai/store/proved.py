"""The table of proved positions that every server and the book builder share.

Whatever a server's solver proves (a position's every move with its exact outcome, distance
and score: a :class:`~gameai.games.interface.Solution`) is written here, so no server proves
it again and the opening book grows from live traffic (docs/solver.md, "The shared table of
proved positions"). One Redis hash per game (``keys.proved``), one field per position **up to
symmetry**: the field is the position's canonical key (:meth:`State.canonical`; a Connect
Four position and its mirror image share one entry) and the moves are stored in the
canonical image's actions, mapped back to the asker's orientation on the way out.

An entry is text, ``action:score:outcome:distance`` per move joined by commas (outcome
``w``, ``d`` or ``l``): about 70 bytes for a Connect Four position. The table is bounded:
a write past ``max_entries`` is refused (the entries held stay; the earliest proofs are the
ones nearest the opening, the most valuable), and says so. A proof never changes, so a
position already held is not rewritten. An entry that does not read back as a solution of
the position asked (a damaged or foreign value) is a miss, never a guess.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Literal

import redis

from gameai.games import State
from gameai.games.interface import MoveOutcome, Solution
from gameai.store import scripts
from gameai.store.keys import Keys
from gameai.store.urls import StoreUrl, as_text, redis_errors

DEFAULT_MAX_ENTRIES = 1_000_000  # per game: about 150 MB of Redis for Connect Four
_OUTCOMES = {"win": "w", "draw": "d", "loss": "l"}
_LETTERS = {v: k for k, v in _OUTCOMES.items()}

Written = Literal["written", "held", "full"]


class ProvedTable:
    """One store's table of proved positions (every game's), bounded per game.

    Args:
        client: the store's Redis client (bytes in, bytes out).
        keys: the store's key names.
        url: the store's URL, for errors (password hidden).
        max_entries: positions kept per game; writes past it are refused.
    """

    def __init__(self, client: redis.Redis, keys: Keys, url: StoreUrl, *,
                 max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        if max_entries < 0:
            raise ValueError(f"max_entries must be 0 or more, got {max_entries}")
        self._redis = client
        self._keys = keys
        self._url = url
        self.max_entries = max_entries
        self._put = client.register_script(scripts.PUT_PROVED)

    def _errors(self) -> AbstractContextManager[None]:
        return redis_errors(self._url)

    def get(self, state: State) -> Solution | None:
        """The proved solution of ``state`` in its own orientation, or ``None`` (not held,
        or held in a form that is not a solution of ``state``).

        Raises:
            StoreUnavailable: the store cannot be reached.
        """
        key, sym = state.canonical()
        with self._errors():
            raw = self._redis.hget(self._keys.proved(state.game.name), str(key))
        return None if raw is None else decode(state, sym, as_text(raw))

    def get_many(self, states: list[State]) -> list[Solution | None]:
        """:meth:`get` of each state of one game, in one round trip."""
        if not states:
            return []
        canon = [s.canonical() for s in states]
        with self._errors():
            raws = self._redis.hmget(self._keys.proved(states[0].game.name),
                                     [str(k) for k, _ in canon])
        return [None if raw is None else decode(s, sym, as_text(raw))
                for s, (_, sym), raw in zip(states, canon, raws, strict=True)]

    def put(self, state: State, solution: Solution) -> tuple[Written, int]:
        """Write ``solution`` (of ``state``) unless the position is held or the table is
        full: what happened and the game's table size after it.

        Raises:
            StoreUnavailable: the store cannot be reached.
        """
        key, sym = state.canonical()
        entry = encode(state, sym, solution)
        with self._errors():
            done, size = self._put(keys=[self._keys.proved(state.game.name)],
                                   args=[str(key), entry, self.max_entries])
        written: Written = "written" if int(done) == 1 else "held" if int(done) == 0 \
            else "full"
        return written, int(size)

    def size(self, *, game: str) -> int:
        """Positions held for ``game``."""
        with self._errors():
            return int(self._redis.hlen(self._keys.proved(game)))

    def clear(self, *, game: str) -> None:
        """Forget every proved position of ``game`` (an operator's reset; proofs can be
        found again)."""
        with self._errors():
            self._redis.delete(self._keys.proved(game))


def encode(state: State, sym: int, solution: Solution) -> str:
    """``solution``'s moves in the canonical image's actions (``sym`` from
    ``state.canonical()``), as an entry's text."""
    perm = state.game.action_symmetries[sym]
    return ",".join(f"{perm[m.move]}:{m.score}:{_OUTCOMES[m.outcome]}:{m.distance}"
                    for m in solution.moves)


def decode(state: State, sym: int, text: str) -> Solution | None:
    """The solution of ``state`` an entry holds, or ``None`` if it does not hold one: every
    legal action exactly once, with a known outcome."""
    game = state.game
    perm = game.action_symmetries[sym]
    back = {canonical: action for action, canonical in enumerate(perm)}
    legal = set(state.legal_actions())
    moves: list[tuple[int, int, str, int]] = []
    try:
        for part in text.split(","):
            image, score_text, letter, distance_text = part.split(":")
            moves.append((back[int(image)], int(score_text), _LETTERS[letter],
                          int(distance_text)))
    except (ValueError, KeyError):
        return None
    if sorted(m[0] for m in moves) != sorted(legal) or len(moves) != len(legal):
        return None
    best = max(score for _, score, _, _ in moves)
    outcomes = []
    for action, score, outcome, distance in moves:
        move = game.move(action)
        outcomes.append(MoveOutcome(action, move.row, move.col, outcome, distance, score,
                                    score == best, move.from_index, move.from_row,
                                    move.from_col))
    outcomes.sort(key=lambda m: (-m.score, m.move))
    top = outcomes[0]
    value = {"win": 1, "draw": 0, "loss": -1}[top.outcome]
    return Solution(state, value, top.outcome, top.distance, tuple(outcomes))
