"""Benchmarks: self-play speed against a plain-Python loop, and time to a perfect model.

Figures are measured in one process, one core (numba kernels are single-threaded), after
a warm-up that compiles or loads the cached kernels; the machine's load average is
reported with them, since other work shares the cores.
"""

from __future__ import annotations

import os
import queue
import time
from typing import Any

from gameai.bench.baseline import python_td_games
from gameai.games import get_game
from gameai.games.budget import OverBudget
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


def play(learner: Any, games: int) -> Any:
    """``learner.play(games)``, refused when the memory limit stopped the learner's table
    (it would play no more: a rate measured on would be of nothing)."""
    stats = learner.play(games)
    if learner.full is not None:
        raise OverBudget(learner.full)
    return stats


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
            stats = play(learner, batch)
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
            stats = play(learner, batch)
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



# -- parallel self-play: speed and strength by actors (issue 24) ---------------------------

def _machine() -> dict[str, Any]:
    return {"cores": os.cpu_count(), "load_average": load()}


def actor_scaling(game_name: str, *, actors: tuple[int, ...], seconds: float,
                  cluster: str | None = None, params: dict[str, str] | None = None,
                  seed: int = 1, games: int = 0, ceiling: bool = False,
                  progress: Any = print) -> dict[str, Any]:
    """Self-play games/s (learning and merges included) of the n-tuple learner with each
    number of ``actors``, on this machine's threads and, with ``cluster``, on the Ray
    cluster at that address: each setting warms up (kernels compiled or loaded, actors
    started, a round played), then plays rounds for ``seconds``, or with ``games`` that many
    games (every count then times the same stretch of training: games grow longer as the
    network learns, so equal seconds would favour the slower counts). Speed-up and
    efficiency are against one actor on this machine, measured in the same run. With
    ``ceiling``, each count above one is also timed as that many independent one-actor
    learners at once (:func:`independent_learners`): the most the machine gives that many
    actors, and each local row's ``of_ceiling`` the share of it the actors reach."""
    game = get_game(game_name)
    backends = ["local"] + (["ray"] if cluster else [])
    out: dict[str, Any] = {"game": game.name, "algorithm": "ntuple", "seconds": seconds,
                           "games": games or None, "params": params or {},
                           "machine": _machine(), "rows": []}
    if cluster:
        from gameai.trainer.selfplay.ray import connect

        out["cluster"] = {"address": cluster, **connect(cluster)}
    base = None
    for backend in backends:
        for k in actors:
            learner = make_learner(game, "ntuple", seed=seed,
                                   params={**(params or {}), "actors": str(k)})
            if backend == "ray":
                if k == 1:
                    continue  # one actor plays in the trainer's process, never on a cluster
                from gameai.trainer.learners.ntuple import NtupleLearner
                from gameai.trainer.selfplay.ray import RayCluster

                assert isinstance(learner, NtupleLearner)
                learner.use_backend(RayCluster())
            _warm(learner)
            cpu = time.process_time()
            load_before = load()
            played, wall = _timed(learner, games=games, seconds=seconds)
            rate = played / wall
            cpu_rate = played / max(time.process_time() - cpu, 1e-9)
            status = getattr(learner, "selfplay_status", {})
            close = getattr(learner, "close", None)
            if close is not None:
                close()
            if base is None:
                base = rate
            row = {"backend": backend, "actors": k, "games": played,
                   "seconds": round(wall, 2), "games_per_second": round(rate, 1),
                   "speedup": round(rate / base, 3), "efficiency": round(rate / base / k, 3),
                   "games_per_cpu_second_here": round(cpu_rate, 1),
                   "hosts": status.get("hosts", 1), "merge_lag": status.get("merge_lag"),
                   "merge_seconds": status.get("merge_seconds"),
                   "actors_busy": status.get("busy"),
                   "load_average": [load_before, load()]}
            out["rows"].append(row)
            progress(f"{backend:>5} {k:>3} actors: {rate:>10,.0f} games/s  speed-up "
                     f"{row['speedup']:.2f}x  efficiency {row['efficiency']:.2f}  (load "
                     f"{load_before[0]} -> {row['load_average'][1][0]})")
    if ceiling:
        assert base is not None
        out["ceiling"] = []
        for k in actors:
            if k == 1:
                continue  # the one-actor row is its own ceiling
            found = independent_learners(game.name, k, seconds=seconds, games=games,
                                         params=params, seed=seed)
            found["speedup"] = round(found["games_per_second"] / base, 3)
            out["ceiling"].append(found)
            for row in out["rows"]:
                if row["backend"] == "local" and row["actors"] == k:
                    row["of_ceiling"] = round(row["games_per_second"]
                                              / found["games_per_second"], 3)
            progress(f"ceiling {k:>3} one-actor learners at once, nothing shared: "
                     f"{found['games_per_second']:>10,.0f} games/s  speed-up "
                     f"{found['speedup']:.2f}x")
    out["machine"]["load_average_after"] = load()
    return out


