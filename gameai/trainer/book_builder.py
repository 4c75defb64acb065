"""The book builder: proves the positions the served model's games reach, deepest first,
and writes them to the store's shared table of proved positions
(:class:`gameai.store.ProvedTable`), the table every server reads at level best and in
hints (docs/levels.md, "Exact play").

**Which positions.** The served model (``production`` unless told otherwise) plays
``games`` games (one side each in turn, or one side only) at its move as the server plays
it at level best: where the table holds the position, the optimal move the network values
most, else its search's best move; against an opponent that plays uniformly at random (the
positions a population of players meets), perfectly (ties drawn at random: the
positions strong players meet), or as a noisy solver (perfectly, except that with a given
probability it plays a random move that does not lose: the positions where a strong
player's slip hands the served model a game to hold). Every live position up to ply
``plies`` is kept once up to symmetry (the table's key).

**In rounds.** A position proved changes the model's move there wherever the network's
move was not optimal, and so the positions after it: the games are played again with the
new proofs and what they reach that the table lacks is proved, until a round finds nothing
new (at most one round a ply), so the book holds the positions the server's own games reach.

**Every reply** (``every_reply``, against a perfect opponent): besides the sampled games,
the tree of the served model's one move against *every* optimal reply of the opponent
(:func:`reply_tree`), each round reaching one reply further where the last round proved the
opponent's position. When a build ends with nothing left, the book holds every line a
perfect opponent can take against the served model to ply ``plies``: the server's every
move there is exact, whichever optimal replies the opponent picks (:func:`tree_coverage`
checks it).

**In what order.** From the end of the opening back towards the start: every position of
ply ``plies`` first, then ``plies - 1``, down to ``from_ply``; the deeper positions are the
cheaper ones, and the book is useful from the first ply proved.

**Distributed like self-play.** Positions go out in small chunks to local processes (each
with its own solver) or to Ray tasks across a cluster (:mod:`gameai.trainer.selfplay.ray`
connects); each worker writes its proofs to the table itself.

**Resumable.** The table is the book's state: a position already held is not sent again,
so a stopped build started again goes on where it was (and a second builder, or live
traffic, only helps).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import math
import multiprocessing
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gameai.games import Game, OptimalMoves, State, TooLarge, get_game
from gameai.games.interface import Solution
from gameai.models import Model

Player = Callable[[State, random.Random], int]
Proved = Callable[[State], "Solution | None"]
SIDES = ("XO", "X", "O")

MAX_GROWTH = 4.0  # the estimate's cost growth a ply, at most (measured: up to 4x near ply 1)
CHUNK = 8  # positions per task: small, so the deepest plies spread over every worker
LOOKUP_CHUNK = 500  # positions per table read when finding what is left


@dataclass
class PlyReport:
    """One ply of a build: positions reached, already held, proved now, and what failed."""

    ply: int
    positions: int
    round: int = 1  # the games' round (:func:`build_book`)
    held: int = 0
    proved: int = 0
    timed_out: int = 0
    full: int = 0
    seconds: float = 0.0  # wall time of the ply's proofs
    solve_seconds: float = 0.0  # solver time summed over the workers

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Coverage:
    """How much of the reply tree (:func:`reply_tree`) a table holds: the model's positions
    and the opponent's, and the ply of the first position it lacks."""

    model_positions: int = 0
    model_held: int = 0
    opponent_positions: int = 0
    opponent_held: int = 0
    first_missing_ply: int | None = None

    @property
    def complete(self) -> bool:
        return (self.model_held == self.model_positions
                and self.opponent_held == self.opponent_positions)

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "complete": self.complete}


@dataclass
class BookReport:
    game: str
    plies: int
    games: int
    workers: int
    backend: str
    by_ply: list[PlyReport] = field(default_factory=list)
    coverage: dict[str, Coverage] = field(default_factory=dict)  # every_reply: by side


