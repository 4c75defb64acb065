"""Benchmarks: self-play speed against a plain-Python loop, and time to unbeatable.

Figures are measured in one process, one core (numba kernels are single-threaded), after
a warm-up that compiles or loads the cached kernels; the machine's load average is
reported with them, since other work shares the cores.
"""

from __future__ import annotations

import os
import time
from typing import Any

from gameai.games import get_game, get_mnk_game
from trainer.baseline import python_td_games
from trainer.evaluate import evaluate, unbeatable
from trainer.mlp import distill
from trainer.training import LEARNERS, make_learner, train

SELFPLAY_TARGET = 100_000  # tic-tac-toe games per second, learning included
UNBEATABLE_TARGETS = {"td": 10.0, "qlearning": 10.0, "tally": 60.0}  # seconds, worst seed
GAME_TARGETS = {  # seconds, worst seed, by game (issue 15: the seed's "true test")
    "tictactoe": UNBEATABLE_TARGETS,
    "three-mens-morris": {"td": 30.0, "qlearning": 300.0, "tally": 300.0},
}


def load() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


def selfplay(game_name: str, *, seconds: float = 2.0, baseline_seconds: float = 2.0
             ) -> dict[str, Any]:
    """Games per second of every learner (best of a few timed batches) and of the
    plain-Python td loop, with the ratio of td to that baseline."""
    game = get_mnk_game(game_name)  # the m,n,k kernels against their Python twin
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


def learners(*, seeds: tuple[int, ...] = (1, 2, 3), game_name: str = "tictactoe"
             ) -> dict[str, Any]:
    """Wall time (self-play and evaluation) until unbeatable as X and O, per learner and
    seed, with each final model's optimal-move rate; then (for games seed 004's network can
    read) the mlp distilled from each td model, evaluated and compared in size."""
    game = get_game(game_name)
    targets = GAME_TARGETS.get(game.name, {})
    out: dict[str, Any] = {"game": game.name, "seeds": list(seeds), "load_average": load()}
    teachers = {}
    for algorithm in LEARNERS:
        runs: list[dict[str, Any]] = []
        for seed in seeds:
            make_learner(game, algorithm, seed=seed).play(100)  # warm the kernel
            learner = make_learner(game, algorithm, seed=seed)
            started = time.perf_counter()
            limit = 200_000_000
            result = train(learner, games=limit, until_unbeatable=True)
            wall = time.perf_counter() - started
            runs.append({"seed": seed, "games": learner.games_played,
                         "seconds": round(wall, 3), "selfplay_seconds": round(result.seconds, 3),
                         "unbeatable": result.stopped == "unbeatable",
                         "optimal_move_rate": result.evaluation.get("optimal_move_rate")})
            if algorithm == "td":
                teachers[seed] = result.model
        worst = max(float(r["seconds"]) for r in runs)
        target = targets.get(algorithm)
        out[algorithm] = {"runs": runs, "worst_seconds": worst, "target_seconds": target,
                          "met": all(r["unbeatable"] for r in runs)
                          and (target is None or worst <= target)}
    students = []
    for seed, teacher in teachers.items() if game.cell_kernels else ():
        d = distill(teacher, seed=seed)
        report = evaluate(d.model, seed=seed)
        students.append({"seed": seed, **d.to_json(), "unbeatable": unbeatable(report),
                         "optimal_move_rate": report.get("optimal_move_rate")})
    out["mlp"] = {"runs": students,
                  "met": all(s["unbeatable"] and s["student_bytes"] < s["teacher_bytes"]
                             for s in students)}
    return out
