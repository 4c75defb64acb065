"""The judge's work spread over a Ray cluster: the gates' matches and the solver's labels of
benchmark positions, the other half of a training run's time (issue 24, point 2).

Both are split into pieces whose result does not depend on where or in what order they
run, so a judgement is the same on one core and on a cluster:

* a match of ``games`` games is cut into :data:`CHUNK`-game :class:`Chunk` s, each with
  its own seeded generator (:func:`chunk_rng`); a chunk is played by :func:`play_chunk`;
* positions to label are cut into :data:`LABELS`-position lists, each solved by
  :func:`label_positions`.

:class:`Here` plays the pieces one after another in this process, with the judge's own
opponents (their answers kept between models, as the gates want). :class:`RayTasks` sends
each piece to the cluster as a Ray task (one CPU): the model travels as its file's bytes
(put in the object store once), the opponent's known answers as a :class:`Known`
snapshot, and each task sends back the answers it proved or guessed, which the driver adds
to its own opponent, so later models meet the same answers as here. Ray's messages are
pickled between its processes: a cluster is one trust domain (docs/operations.md);
nothing a user stored is unpickled.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from gameai.games import Game, State, get_game
from gameai.games.mnk.search import SearchTimeout

CHUNK = 25  # games of one match a piece plays
LABELS = 20  # positions a labelling piece solves
RANK = {"loss": 0, "draw": 1, "win": 2}


@dataclass(frozen=True)
class Chunk:
    """Games ``first`` .. ``first + games - 1`` of the match ``label``: the model plays
    ``side`` against the perfect opponent (``noise`` None) or the noisy one."""

    label: str
    side: str
    seed: int
    first: int
    games: int
    noise: float | None = None


def chunk_rng(chunk: Chunk) -> random.Random:
    """The generator of one chunk: from the match's seed and the chunk's first game, so a
    chunk plays the same games wherever it runs."""
    return random.Random(f"{chunk.seed}:{chunk.first}")


def chunks(label: str, side: str, seed: int, games: int, noise: float | None = None
           ) -> list[Chunk]:
    """The match ``label`` of ``games`` games cut into :data:`CHUNK`-game pieces."""
    return [Chunk(label, side, seed, first, min(CHUNK, games - first), noise)
            for first in range(0, games, CHUNK)]


@dataclass
class Played:
    """What a chunk's games ended in: the winners (``None``: a draw) and the move lines."""

    chunk: Chunk
    winners: list[str | None]
    lines: list[tuple[int, ...]]
    exact_moves: int = 0  # the opponent's moves that were proved optimal
    guessed_moves: int = 0  # played from bounds, past the search's time
    known: Known | None = None  # what a remote chunk's opponent learned (Ray only)


@dataclass
class Known:
    """What the opponent knows, as plain data: proved answers (``optimal``,
    ``non_losing``), the guessed optimal answers it keeps so that every model meets the
    same ones, and the noisy solvers' safe moves."""

    searched: bool = False  # the opponent searches (past the tables), else reads a table
    optimal: dict[int, tuple[int, ...]] = field(default_factory=dict)
    non_losing: dict[int, tuple[int, ...]] = field(default_factory=dict)
    guessed: dict[int, tuple[int, ...]] = field(default_factory=dict)
    safe: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.optimal) + len(self.non_losing) + len(self.guessed) + len(self.safe)


Player = Callable[[State, random.Random], int]


def play_chunk(game: Game, me: Player, opponent: Player, chunk: Chunk,
               each: Callable[[], None] | None = None) -> Played:
    """The chunk's games of ``me`` against ``opponent``, from the chunk's own generator;
    ``each`` is called after every game."""
    from gameai.trainer.evaluation.judge import play_line

    rng = chunk_rng(chunk)
    winners, lines = [], []
    for _ in range(chunk.games):
        x, o = (me, opponent) if chunk.side == "X" else (opponent, me)
        winner, line = play_line(game, x, o, rng)
        winners.append(winner)
        lines.append(line)
        if each is not None:
            each()
    return Played(chunk, winners, lines)


def label_positions(game: Game, states: Sequence[State], time_limit: float
                    ) -> list[dict[int, int] | None]:
    """Each position's moves ranked by their exact outcome (loss 0, draw 1, win 2), or
    ``None`` where the solver could not settle it within ``time_limit`` seconds."""
    out: list[dict[int, int] | None] = []
    for state in states:
        try:
            solution = game.solve(state, time_limit=time_limit)
        except SearchTimeout:
            out.append(None)
            continue
        out.append({m.move: RANK[m.outcome] for m in solution.moves})
    return out


class Opponents(Protocol):
    """The judge's opponents as :class:`Here` and :class:`RayTasks` use them."""

    game: Game
    time_limit: float

    def opponent(self, noise: float | None) -> Player: ...

    def counts(self) -> tuple[int, int]: ...

    def known(self) -> Known: ...

    def learn(self, known: Known) -> None: ...