def model_move(model: Model, state: State,
               solution: Solution | OptimalMoves | None = None) -> int:
    """The move the server plays at level best (the rule of
    :func:`gameai.service.core._exact_move`, kept in step with it): where ``solution``
    proves the position, the optimal move the network values most; else the network's
    (its search's best move at its default depth, for a model that searches; else its best
    value)."""
    depth = model.default_depth
    best = (model.search(state, depth, best_only=True) if depth is not None
            else model.evaluate(state)).best.action_id
    if solution is None:
        return best
    optimal = set(solution.optimal_moves)
    if best in optimal:
        return best
    ranked = model.search(state, depth) if depth is not None else model.evaluate(state)
    return next(m.action_id for m in ranked.moves if m.action_id in optimal)


def random_opponent(state: State, rng: random.Random) -> int:
    """A uniformly random legal move."""
    return rng.choice(state.legal_actions())


def reached_positions(model: Model, *, plies: int, games: int, seed: int = 0,
                      opponent: Player = random_opponent, sides: str = "XO",
                      proved: Proved = lambda _: None) -> list[list[State]]:
    """The live positions up to ply ``plies`` of ``games`` games of ``model`` (with
    ``sides`` "XO": as X in even games, as O in odd ones; else always that side) against
    ``opponent``, one per canonical key: ``[ply] -> positions``. The model's moves are the
    server's (:func:`model_move`) with the solutions ``proved`` holds; a proved position of
    the opponent's is met by :func:`proved_reply` when the opponent is not random (a
    solver then needs no search of its own there)."""
    if sides not in SIDES:
        raise ValueError(f"sides must be one of {', '.join(SIDES)}, got {sides!r}")
    game = model.game
    rng = random.Random(seed)
    seen: set[int] = set()
    by_ply: list[list[State]] = [[] for _ in range(plies + 1)]
    chosen: dict[int, int] = {}  # the model's move by position: the games share their lines
    for number in range(games):
        model_side = sides if len(sides) == 1 else sides[number % 2]
        state = game.initial()
        for ply in range(plies + 1):
            if state.is_over():
                break
            _keep_once(state, ply, seen, by_ply)
            if ply == plies:
                break
            if state.to_move == model_side:
                if state.key not in chosen:
                    chosen[state.key] = model_move(model, state, proved(state))
                action = chosen[state.key]
            elif opponent is not random_opponent and (solution := proved(state)) is not None:
                action = proved_reply(opponent, solution, rng)
            else:
                action = opponent(state, rng)
            state = state.play(action)
    return by_ply


def proved_reply(opponent: Player, solution: Solution, rng: random.Random) -> int:
    """A solver opponent's move at a position the table holds, without a search of its
    own: an optimal move, ties drawn at random; for a noisy solver
    (:class:`~gameai.trainer.evaluation.judge.NoisySolver`), with its probability, a random
    move that does not lose instead (any move, where every move loses), as it plays one."""
    from gameai.trainer.evaluation.judge import NoisySolver

    if isinstance(opponent, NoisySolver) and rng.random() < opponent.p:
        safe = sorted(m.move for m in solution.moves if m.outcome != "loss") or \
            sorted(m.move for m in solution.moves)
        return safe[int(rng.random() * len(safe))]
    optimal = sorted(solution.optimal_moves)
    return optimal[int(rng.random() * len(optimal))]