def _round_games(learner: Any) -> int:
    """The games of one of ``learner``'s rounds (2,048 where it plays none)."""
    return max(1, int(getattr(learner.params, "sync_games", 0)) or 2048)


def _warm(learner: Any) -> None:
    """A round's games, untimed: kernels compiled or loaded, actors started, buffers made."""
    learner.play(_round_games(learner))


def _timed(learner: Any, *, games: int, seconds: float) -> tuple[int, float]:
    """``(games played, seconds of self-play)``: ``games`` games, or with ``games`` 0 as
    many as ``seconds`` take, in calls of several rounds (overlapping rounds pipeline
    within one call)."""
    step = 8 * _round_games(learner)
    played, wall = 0, 0.0
    while played < games if games else wall < seconds:
        stats = learner.play(min(step, games - played) if games else step)
        played += stats.games
        wall += stats.seconds
    return played, wall


def independent_learners(game_name: str, k: int, *, seconds: float, games: int = 0,
                         params: dict[str, str] | None = None, seed: int = 1
                         ) -> dict[str, Any]:
    """The machine's ceiling for ``k`` actors: ``k`` one-actor learners (seeds ``seed`` to
    ``seed + k - 1``), each in a process of its own and sharing nothing, timed at once over
    the same stretch as :func:`actor_scaling`'s rows (each warms up, then all start
    together). Their games/s summed is what ``k`` actors could make here with no cost of
    their own at all: what the cores, caches and memory allow ``k`` copies of the kernel.

    Raises:
        CeilingFailed: a process failed or did not report within the time allowed.
    """
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")  # numba and threads: never fork
    start = ctx.Barrier(k + 1)
    results = ctx.Queue()
    one = {**(params or {}), "actors": "1"}
    procs = [ctx.Process(target=_independent, name=f"gameai-ceiling-{i}", daemon=True,
                         args=(game_name, seed + i, one, games, seconds, start, results))
             for i in range(k)]
    for proc in procs:
        proc.start()
    patience = INDEPENDENT_START_SECONDS + (games / 100 if games else 4 * seconds)
    try:
        try:
            start.wait(timeout=INDEPENDENT_START_SECONDS)
            load_before = load()
            found = [results.get(timeout=patience) for _ in procs]
        except Exception as e:  # a broken barrier, an empty queue: a process died or hung
            try:  # a process that failed says why (its message may still be on its way)
                said = results.get(timeout=5).get("error") or repr(e)
            except queue.Empty:
                said = repr(e)
            raise CeilingFailed(f"{k} independent learners: a process failed or hung: "
                                f"{said}") from e
    finally:
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
    failed = [f["error"] for f in found if "error" in f]
    if failed:
        raise CeilingFailed(f"{k} independent learners: {failed[0]}")
    return {"processes": k,
            "games_per_second": round(sum(f["played"] / f["seconds"] for f in found), 1),
            "each": [{"games": f["played"], "seconds": round(f["seconds"], 4),
                      "started": f["started"], "ended": f["ended"]} for f in found],
            "load_average": [load_before, load()]}


