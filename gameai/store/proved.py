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
from dataclasses import dataclass
from typing import Literal

import numpy as np
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
        self._rebuild_keys = client.register_script(scripts.REBUILD_PROVED_KEYS)

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
            done, size = self._put(keys=self._both(state.game.name),
                                   args=[str(key), entry, self.max_entries])
        written: Written = "written" if int(done) == 1 else "held" if int(done) == 0 \
            else "full"
        return written, int(size)

    def put_entries(self, game: str, entries: list[tuple[int, str]]) -> dict[Written, int]:
        """Write entries as they are stored (canonical key, entry text: a book file's,
        checked by its reader), each as :meth:`put` writes one (held positions keep
        theirs, none past the bound), in one round trip: how many were written, held and
        refused as full.

        Raises:
            StoreUnavailable: the store cannot be reached.
        """
        counts: dict[Written, int] = {"written": 0, "held": 0, "full": 0}
        keys = self._both(game)
        with self._errors():
            pipe = self._redis.pipeline(transaction=False)
            for key, entry in entries:
                self._put(keys=keys, args=[str(key), entry, self.max_entries], client=pipe)
            for done, _ in pipe.execute():
                counts["written" if int(done) == 1 else "held" if int(done) == 0
                       else "full"] += 1
        return counts

    def put_book(self, game: str, data: bytes) -> dict[Written, int]:
        """:meth:`put_entries` of a book file's entries (:mod:`gameai.store.book`), every
        one checked against its position before any is written.

        Raises:
            CorruptModel: not a book of ``game``, or a line that is not a proof.
            StoreUnavailable: the store cannot be reached.
        """
        from gameai.store.book import read_book

        return self.put_entries(game, read_book(data, game))

    def entries(self, *, game: str) -> list[tuple[int, str]]:
        """Every entry of ``game``'s table as stored (canonical key, entry text), by key:
        what a book file holds.

        Raises:
            StoreUnavailable: the store cannot be reached.
        """
        with self._errors():
            raw = self._redis.hgetall(self._keys.proved(game))
        return sorted((int(as_text(k)), as_text(v)) for k, v in raw.items())

    def _both(self, game: str) -> list[str]:
        return [self._keys.proved(game), self._keys.proved_keys(game)]

    def keys_since(self, game: str, start: int, count: int) -> KeysRead:
        """At most ``count`` of the table's keys in the order they were written, from the
        ``start``-th (0 first), with the lengths of the list of keys and of the table, read
        in one step (:class:`ProvedIndex` reads the table's keys this way).

        Raises:
            StoreUnavailable: the store cannot be reached.
        """
        keys = self._both(game)
        with self._errors():
            pipe = self._redis.pipeline(transaction=True)
            pipe.lrange(keys[1], start, start + count - 1)
            pipe.llen(keys[1])
            pipe.hlen(keys[0])
            fields, length, size = pipe.execute()
        return KeysRead([int(as_text(f)) for f in fields], int(length), int(size))

    def rebuild_keys(self, *, game: str) -> int:
        """Make the list of the table's keys again from the table where it does not hold
        exactly the table's fields (a table written before the list existed): its length.

        Raises:
            StoreUnavailable: the store cannot be reached.
        """
        with self._errors():
            return int(self._rebuild_keys(keys=self._both(game)))

    def size(self, *, game: str) -> int:
        """Positions held for ``game``."""
        with self._errors():
            return int(self._redis.hlen(self._keys.proved(game)))

    def clear(self, *, game: str) -> None:
        """Forget every proved position of ``game`` (an operator's reset; proofs can be
        found again)."""
        with self._errors():
            self._redis.delete(*self._both(game))


@dataclass(frozen=True, slots=True)
class KeysRead:
    """What :meth:`ProvedTable.keys_since` read: keys, and the list's and table's lengths."""

    keys: list[int]
    length: int
    size: int


INDEX_CHUNK = 50_000  # keys an index reads a round trip
_GOLDEN = 0x9E3779B97F4A7C15  # Fibonacci hashing: spreads nearby keys over the bitmap
_MASK64 = (1 << 64) - 1


class ProvedIndex:
    """Which positions one game's table holds, as this process last read them: a filter
    that says "not held" without a round trip to the store, so only a position the table
    may hold is looked up there.

    The table's keys, in the order written, are kept in a list beside it (written by the
    same script as the entries, so the list holds exactly the table's fields);
    :meth:`refresh` reads what was added since the last call (a server calls it off the
    request path, every half second). The keys are kept as bits of a bitmap of at least 32
    bits a position the table may hold (4 MiB for a million): a key's bit set means "maybe
    held" (one in 32 or fewer is another key's bit: a wasted round trip, never a wrong
    answer), unset means "not held when last read". Until the index has read the whole
    list, and again while it reads it anew (the table was cleared, or written without the
    list: :meth:`ProvedTable.rebuild_keys` mends it), it says "maybe" to everything: a
    lookup then goes to the store as it would without an index.
    """

    def __init__(self, table: ProvedTable, game: str) -> None:
        self.table = table
        self.game = game
        bits = max(16, (32 * max(1, table.max_entries) - 1).bit_length())
        self._shift = 64 - bits
        self._bitmap = np.zeros(1 << (bits - 3), np.uint8)
        self.read = 0  # keys of the list read so far
        self.ready = False  # the whole list read at the last refresh

    def might_hold(self, key: int) -> bool:
        """Whether the table may hold the position of canonical key ``key`` (always, until
        the index is ready)."""
        if not self.ready:
            return True
        h = ((key * _GOLDEN) & _MASK64) >> self._shift
        return bool(self._bitmap[h >> 3] >> (h & 7) & 1)

    def add(self, keys: list[int]) -> None:
        """Set the bits of ``keys`` (held from now on)."""
        if not keys:
            return
        h = (np.array([k & _MASK64 for k in keys], np.uint64) * np.uint64(_GOLDEN)) \
            >> np.uint64(self._shift)
        np.bitwise_or.at(self._bitmap, (h >> np.uint64(3)).astype(np.int64),
                         (np.uint8(1) << (h & np.uint64(7)).astype(np.uint8)))

    def refresh(self) -> None:
        """Read the keys added since the last call (:data:`INDEX_CHUNK` at most): ready
        once the whole list is read. Starts again from the first key where the list is
        shorter than what was read (the table was cleared) or does not match the table
        (written without the list: mended first).

        Raises:
            StoreUnavailable: the store cannot be reached (the index stays as it was).
        """
        got = self.table.keys_since(self.game, self.read, INDEX_CHUNK)
        if got.length < self.read or got.length != got.size:
            self.ready = False
            self._bitmap = np.zeros_like(self._bitmap)
            self.read = 0
            if got.length != got.size:
                self.table.rebuild_keys(game=self.game)
            return
        self.add(got.keys)
        self.read += len(got.keys)
        self.ready = self.read == got.length


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