def reply_tree(model: Model, *, plies: int, side: str, proved: Proved,
               chosen: dict[int, int] | None = None) -> list[list[State]]:
    """The positions of the tree where ``model`` (playing ``side``) makes the server's move
    (:func:`model_move`) and the opponent makes each of its optimal moves, up to ply
    ``plies``: ``[ply] -> positions``, one per canonical key. An opponent's position that
    ``proved`` does not hold is a leaf (its replies are not known yet: a build proves it,
    and the next round goes on from it). Positions are expanded by their own key, not their
    mirror's: a network whose values tie may break the tie differently in a mirror image.
    ``chosen`` keeps the model's moves at proved positions from one call to the next (a
    build's rounds walk the same tree again)."""
    game = model.game
    chosen = {} if chosen is None else chosen
    seen: set[int] = set()
    expanded: set[int] = set()
    by_ply: list[list[State]] = [[] for _ in range(plies + 1)]
    stack = [(game.initial(), 0)]
    while stack:
        state, ply = stack.pop()
        if state.is_over() or state.key in expanded:
            continue
        expanded.add(state.key)
        _keep_once(state, ply, seen, by_ply)
        if ply == plies:
            continue
        if state.to_move == side:
            solution = proved(state)
            move = chosen.get(state.key) if solution is not None else None
            if move is None:
                move = model_move(model, state, solution)
                if solution is not None:  # a proved position's move is settled for good
                    chosen[state.key] = move
            actions = [move]
        elif (solution := proved(state)) is not None:
            actions = sorted(solution.optimal_moves)
        else:
            continue
        stack += [(state.play(a), ply + 1) for a in actions]
    return by_ply


def tree_coverage(model: Model, *, plies: int, side: str, proved: Proved) -> Coverage:
    """What the table (read through ``proved``) holds of ``model``'s reply tree to ply
    ``plies``: complete when every position of it is proved, so that every optimal reply
    of the opponent has been followed and the server's move is exact at every ply."""
    coverage = Coverage()
    for ply, states in enumerate(reply_tree(model, plies=plies, side=side, proved=proved)):
        for state in states:
            held = proved(state) is not None
            if state.to_move == side:
                coverage.model_positions += 1
                coverage.model_held += held
            else:
                coverage.opponent_positions += 1
                coverage.opponent_held += held
            if not held and coverage.first_missing_ply is None:
                coverage.first_missing_ply = ply
    return coverage


def prove_chunk(store_url: str, prefix: str, max_entries: int, game_name: str,
                positions: list[tuple[str, str]], time_limit: float | None
                ) -> list[tuple[str, float]]:
    """Prove each position (board text, side to move) not yet held and write it to the
    table: ``(result, solver seconds)`` each, result ``held``, ``written``, ``full`` or
    ``timeout``. Runs in a worker process or a Ray task; the store is opened once per
    worker."""
    game = get_game(game_name)
    table = _worker_store(store_url, prefix).proved(max_entries=max_entries)
    out = []
    for text, side in positions:
        state = game.parse(text, to_move=side)
        if table.get(state) is not None:
            out.append(("held", 0.0))
            continue
        started = time.perf_counter()
        try:
            solution = game.solve(state, time_limit=time_limit)
        except TooLarge:
            out.append(("timeout", time.perf_counter() - started))
            continue
        seconds = time.perf_counter() - started
        out.append((table.put(state, solution)[0], seconds))
    return out


_stores: dict[tuple[str, str], Any] = {}


def _worker_store(url: str, prefix: str) -> Any:
    from gameai.store import ModelStore

    store = _stores.get((url, prefix))
    if store is None:
        store = _stores[url, prefix] = ModelStore.from_url(url, prefix=prefix)
    return store


Submit = Callable[..., "cf.Future[list[tuple[str, float]]]"]


@contextlib.contextmanager
def local_pool(workers: int) -> Iterator[Submit]:
    """``workers`` local processes (spawned: each loads its own solver)."""
    context = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(workers, mp_context=context) as pool:
        yield lambda *args: pool.submit(prove_chunk, *args)


@contextlib.contextmanager
def ray_pool() -> Iterator[Submit]:
    """Ray tasks on the cluster :func:`gameai.trainer.selfplay.ray.connect` joined, one CPU
    each."""
    from gameai.trainer.selfplay.ray import _ray

    ray = _ray()  # says what to install (pip install 'gameai[ray]') where Ray is missing
    remote = ray.remote(num_cpus=1)(prove_chunk)
    yield lambda *args: remote.remote(*args).future()


