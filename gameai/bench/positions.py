"""Benchmark positions of our own: reproducible, labelled by the solver, by stage and
difficulty, after Pascal Pons's Connect Four test sets.

**Stage** is how many moves have been played: ``beginning`` at most 14, ``middle`` 15-28,
``end`` 29 or more (for boards of other sizes the same thirds of the cells).
**Difficulty** is how much of the game is left to prove: the distance to the end under
perfect play, ``easy`` under 14 plies, ``medium`` 14-27, ``hard`` 28 or more (a middle
position cannot be hard: at most 27 plies are left; an end one is always easy).

Positions come from random games: a seeded generator plays uniformly random columns,
stops at a ply drawn within the stage, and keeps the position if the game is live, the
side to move has no immediate win (that would be trivial) and its solved distance falls
in the difficulty asked. Each kept position is labelled with every legal move's exact
score (:meth:`gameai.games.mnk.search.Searcher.solve`). Same seed, same positions, same
labels: the generator's choices depend only on its random numbers and exact answers.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gameai.games.mnk.board import Board
from gameai.games.mnk.columns import drop_cell, to_moves
from gameai.games.mnk.game import MnkGame
from gameai.games.mnk.scores import describe_score
from gameai.games.mnk.search import Searcher

STAGES = ("beginning", "middle", "end")
DIFFICULTIES = ("easy", "medium", "hard")
EASY_BELOW, MEDIUM_BELOW = 14, 28  # plies left to the end under perfect play
# Beginning positions are drawn from this ply on: from the first few moves a solve takes
# minutes, which no per-position benchmark can afford (the empty board has its own).
BEGINNING_FROM = 8


@dataclass(frozen=True)
class Labelled:
    """A benchmark position and its exact labels."""

    moves: str  # the column sequence from the empty board ("4453")
    board: str  # the pattern
    ply: int
    stage: str
    difficulty: str
    score: int  # the position's score (``big - t`` for a win in ``t``)
    outcome: str
    distance: int
    move_scores: dict[int, int]  # column (from 1) -> the move's exact score

    def to_json(self) -> dict[str, object]:
        return {"moves": self.moves, "board": self.board, "ply": self.ply,
                "stage": self.stage, "difficulty": self.difficulty, "score": self.score,
                "outcome": self.outcome, "distance": self.distance,
                "move_scores": {str(c): s for c, s in sorted(self.move_scores.items())}}


def stage_plies(game: MnkGame, stage: str) -> range:
    """The plies (moves played) of a stage; on a 6x7 board 0-14, 15-28 and 29-41."""
    third = game.cells // 3
    if stage == "beginning":
        return range(min(BEGINNING_FROM, third), third + 1)
    if stage == "middle":
        return range(third + 1, 2 * third + 1)
    if stage == "end":
        return range(2 * third + 1, game.cells)
    raise ValueError(f"unknown stage {stage!r}: one of {', '.join(STAGES)}")


def difficulty_of(distance: int) -> str:
    if distance < EASY_BELOW:
        return "easy"
    return "medium" if distance < MEDIUM_BELOW else "hard"


def stage_of(game: MnkGame, ply: int) -> str:
    third = game.cells // 3
    return "beginning" if ply <= third else "middle" if ply <= 2 * third else "end"


def generate(game: MnkGame, *, stage: str, difficulty: str, count: int, seed: int = 0,
             searcher: Searcher | None = None, tries: int = 100_000,
             progress: Callable[[int], None] | None = None) -> list[Labelled]:
    """``count`` labelled positions of a stage and difficulty (gravity games).

    Args:
        searcher: labels with this searcher (its table is reused), else a new one.
        tries: random games to draw before giving up on a rare class.
        progress: called with the number kept so far, after each kept position.
    Raises:
        ValueError: an unknown stage or difficulty, a game without gravity, or fewer than
            ``count`` positions found in ``tries`` games (the class is too rare).
    """
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}: one of {', '.join(DIFFICULTIES)}")
    if not game.gravity:
        raise ValueError(f"{game.name}: benchmark positions are drawn for gravity games")
    plies = stage_plies(game, stage)
    fewest = {"easy": 0, "medium": EASY_BELOW, "hard": MEDIUM_BELOW}[difficulty]
    if game.cells - min(plies) < fewest:
        raise ValueError(f"no {stage} {difficulty} {game.name} positions exist: {difficulty} "
                         f"needs {fewest} or more plies left, and {game.cells - min(plies)} "
                         f"cells are empty at most in the {stage} (plies {min(plies)}-"
                         f"{max(plies)})")
    searcher = searcher or Searcher(game)
    rng = random.Random(f"{game.name}/{stage}/{difficulty}/{seed}")
    kept: list[Labelled] = []
    seen: set[str] = set()
    for _ in range(tries):
        if len(kept) == count:
            return kept
        drawn = _random_position(game, rng, rng.choice(plies))
        if drawn is None or drawn[1] in seen:
            continue
        columns, text = drawn
        board = game.parse(text)
        if _immediate_win(board):
            continue
        score = searcher.score(board)
        distance = describe_score(game, score, board)[1]
        if difficulty_of(distance) != difficulty:
            continue
        seen.add(text)
        kept.append(label(board, to_moves(game, columns), stage, difficulty, searcher))
        if progress is not None:
            progress(len(kept))
    if len(kept) < count:
        raise ValueError(f"only {len(kept)} {stage} {difficulty} {game.name} positions in "
                         f"{tries:,} random games; asked for {count}")
    return kept


def label(board: Board, moves: str, stage: str, difficulty: str,
          searcher: Searcher) -> Labelled:
    """``board`` with every move's exact score."""
    solution = searcher.solve(board)
    best = solution.moves[0]
    return Labelled(moves, str(board), board.ply, stage, difficulty, best.score,
                    solution.outcome, solution.distance,
                    {m.col + 1: m.score for m in solution.moves})


