"""Benchmarks: self-play speed against a plain-Python loop, and time to a perfect model.

Figures are measured in one process, one core (numba kernels are single-threaded), after
a warm-up that compiles or loads the cached kernels; the machine's load average is
reported with them, since other work shares the cores.
"""

from __future__ import annotations

import os
import time
from typing import Any

from gameai.bench.baseline import python_td_games
from gameai.games import get_game
from gameai.games.mnk.game import as_mnk
from gameai.models import Model
from gameai.trainer.evaluation.evaluate import evaluate, unbeatable
from gameai.trainer.learners.mlp import distill
from gameai.trainer.training import LEARNERS, make_learner, train
from gameai.trainer.worker.gates import perfect

SELFPLAY_TARGET = 100_000  # tic-tac-toe games per second, learning included
PERFECT_TARGETS = {"td": 10.0, "qlearning": 10.0, "tally": 60.0}  # seconds, worst seed
GAME_TARGETS = {  # seconds, worst seed, by game (issue 15: the seed's "true test")
    "tictactoe": PERFECT_TARGETS,
    "three-mens-morris": {"td": 30.0, "qlearning": 300.0, "tally": 300.0},
}
# What a learner trains until: perfect (unbeatable, the optimal move in every reachable
# position; issue 12), or unbeatable where that is the game's measure (issue 15's morris).
UNTIL = {"three-mens-morris": "unbeatable"}
MAX_GAMES = 10_000_000  # a learner not there by then is reported as such
CHECKPOINT_EVERY = 10_000  # games between checkpoints at most (the first ones come sooner)


def load() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


def selfplay(game_name: str, *, seconds: float = 2.0, baseline_seconds: float = 2.0
             ) -> dict[str, Any]:
    """Games per second of every learner (best of a few timed batches) and of the
    plain-Python td loop, with the ratio of td to that baseline."""
    game = as_mnk(get_game(game_name))  # the m,n,k kernels against their Python twin
    per: dict[str, float] = {}
    for algorithm in LEARNERS:
        learner = make_learner(game, algorithm, seed=1)
        learner.play(200)  # compile or load the cached kernel
        best = 0.0
        batch, spent = 5_000, 0.0
        while spent < seconds / len(LEARNERS):
            stats = learner.play(batch)
            spent += stats.seconds
            best = max(best, stats.games_per_second)
            batch = min(batch * 2, 200_000)
        per[algorithm] = round(best, 1)
    base_games, started = 0, time.perf_counter()
    while time.perf_counter() - started < baseline_seconds:
        python_td_games(game, 200, seed=base_games)
        base_games += 200
    baseline = base_games / (time.perf_counter() - started)
    return {"game": game.name, "algorithm": "td", "games_per_second": per["td"],
            "per_algorithm": per, "python_baseline_games_per_second": round(baseline, 1),
            "speedup_vs_python": round(per["td"] / baseline, 1),
            "target_games_per_second": SELFPLAY_TARGET if game.name == "tictactoe" else None,
            "load_average": load()}