def build_book(model: Model, *, store_url: str, prefix: str, plies: int, games: int,
               submit: Submit, workers: int, backend: str = "local", from_ply: int = 0,
               seed: int = 0, max_entries: int, time_limit: float | None = None,
               opponent: Player = random_opponent, sides: str = "XO",
               every_reply: bool = False, progress: Any = None,
               notes: Callable[[str], None] = lambda _: None) -> BookReport:
    """Prove the positions ``model``'s games against ``opponent`` reach
    (:func:`reached_positions`), from ply ``plies`` down to ``from_ply``, writing each to
    the table as it is proved; in rounds, until the games (played again with the proofs)
    reach no position the table lacks, or one round a ply was played.

    Args:
        submit: runs :func:`prove_chunk` somewhere (:func:`local_pool`, :func:`ray_pool`).
        every_reply: also the tree of every optimal reply of the opponent
            (:func:`reply_tree`, for each side in ``sides``), until a round finds nothing
            new in it either; ``opponent`` must not be random. The opponent's positions
            before ``from_ply`` are followed only where the table holds them.
        progress: a :class:`gameai.trainer.progress.Progress`-like bar (``advance``),
            advanced once per position settled.
        notes: told, after each ply, what it took and an estimate of what is left.
    """
    from gameai.store import ModelStore

    game: Game = model.game
    if every_reply and opponent is random_opponent:
        raise ValueError("every_reply follows a perfect opponent's optimal replies; "
                         "a random opponent has none")
    report = BookReport(game.name, plies, games, workers, backend)
    failed: set[int] = set()  # positions out of time: not sent again in a later round
    with ModelStore.from_url(store_url, prefix=prefix) as store:
        table = store.proved(max_entries=max_entries)
        cache: dict[int, Solution | None] = {}
        chosen: dict[int, int] = {}  # the model's moves at proved positions, every round

        def proved(state: State) -> Solution | None:
            if state.key not in cache:
                cache[state.key] = table.get(state)
            return cache[state.key]

        # a round a ply at most; the reply tree reaches one reply further each round
        for number in range(1, (plies if every_reply else plies - from_ply) + 2):
            by_ply = reached_positions(model, plies=plies, games=games, seed=seed,
                                       opponent=opponent, sides=sides, proved=proved)
            if every_reply:
                by_ply = _joined(by_ply, *(reply_tree(model, plies=plies, side=side,
                                                      proved=proved, chosen=chosen)
                                           for side in sides))
            left = {p: [s for s in _unheld(table, by_ply[p]) if s.key not in failed]
                    for p in range(from_ply, plies + 1)}
            if number > 1 and not any(left.values()):
                break
            if progress is not None:
                progress.set_total(sum(len(v) for v in left.values()))
            _prove_plies(report, number, by_ply, left, submit, store_url, prefix,
                         max_entries, time_limit, progress, notes, failed)
            cache = {k: v for k, v in cache.items() if v is not None}  # read again
        if every_reply:
            report.coverage = {side: tree_coverage(model, plies=plies, side=side,
                                                   proved=proved) for side in sides}
    return report


def _joined(*trees: list[list[State]]) -> list[list[State]]:
    """The positions of ``trees`` by ply, each canonical key once."""
    seen: set[int] = set()
    out: list[list[State]] = [[] for _ in trees[0]]
    for tree in trees:
        for ply, states in enumerate(tree):
            for state in states:
                _keep_once(state, ply, seen, out)
    return out


def _keep_once(state: State, ply: int, seen: set[int], by_ply: list[list[State]]) -> None:
    """Add ``state`` to ``by_ply[ply]`` unless a position of the same canonical key (the
    table's key: mirror images are one position) is in ``seen``."""
    key = state.canonical()[0]
    if key not in seen:
        seen.add(key)
        by_ply[ply].append(state)


