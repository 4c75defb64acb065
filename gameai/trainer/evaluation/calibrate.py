"""Calibration of the levels of play: how each level scores against perfect and random play.

For one game and one model, every level (:mod:`gameai.models.levels`) plays ``games``
games against each opponent as X and as O:

* **perfect**: the exact solver's play, a move drawn uniformly among the optimal ones (the
  best exact score: the fastest win, the slowest loss), so that games vary; from the
  whole-game table where it fits, else from the game's search (Connect Four) within a time
  limit per position, past which the move with the best proved bound is played and the
  report says what share of the opponent's moves were proved optimal;
* **random**: a legal move drawn uniformly.

A game is scored 1 for a win, 1/2 for a draw, 0 for a loss; rates come with Wilson 95%
intervals and scores with normal ones. Levels are *ordered* when each one's mean score
over the four match-ups is above the level below's with 95% confidence (the difference's
interval lies above 0); :func:`calibrate` names every adjacent pair that is not.

Games whose positions repeat (``game.cyclic``) end in a draw when a position occurs for
the third time, as in :mod:`gameai.games.morris.game`. Every draw comes from one seeded
generator, so a calibration is repeatable.
"""

from __future__ import annotations

import itertools
import math
import os
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gameai.games import Game, State, TooLarge
from gameai.games.mnk.search import MoveBounds, SearchTimeout
from gameai.models import Model
from gameai.models.levels import LEVELS, Level, choose, winning_actions
from gameai.models.model import MoveValue
from gameai.trainer.evaluation.book import Book

OPPONENTS = ("perfect", "random")
SIDES = ("X", "O")
Z95 = 1.959964
Player = Callable[[State, random.Random], int]


class PerfectPlayer:
    """Plays an optimal move by the exact solver's scores (drawn among ties), from the
    game's whole-game table (:meth:`~gameai.games.interface.Game.move_scores`)."""

    def __init__(self, game: Game) -> None:
        keys, scores, legal = game.move_scores()  # raises TooLarge for big games
        self.game = game
        self.book: Book | None = None  # no book: the table answers at once
        self.exact_moves = 0  # moves played that the solver had proved optimal
        self.guessed_moves = 0  # played from bounds (:class:`SearchPlayer` past its time)
        self._row = {int(k): i for i, k in enumerate(keys.tolist())}
        self._scores = np.where(legal, scores, np.iinfo(np.int16).min).astype(np.int16)
        self._optimal: dict[int, tuple[int, ...]] = {}

    def optimal(self, state: State) -> tuple[int, ...]:
        """The optimal actions of ``state``, ascending."""
        found = self._optimal.get(state.key)
        if found is None:
            key, sym = state.canonical()
            perm = self.game.action_symmetries[sym]
            row = self._scores[self._row[key]]
            scored = [(int(row[perm[a]]), a) for a in state.legal_actions()]
            best = max(s for s, _ in scored)
            found = self._optimal[state.key] = tuple(a for s, a in scored if s == best)
        return found

    def proved(self, state: State) -> bool:
        """Whether :meth:`optimal` of ``state`` is proved (always, from a table)."""
        return True

    def __call__(self, state: State, rng: random.Random) -> int:
        options = self.optimal(state)
        if self.proved(state):
            self.exact_moves += 1
        else:
            self.guessed_moves += 1
        return options[int(rng.random() * len(options))]