def learners(*, seeds: tuple[int, ...] = (1, 2, 3), game_name: str = "tictactoe",
             algorithms: tuple[str, ...] = tuple(LEARNERS), params: dict[str, str] | None = None,
             max_games: int = MAX_GAMES) -> dict[str, Any]:
    """Per learner and seed: games and wall time (self-play and every checkpoint) until
    perfect (unbeatable, and the optimal move in every reachable position; until
    unbeatable for the games of :data:`UNTIL`), and whether it still is after three times
    as many games again; then (for games seed 004's network can read) the mlp distilled
    from each td model. ``params`` (``exploring_starts=0``...) go to every learner."""
    game = get_game(game_name)
    targets = GAME_TARGETS.get(game.name, {})
    until = UNTIL.get(game.name, "perfect")
    done_when = perfect if until == "perfect" else unbeatable
    out: dict[str, Any] = {"game": game.name, "seeds": list(seeds), "until": until,
                           "params": params or {}, "max_games": max_games,
                           "load_average": load()}
    teachers: dict[int, Model] = {}
    for algorithm in algorithms:
        runs: list[dict[str, Any]] = []
        for seed in seeds:
            make_learner(game, algorithm, seed=seed).play(100)  # warm the kernel
            learner = make_learner(game, algorithm, seed=seed, params=params)
            started = time.perf_counter()
            result = train(learner, games=max_games, until_perfect=until == "perfect",
                           until_unbeatable=until == "unbeatable", eval_every=CHECKPOINT_EVERY)
            wall = time.perf_counter() - started
            reached = result.stopped == until
            run = {"seed": seed, "games": learner.games_played, "seconds": round(wall, 3),
                   "selfplay_seconds": round(result.seconds, 3), "reached": reached,
                   "perfect": perfect(result.evaluation),
                   "unbeatable": unbeatable(result.evaluation),
                   "optimal_move_rate": result.evaluation.get("optimal_move_rate"),
                   "positions_missed": _missed(result.evaluation)}
            if reached:
                if algorithm == "td":
                    teachers[seed] = result.model
                learner.play(3 * learner.games_played)
                run["still_there_at_4x"] = done_when(evaluate(learner.export(), seed=seed))
            runs.append(run)
        worst = max(float(r["seconds"]) for r in runs)
        target = targets.get(algorithm)
        out[algorithm] = {"runs": runs, "worst_seconds": worst, "target_seconds": target,
                          "met": all(r["reached"] for r in runs)
                          and (target is None or worst <= target)}
    students = []
    for seed, teacher in teachers.items() if game.cell_kernels else ():
        d = distill(teacher, seed=seed)
        report = evaluate(d.model, seed=seed)
        students.append({"seed": seed, **d.to_json(), "unbeatable": unbeatable(report),
                         "perfect": perfect(report),
                         "optimal_move_rate": report.get("optimal_move_rate")})
    out["mlp"] = {"runs": students,
                  "met": all(s[until] and s["student_bytes"] < s["teacher_bytes"]
                             for s in students)}
    return out


def _missed(report: dict[str, Any]) -> int | None:
    rate, positions = report.get("optimal_move_rate"), report.get("optimal_move_positions")
    if rate is None or positions is None:
        return None
    return positions - round(rate * positions)


def schedules(game_name: str, algorithm: str, *, seconds: float,
              settings: list[dict[str, str]], seed: int = 1) -> dict[str, Any]:
    """Per parameter setting: the same seed's learner plays until ``seconds`` of self-play
    (the round that crosses it finishes), then one evaluation: losing lines as X and O and
    the optimal-move rate against self-play time (``gameai bench schedules``, the figures
    behind :mod:`gameai.trainer.learners.defaults`)."""
    game = get_game(game_name)
    make_learner(game, algorithm, seed=seed).play(10)  # warm the kernel
    rows = []
    for params in settings:
        learner = make_learner(game, algorithm, seed=seed, params=params)
        spent, batch = 0.0, 20_000
        while spent < seconds:
            stats = learner.play(batch)
            spent += stats.seconds
            batch = max(1_000, int(batch * (seconds / 4) / max(stats.seconds, 1e-3)))
        report = evaluate(learner.export(), random_games=200, seed=seed)
        rows.append({"params": params, "effective": learner.params.to_json(),
                     "games": learner.games_played, "selfplay_seconds": round(spent, 1),
                     "losses_as_x": report.get("losses_as_x"),
                     "losses_as_o": report.get("losses_as_o"),
                     "optimal_move_rate": report.get("optimal_move_rate"),
                     "omitted": report.get("omitted", {}),
                     "load_average": load()})
    return {"game": game.name, "algorithm": algorithm, "seed": seed, "seconds": seconds,
            "rows": rows}