def _prove_plies(report: BookReport, number: int, by_ply: list[list[State]],
                 left: dict[int, list[State]], submit: Submit, store_url: str, prefix: str,
                 max_entries: int, time_limit: float | None, progress: Any,
                 notes: Callable[[str], None], failed: set[int]) -> None:
    """One round of :func:`build_book`: the positions ``left``, deepest ply first."""
    game = report.game
    per_position: dict[int, float] = {}  # wall seconds per position proved, by ply
    for ply in sorted(left, reverse=True):
        todo = left[ply]
        if number > 1 and not todo:
            continue  # a later round reports only the plies it proved something at
        done = PlyReport(ply, len(by_ply[ply]), round=number,
                         held=len(by_ply[ply]) - len(todo))
        started = time.perf_counter()
        chunks = [todo[i:i + CHUNK] for i in range(0, len(todo), CHUNK)]
        futures = {submit(store_url, prefix, max_entries, game,
                          [(str(s), s.to_move) for s in chunk], time_limit): chunk
                   for chunk in chunks}
        for future in cf.as_completed(futures):
            results = future.result()
            for state, (result, seconds) in zip(futures[future], results, strict=True):
                done.solve_seconds += seconds
                if result == "written":
                    done.proved += 1
                elif result == "held":
                    done.held += 1
                elif result == "full":
                    done.full += 1
                    failed.add(state.key)
                else:
                    done.timed_out += 1
                    failed.add(state.key)
            if progress is not None:
                progress.advance(len(results), note=f"round {number}, ply {ply}")
        done.seconds = time.perf_counter() - started
        report.by_ply.append(done)
        if todo:
            per_position[ply] = done.solve_seconds / len(todo)
        which = "" if number == 1 else f"round {number} (the games again with the proofs): "
        notes(which + _estimate(ply, done, per_position, left, min(left), report.workers))


def _unheld(table: Any, states: list[State]) -> list[State]:
    out = []
    for i in range(0, len(states), LOOKUP_CHUNK):
        chunk = states[i:i + LOOKUP_CHUNK]
        out += [s for s, got in zip(chunk, table.get_many(chunk), strict=True) if got is None]
    return out


def _estimate(ply: int, done: PlyReport, per_position: dict[int, float],
              left: dict[int, list[State]], from_ply: int, workers: int) -> str:
    """What a ply took and what is left, in words: the positions of the shallower plies
    times the last ply's solver seconds per position, grown ply by ply by the mean factor
    measured so far (:func:`_growth`), over ``workers``."""
    text = (f"ply {ply}: {done.positions} positions, {done.held} held, {done.proved} proved, "
            f"{done.timed_out} out of time, {done.full} refused (table full) in "
            f"{done.seconds:.1f} s ({done.solve_seconds:.1f} s of solver time)")
    if ply == from_ply or ply not in per_position:
        return text
    growth = _growth(per_position)
    estimate, cost = 0.0, per_position[ply]
    for shallower in range(ply - 1, from_ply - 1, -1):
        cost *= growth
        estimate += cost * len(left[shallower])
    remaining = sum(len(left[p]) for p in range(from_ply, ply))
    return (f"{text}; left: {remaining} positions, about {estimate:,.0f} s of solver time "
            f"({estimate / max(1, workers):,.0f} s on {workers} worker(s)), each ply "
            f"{growth:.1f}x the one after it")


def _growth(per_position: dict[int, float]) -> float:
    """How much dearer a position gets a ply nearer the start: the factor of a straight
    line fitted to the logarithm of the cost per position against the ply, over every ply
    measured (one ply to the next swings, odd plies against even ones, and the first
    includes loading the solver), at least 1 and at most :data:`MAX_GROWTH` (a fit over
    the end game's microsecond proofs, timer noise, once gave 8x a ply and an estimate of
    10^33 seconds)."""
    measured = sorted(p for p, cost in per_position.items() if cost > 0)
    if len(measured) < 2:
        return 1.0
    slope = np.polyfit(measured, [math.log(per_position[p]) for p in measured], 1)[0]
    return min(MAX_GROWTH, max(1.0, math.exp(-slope)))