class SearchPlayer(PerfectPlayer):
    """Perfect play for games past the whole-game tables: each position solved by the
    game's search within ``time_limit`` seconds. Where the search runs out of time, the
    move with the best proved bounds is played (:meth:`_best_bound`), and counted in
    :attr:`guessed_moves`: the opponent is then perfect only as far as was proved."""

    def __init__(self, game: Game, *, time_limit: float, book: Book | None = None) -> None:
        self.game = game
        self.time_limit = time_limit
        self.book: Book = book if book is not None else Book(game)  # proved answers
        self.exact_moves = self.guessed_moves = 0
        self._optimal = {}
        self._guessed: set[int] = set()

    def optimal(self, state: State) -> tuple[int, ...]:
        found = self._optimal.get(state.key)
        if found is None:
            try:
                found = self.book.answer("optimal", state, lambda: self.game.optimal_actions(
                    state, time_limit=self.time_limit))
            except SearchTimeout as e:
                found = (self._best_bound(e.partial.moves),)
                self._guessed.add(state.key)
            self._optimal[state.key] = found
        return found

    def proved(self, state: State) -> bool:
        return state.key not in self._guessed

    @property
    def answers(self) -> dict[int, tuple[int, ...]]:
        """Every answer played so far by position key, proved or guessed."""
        return self._optimal

    @property
    def guessed_keys(self) -> set[int]:
        """The positions whose answer was guessed from bounds."""
        return self._guessed

    def remember(self, guessed: dict[int, tuple[int, ...]]) -> None:
        """Keep guessed answers made elsewhere (a Ray task's), so every later model meets
        them here too; a position already answered keeps its answer."""
        for key, moves in guessed.items():
            if key not in self._optimal:
                self._optimal[key] = tuple(moves)
                self._guessed.add(key)

    def _best_bound(self, bounds: Sequence[MoveBounds]) -> int:
        """The move with the best proved lower bound, then upper bound, then nearest the
        board's centre (where the bounds say nothing, as in an opening: the centre is
        Connect Four's best first move and a sound rule of thumb on any m,n,k board)."""
        game = self.game
        centre_row, centre_col = (game.rows - 1) / 2, (game.cols - 1) / 2

        def rank(mb: MoveBounds) -> tuple[int, int, float]:
            row, col = divmod(game.split_action(mb.move)[1], game.cols)
            return (mb.lower, mb.upper, -abs(col - centre_col) - abs(row - centre_row) / 8)
        return max(bounds, key=rank).move


def perfect_player(game: Game, *, time_limit: float = 1.0, book: Book | None = None
                   ) -> PerfectPlayer:
    """The whole-game table's perfect player where the table fits, else the search's (its
    proved answers kept in ``book``)."""
    try:
        return PerfectPlayer(game)
    except TooLarge:
        return SearchPlayer(game, time_limit=time_limit, book=book)


def random_player(state: State, rng: random.Random) -> int:
    actions = state.legal_actions()
    return actions[int(rng.random() * len(actions))]


class LevelPlayers:
    """The levels of one model, sharing one cache of its evaluations; a model that searches
    plays by its search ``depth`` plies deep, as the server does."""

    def __init__(self, model: Model, depth: int | None = None) -> None:
        self.model = model
        self.depth = depth
        self._seen: dict[int, tuple[tuple[MoveValue, ...], tuple[int, ...]]] = {}

    def _evaluate(self, state: State) -> tuple[MoveValue, ...]:
        if self.depth is None:
            return self.model.evaluate(state).moves
        return self.model.search(state, self.depth).moves

    def player(self, level: Level) -> Player:
        def play(state: State, rng: random.Random) -> int:
            found = self._seen.get(state.key)
            if found is None:
                found = self._seen[state.key] = (self._evaluate(state),
                                                 winning_actions(state))
            return choose(level, found[0], found[1], rng).action_id
        return play


def play_game(game: Game, x: Player, o: Player, rng: random.Random) -> str | None:
    """One game from the start: the winner, or ``None`` for a draw."""
    state = game.initial()
    seen = {state.key: 1} if game.cyclic else None
    while not state.is_over():
        state = state.play((x if state.to_move == "X" else o)(state, rng))
        if seen is not None:
            seen[state.key] = seen.get(state.key, 0) + 1
            if seen[state.key] >= 3:
                return None
    return state.winner()