class Runner(Protocol):
    """Where the pieces run."""

    name: str

    def play(self, opponents: Opponents, model_bytes: Callable[[], bytes], me: Player,
             pieces: Sequence[Chunk], done: Callable[[Chunk, int], None]) -> list[Played]:
        """Every chunk's games (in the chunks' order), ``done(chunk, n)`` told as ``n``
        more of a chunk's games end."""

    def label(self, game: Game, states: Sequence[State], time_limit: float,
              done: Callable[[int], None] | None = None) -> list[dict[int, int] | None]: ...


class Here:
    """Every piece in this process, one after another."""

    name = "local"

    def play(self, opponents: Opponents, model_bytes: Callable[[], bytes], me: Player,
             pieces: Sequence[Chunk], done: Callable[[Chunk, int], None]) -> list[Played]:
        out = []
        for chunk in pieces:
            before = opponents.counts()
            played = play_chunk(opponents.game, me, opponents.opponent(chunk.noise), chunk,
                                functools.partial(done, chunk, 1))
            after = opponents.counts()
            played.exact_moves, played.guessed_moves = (after[0] - before[0],
                                                        after[1] - before[1])
            out.append(played)
        return out

    def label(self, game: Game, states: Sequence[State], time_limit: float,
              done: Callable[[int], None] | None = None) -> list[dict[int, int] | None]:
        out: list[dict[int, int] | None] = []
        for first in range(0, len(states), LABELS):
            out += label_positions(game, states[first:first + LABELS], time_limit)
            if done is not None:
                done(len(out))
        return out


# -- on a Ray cluster ------------------------------------------------------------------------

def _remote_chunk(game_name: str, model: bytes, known: Known, time_limit: float,
                  chunk: Chunk) -> Played:
    """One chunk inside a Ray task: the model loaded from its bytes, an opponent that
    knows what the driver's knows; returns the games and what the opponent learned."""
    from gameai.models import load_model
    from gameai.trainer.evaluation.calibrate import SearchPlayer
    from gameai.trainer.evaluation.judge import Opponents as JudgeOpponents
    from gameai.trainer.evaluation.judge import model_player, served_policy

    game = get_game(game_name)
    policy, _ = served_policy(load_model(model))
    perfect = SearchPlayer(game, time_limit=time_limit) if known.searched else None
    opponents = JudgeOpponents(game, time_limit, perfect=perfect)
    opponents.learn(known)
    before = opponents.known()
    played = Here().play(opponents, lambda: model, model_player(policy, None), [chunk],
                         lambda _c, _n: None)[0]
    played.known = _new(opponents.known(), before)
    return played


def _remote_labels(game_name: str, texts: list[tuple[str, str]], time_limit: float
                   ) -> list[dict[int, int] | None]:
    game = get_game(game_name)
    states = [game.parse(text, to_move=to_move) for text, to_move in texts]
    return label_positions(game, states, time_limit)


def _new(after: Known, before: Known) -> Known:
    """The answers in ``after`` that ``before`` lacks."""
    return Known(after.searched, *({k: v for k, v in getattr(after, name).items()
                                    if k not in getattr(before, name)}
                                   for name in ("optimal", "non_losing", "guessed", "safe")))


class RayTasks:
    """Every piece a Ray task (one CPU) on the cluster this process has joined
    (:func:`gameai.trainer.selfplay.ray.connect`)."""

    name = "ray"

    def __init__(self) -> None:
        from gameai.trainer.selfplay.ray import _ray

        self.ray = _ray()

    def play(self, opponents: Opponents, model_bytes: Callable[[], bytes], me: Player,
             pieces: Sequence[Chunk], done: Callable[[Chunk, int], None]) -> list[Played]:
        ray = self.ray
        model = ray.put(model_bytes())
        known = ray.put(opponents.known())
        task = ray.remote(num_cpus=1, max_retries=2)(_remote_chunk)
        refs = {task.remote(opponents.game.name, model, known, opponents.time_limit, chunk): i
                for i, chunk in enumerate(pieces)}
        out: list[Played | None] = [None] * len(pieces)
        waiting = list(refs)
        while waiting:
            ready, waiting = ray.wait(waiting, num_returns=1)
            played: Played = ray.get(ready[0])
            if played.known is not None:
                opponents.learn(played.known)  # later models meet the same answers
            out[refs[ready[0]]] = played
            done(played.chunk, played.chunk.games)
        return [p for p in out if p is not None]

    def label(self, game: Game, states: Sequence[State], time_limit: float,
              done: Callable[[int], None] | None = None) -> list[dict[int, int] | None]:
        ray = self.ray
        task = ray.remote(num_cpus=1, max_retries=2)(_remote_labels)
        texts = [(str(s), s.to_move) for s in states]
        refs = [task.remote(game.name, texts[first:first + LABELS], time_limit)
                for first in range(0, len(texts), LABELS)]
        results: list[Any] = []
        for ref in refs:  # in order; each as it comes
            results.append(ray.get(ref))
            if done is not None:
                done(sum(len(r) for r in results))
        return [label for part in results for label in part]


def runner(cluster: bool) -> Runner:
    """Ray tasks on the joined cluster, else this process."""
    return RayTasks() if cluster else Here()