def _random_position(game: MnkGame, rng: random.Random, ply: int
                     ) -> tuple[list[int], str] | None:
    """A random game's first ``ply`` moves, or None if it ended before."""
    board, columns = game.initial(), []
    for _ in range(ply):
        if board.is_over():
            return None
        open_columns = [c for c in range(game.cols) if drop_cell(board, c) is not None]
        col = rng.choice(open_columns)
        cell = drop_cell(board, col)
        assert cell is not None
        board = board.play(cell)
        columns.append(col)
    if board.is_over():
        return None
    return columns, str(board)


def _immediate_win(board: Board) -> bool:
    return any(board.play(m).winner() is not None for m in board.legal_moves())


def buckets(game: MnkGame) -> Iterator[tuple[str, str]]:
    """The (stage, difficulty) classes a board of this size can have."""
    for stage in STAGES:
        plies = stage_plies(game, stage)
        left = game.cells - plies.start  # the most plies a position of the stage has left
        for difficulty in DIFFICULTIES:
            floor = {"easy": 0, "medium": EASY_BELOW, "hard": MEDIUM_BELOW}[difficulty]
            if left > floor:
                yield stage, difficulty


# -- the benchmark -----------------------------------------------------------------------

@dataclass(frozen=True)
class Timing:
    """A class of positions solved one by one, each from an empty table."""

    stage: str
    difficulty: str
    times: tuple[float, ...]  # wall seconds per position (the time limit if unsolved)
    cpu: tuple[float, ...]  # process seconds per position
    nodes: int
    unsolved: int  # positions over the time limit
    wrong: int  # solved scores that differ from the label (never, unless broken)

    def to_json(self) -> dict[str, object]:
        n = len(self.times)
        total = sum(self.times)
        return {
            "stage": self.stage, "difficulty": self.difficulty, "positions": n,
            "positions_per_second": round(n / total, 2) if total else None,
            "mean_ms": round(1000 * total / n, 3), "max_ms": round(1000 * max(self.times), 3),
            "mean_cpu_ms": round(1000 * sum(self.cpu) / n, 3),
            "nodes_per_second": round(self.nodes / total) if total else None,
            "mean_nodes": round(self.nodes / n),
            "within_2s": sum(t <= 2 for t in self.times) / n,
            "within_10s": sum(t <= 10 for t in self.times) / n,
            "unsolved": self.unsolved, "wrong": self.wrong,
        }


def time_positions(game: MnkGame, labelled: list[Labelled], *, stage: str, difficulty: str,
                   time_limit: float | None = None, tt_bits: int = 22,
                   step: Callable[[], None] | None = None) -> Timing:
    """Solve each position's score from an empty table (clearing it is not timed)."""
    from gameai.games.mnk.search import DEFAULT_TT_BITS, SearchTimeout

    searcher = Searcher(game, tt_bits=tt_bits or DEFAULT_TT_BITS)
    times, cpu = [], []
    nodes = unsolved = wrong = 0
    for p in labelled:
        board = game.parse_moves(p.moves)
        searcher.clear()
        n0 = searcher.nodes
        c0, t0 = time.process_time(), time.perf_counter()
        try:
            wrong += searcher.score(board, time_limit=time_limit) != p.score
        except SearchTimeout:
            unsolved += 1
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        nodes += searcher.nodes - n0
        if step is not None:
            step()
    return Timing(stage, difficulty, tuple(times), tuple(cpu), nodes, unsolved, wrong)