@dataclass
class Tally:
    """The results of one level against one opponent from one side."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + self.draws / 2) / max(self.games, 1)

    @property
    def score_variance(self) -> float:
        """The variance of the mean score (per-game variance over the games)."""
        n = max(self.games, 1)
        mean = self.score
        second = (self.wins + self.draws / 4) / n
        return max(second - mean * mean, 0.0) / n

    def to_json(self) -> dict[str, Any]:
        n = self.games
        half = Z95 * math.sqrt(self.score_variance)
        return {"games": n, "wins": self.wins, "draws": self.draws, "losses": self.losses,
                "win_rate": _rate(self.wins, n), "draw_rate": _rate(self.draws, n),
                "loss_rate": _rate(self.losses, n),
                "score": _interval(self.score, self.score - half, self.score + half)}


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson 95% interval of a proportion ``k / n``."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + Z95 ** 2 / (2 * n)) / (1 + Z95 ** 2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / (1 + Z95 ** 2 / n)
    return max(centre - half, 0.0), min(centre + half, 1.0)


def _rate(k: int, n: int) -> dict[str, float]:
    low, high = wilson(k, n)
    return _interval(k / max(n, 1), low, high)


def _interval(value: float, low: float, high: float) -> dict[str, float]:
    return {"value": round(value, 4), "low": round(low, 4), "high": round(high, 4)}


def calibrate(game: Game, model: Model, *, games: int = 2000, seed: int = 0,
              time_limit: float = 1.0, depth: int | None = None, book: Book | None = None,
              progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Every level against perfect and random play, ``games`` games per side and opponent.

    Args:
        depth: for a model that searches, how deep (default: the model's own default, the
            server's).
        time_limit: seconds the search may take on a position, for a game past the
            whole-game tables (:class:`SearchPlayer`).
        book: where that search keeps its proved answers
        (:class:`gameai.trainer.evaluation.book.Book`).
        progress: called with the number of games just played (for a progress bar).
    """
    started = time.perf_counter()
    rng = random.Random(seed)
    perfect = perfect_player(game, time_limit=time_limit, book=book)
    opponents: dict[str, Player] = {"perfect": perfect, "random": random_player}
    if depth is None:
        depth = model.default_depth
    players = LevelPlayers(model, depth)
    results: dict[str, dict[str, dict[str, Tally]]] = {}
    for name, level in LEVELS.items():
        me = players.player(level)
        results[name] = {}
        for opponent, them in opponents.items():
            results[name][opponent] = {}
            for side in SIDES:
                tally = results[name][opponent][side] = Tally()
                for _ in range(games):
                    x, o = (me, them) if side == "X" else (them, me)
                    winner = play_game(game, x, o, rng)
                    if winner is None:
                        tally.draws += 1
                    elif winner == side:
                        tally.wins += 1
                    else:
                        tally.losses += 1
                if progress is not None:
                    progress(games)
    levels = {name: _level_json(tallies) for name, tallies in results.items()}
    order = list(_order(results))
    moves = perfect.exact_moves + perfect.guessed_moves
    return {"game": game.name, "model": model.info.to_json(), "depth": depth,
            "games": games, "seed": seed,
            "perfect_opponent": {
                "solver": "search" if isinstance(perfect, SearchPlayer) else "table",
                "time_limit": time_limit if isinstance(perfect, SearchPlayer) else None,
                "moves": moves, "proved_optimal": perfect.exact_moves,
                "proved_share": round(perfect.exact_moves / max(moves, 1), 4)},
            "levels": levels, "order": order,
            "unordered": [f"{o['lower']} < {o['upper']}" for o in order if not o["ordered"]],
            "seconds": round(time.perf_counter() - started, 1),
            "load_average": [round(v, 2) for v in os.getloadavg()]}


def matchups() -> Iterator[tuple[str, str]]:
    return ((opponent, side) for opponent in OPPONENTS for side in SIDES)


def _level_json(tallies: dict[str, dict[str, Tally]]) -> dict[str, Any]:
    out: dict[str, Any] = {o: {s: tallies[o][s].to_json() for s in SIDES} for o in OPPONENTS}
    mean, variance = _pooled(tallies)
    half = Z95 * math.sqrt(variance)
    out["score"] = _interval(mean, mean - half, mean + half)
    return out


def _pooled(tallies: dict[str, dict[str, Tally]]) -> tuple[float, float]:
    """The mean score over the four match-ups (equal weights) and its variance."""
    cells = [tallies[o][s] for o, s in matchups()]
    mean = sum(t.score for t in cells) / len(cells)
    return mean, sum(t.score_variance for t in cells) / len(cells) ** 2


def _order(results: dict[str, dict[str, dict[str, Tally]]]) -> Iterator[dict[str, Any]]:
    names = list(results)
    for lower, upper in itertools.pairwise(names):
        (a, va), (b, vb) = _pooled(results[upper]), _pooled(results[lower])
        half = Z95 * math.sqrt(va + vb)
        yield {"lower": lower, "upper": upper, "difference": _interval(a - b, a - b - half,
                                                                      a - b + half),
               "ordered": a - b - half > 0}