INDEPENDENT_START_SECONDS = 300.0  # every process imported, warmed up and at the barrier


class CeilingFailed(RuntimeError):
    """One of :func:`independent_learners`' processes failed or hung (its error said)."""


def _independent(game_name: str, seed: int, params: dict[str, str], games: int,
                 seconds: float, start: Any, results: Any) -> None:
    """One of :func:`independent_learners`' processes: warm, wait for the others, time."""
    try:
        learner = make_learner(get_game(game_name), "ntuple", seed=seed, params=params)
        _warm(learner)
        start.wait(timeout=INDEPENDENT_START_SECONDS)
        began = time.time()
        played, wall = _timed(learner, games=games, seconds=seconds)
        results.put({"played": played, "seconds": wall, "started": began,
                     "ended": time.time()})
    except Exception as e:  # reported to the parent, which raises
        results.put({"error": f"{type(e).__name__}: {e}"})
        start.abort()  # nobody waits at the barrier for this process


def actor_strength(game_name: str, *, actors: tuple[int, ...], games: int,
                   judge_games: int = 200, time_limit: float = 2.0, positions: int = 0,
                   params: dict[str, str] | None = None, seed: int = 1,
                   progress: Any = print) -> dict[str, Any]:
    """Strength at an equal number of ``games`` with each number of ``actors`` (trained on
    this machine: the rounds give the same model on any backend): the evaluator's figures
    (optimal-move rate of the network, lines lost, where the solver's table fits), games as
    first player against the perfect opponent and as second against the noisy solvers, at
    the default depth (the judge's matches, each with its 95% interval), and with
    ``positions`` the error rates on solver-labelled positions. Each count's score against
    the perfect opponent is compared with one actor's interval."""
    from gameai.trainer.evaluation.book import default_book
    from gameai.trainer.evaluation.judge import GateJudge

    game = get_game(game_name)
    judge = GateJudge(game, games=judge_games, time_limit=time_limit, seed=seed, matches=True,
                      book=default_book(game))
    out: dict[str, Any] = {"game": game.name, "games": games, "params": params or {},
                           "judge_games": judge_games, "machine": _machine(), "rows": []}
    first = None
    for k in actors:
        learner = make_learner(game, "ntuple", seed=seed,
                               params={**(params or {}), "actors": str(k)})
        started = time.perf_counter()
        learner.play(games)
        trained = time.perf_counter() - started
        model = learner.export()
        getattr(learner, "close", lambda: None)()
        report = evaluate(model, random_games=200, seed=seed)
        judged = judge.measures(model, report)
        row: dict[str, Any] = {"actors": k, "train_seconds": round(trained, 1),
                               "optimal_move_rate": report.get("optimal_move_rate"),
                               "losses_as_x": report.get("losses_as_x"),
                               "losses_as_o": report.get("losses_as_o"),
                               "judged": judged}
        if positions:
            from gameai.bench.ntuple import position_errors
            from gameai.models import NtupleModel

            assert isinstance(model, NtupleModel)
            row["position_errors"] = position_errors(model, depths=[None], count=positions,
                                                     seed=seed, progress=lambda _: None)
        score = next(m for m in judged["measures"] if m["name"] == "vs_perfect_as_x")
        if first is None:
            first = score["score"]
        row["vs_perfect_as_x"] = score["score"]
        row["within_one_actor_interval"] = first["low"] <= score["score"]["value"] <= \
            first["high"]
        out["rows"].append(row)
        progress(f"{k:>3} actors, {games:,} games: vs perfect as X {score['wins']}/"
                 f"{score['draws']}/{score['losses']} (score {score['score']['value']:.3f} "
                 f"[{score['score']['low']:.3f}, {score['score']['high']:.3f}]), optimal "
                 f"moves {row['optimal_move_rate']}, lines lost {row['losses_as_x']} / "
                 f"{row['losses_as_o']}  ({trained:.0f} s of training)")
    out["machine"]["load_average_after"] = load()
    return out