def cached_set(game: MnkGame, *, stage: str, difficulty: str, count: int, seed: int,
               searcher: Searcher, cache_dir: Path,
               progress: Callable[[int], None] | None = None) -> list[Labelled]:
    """:func:`generate`'s positions, kept as JSON in ``cache_dir`` (labelling the hard
    ones takes minutes; the set is the same on every run with the same seed)."""
    path = cache_dir / f"bench-{game.name}-{stage}-{difficulty}-s{seed}-n{count}.json"
    try:
        rows = json.loads(path.read_text())
        found = [Labelled(r["moves"], r["board"], r["ply"], r["stage"], r["difficulty"],
                          r["score"], r["outcome"], r["distance"],
                          {int(c): int(s) for c, s in r["move_scores"].items()})
                 for r in rows]
        if len(found) == count:
            return found
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # missing or damaged: draw it again
    found = generate(game, stage=stage, difficulty=difficulty, count=count, seed=seed,
                     searcher=searcher, progress=progress)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps([p.to_json() for p in found], indent=1))
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache: the set is simply drawn again next time
    return found


# -- test sets in Pons's format ----------------------------------------------------------

# The classes of Pons's public Connect Four test sets that a per-position benchmark can
# afford (his beginning-hard set takes minutes a position without an opening book).
TEST_SET_CLASSES = (("end", "easy"), ("middle", "easy"), ("middle", "medium"),
                    ("beginning", "easy"), ("beginning", "medium"))


def draw_test_set(game: MnkGame, *, stage: str, difficulty: str, count: int, seed: int = 0,
                  searcher: Searcher | None = None, tries: int = 1_000_000,
                  progress: Callable[[int], None] | None = None) -> list[tuple[str, int]]:
    """``count`` positions of a class as ``(moves, score)``, the score of the side to move
    in Pons's convention (:func:`gameai.games.mnk.columns.pons_score`): the lines of a test
    set. Drawn as :func:`generate` draws (same rules, its own random stream), labelled with
    the position's score only, and an easy position is recognised by two null-window
    searches ("a win or a loss within 13 plies?") before any exact search.

    Raises:
        ValueError: as :func:`generate`.
    """
    from gameai.games.mnk.columns import pons_score

    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}: one of {', '.join(DIFFICULTIES)}")
    if not game.gravity:
        raise ValueError(f"{game.name}: test sets are drawn for gravity games")
    plies = stage_plies(game, stage)
    searcher = searcher or Searcher(game)
    rng = random.Random(f"{game.name}/testset/{stage}/{difficulty}/{seed}")
    kept: list[tuple[str, int]] = []
    seen: set[str] = set()
    for _ in range(tries):
        if len(kept) == count:
            return kept
        drawn = _random_position(game, rng, rng.choice(plies))
        if drawn is None or drawn[1] in seen:
            continue
        columns, text = drawn
        board = game.parse(text)
        if _immediate_win(board):
            continue
        if difficulty == "easy" and not searcher.decided_within(board, EASY_BELOW - 1):
            continue
        score = searcher.score(board)
        distance = describe_score(game, score, board)[1]
        if difficulty_of(distance) != difficulty:
            continue
        seen.add(text)
        kept.append((to_moves(game, columns), pons_score(game, score, board.ply)))
        if progress is not None:
            progress(len(kept))
    if len(kept) < count:
        raise ValueError(f"only {len(kept)} {stage} {difficulty} {game.name} positions in "
                         f"{tries:,} random games; asked for {count}")
    return kept


def test_set_text(rows: list[tuple[str, int]]) -> str:
    return "".join(f"{moves} {score}\n" for moves, score in rows)


def cached_test_set(game: MnkGame, *, stage: str, difficulty: str, count: int, seed: int,
                    searcher: Searcher, cache_dir: Path,
                    progress: Callable[[int], None] | None = None) -> Path:
    """:func:`draw_test_set`'s file in ``cache_dir`` (drawn once: the same every time)."""
    path = cache_dir / f"testset-{game.name}-{stage}-{difficulty}-s{seed}-n{count}.txt"
    try:
        if sum(1 for line in path.read_text().splitlines() if line.strip()) == count:
            return path
    except (OSError, UnicodeDecodeError):
        pass  # missing or damaged: draw it again
    text = test_set_text(draw_test_set(game, stage=stage, difficulty=difficulty, count=count,
                                       seed=seed, searcher=searcher, progress=progress))
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path
