"""A book of solved positions kept on disk, so the perfect opponent is paid for once.

Judging a Connect Four model against perfect play asks the search for the optimal moves of
positions from the first ply on; the earliest take minutes each (the empty board took
5 minutes of CPU), and every judgement of every model meets them again. The book keeps each
answer the solver proved (:meth:`Game.optimal_actions`, :meth:`Game.non_losing_actions`,
:meth:`Game.forced_win_actions`) by position, in a JSON-lines file appended to as answers
come: a judgement stopped half way keeps what it proved, and the next one starts from
there. Only proved answers are kept; nothing is guessed, and nothing is ever unpickled.

One line a position and question::

    {"game": "connect-four", "key": 123, "ask": "optimal", "moves": [23]}

A damaged line (a write cut short by a kill) is skipped on load and counted in
:attr:`Book.skipped`. A book whose file cannot be written (a read-only cache folder in a
container) keeps its answers in memory and says why in :attr:`Book.unwritable`: a judge
never fails for want of a cache.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

from gameai.games import Game, State

ASKS = ("optimal", "non_losing", "winning")


class Book:
    """Proved answers of ``game``'s solver by position, read from and appended to ``path``
    (``None``: in memory only)."""

    def __init__(self, game: Game, path: Path | None = None) -> None:
        self.game = game
        self.path = path
        self.skipped = 0  # damaged or foreign lines met on load
        self.unwritable: str | None = None  # why the file is not written, once it failed
        self.hits = self.misses = 0
        self._answers: dict[tuple[str, int], tuple[int, ...]] = {}
        self._lock = threading.Lock()
        if path is not None and path.exists():
            try:
                self._load(path)
            except OSError as e:
                self.unwritable = f"{path}: {e.strerror or e}"

    def __len__(self) -> int:
        return len(self._answers)

    def answer(self, ask: str, state: State, solve: Callable[[], tuple[int, ...]]
               ) -> tuple[int, ...]:
        """The book's answer to ``ask`` about ``state``, else ``solve()``'s, kept and
        written down. Whatever ``solve`` raises (a search out of time) passes through and
        nothing is kept."""
        if ask not in ASKS:
            raise ValueError(f"ask must be one of {', '.join(ASKS)}, got {ask!r}")
        found = self._answers.get((ask, state.key))
        if found is not None:
            self.hits += 1
            return found
        self.misses += 1
        moves = tuple(solve())
        self._keep(ask, state.key, moves)
        return moves

    def _keep(self, ask: str, key: int, moves: tuple[int, ...]) -> None:
        """Hold the answer and append it to the file."""
        with self._lock:
            self._answers[(ask, key)] = moves
            if self.path is not None and self.unwritable is None:
                line = {"game": self.game.name, "key": key, "ask": ask,
                        "moves": list(moves)}
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    with self.path.open("a", encoding="utf-8") as f:
                        f.write(json.dumps(line) + "\n")
                except OSError as e:
                    self.unwritable = f"{self.path}: {e.strerror or e}"

    def items(self) -> list[tuple[tuple[str, int], tuple[int, ...]]]:
        """Every ``((ask, key), moves)`` the book holds."""
        with self._lock:
            return list(self._answers.items())

    def add(self, ask: str, key: int, moves: tuple[int, ...]) -> None:
        """Keep an answer proved elsewhere (a Ray task's), written down like one proved
        here; an answer the book holds already is kept as it is."""
        if (ask, key) in self._answers:
            return
        self._keep(ask, key, tuple(moves))

    def _load(self, path: Path) -> None:
        actions = self.game.num_actions
        with path.open(encoding="utf-8") as f:
            for text in f:
                try:
                    line = json.loads(text)
                    ask, key, moves = line["ask"], line["key"], line["moves"]
                    ok = line["game"] == self.game.name and ask in ASKS and \
                        isinstance(key, int) and isinstance(moves, list) and \
                        all(isinstance(m, int) and 0 <= m < actions for m in moves)
                except (ValueError, KeyError, TypeError):
                    ok = False
                if not ok:
                    self.skipped += 1
                    continue
                self._answers[(ask, key)] = tuple(moves)


def default_book(game: Game) -> Book:
    """``game``'s book in the solver's cache folder (``GAMEAI_CACHE_DIR``, else the user's
    cache), shared by every judgement and calibration on this machine."""
    from gameai.host import cache_dir

    return Book(game, cache_dir() / f"book-{game.name}.jsonl")
