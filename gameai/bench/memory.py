"""``gameai bench memory``: each estimate against the peak it estimates, measured.

Every case runs in a fresh process (so one case's memory is not another's), which first
does its setup (imports, compiled kernels, the learner's table), reads its resident set
and resets its peak (``/proc/self/clear_refs``), then does the work and reads the peak
resident set (``VmHWM``: what ``/usr/bin/time -v`` calls "Maximum resident set size").
The figure is that peak over the resident set before the work: what the work itself took,
as the estimate counts it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CASES = (
    "solve:four-in-a-row", "solve:connect-4x5-4", "solve:mnk-4x4-3", "analyze:connect-4x5-4",
    "evaluate:connect-4x5-4", "export:four-in-a-row:td:300000",
    "export:four-in-a-row:qlearning:200000", "export:connect-4x5-4:tally:100000",
)


def run(cases: tuple[str, ...] = CASES) -> dict[str, Any]:
    """Each case in its own process: its estimate, measured peak and their ratio."""
    rows = []
    for case in cases:
        done = subprocess.run([sys.executable, "-m", "gameai.bench.memory", case],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{case}: {done.stderr.strip().splitlines()[-1:]}")
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {"cases": rows, "worst_ratio": max(abs(1 - r["ratio"]) for r in rows),
            "target": "measured peak within 20% of the estimate",
            "load_average": [round(v, 2) for v in os.getloadavg()]}


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def measure(case: str) -> dict[str, Any]:
    """One case, in this process: setup, then the work between two readings."""
    from gameai.games import budget, get_game
    from gameai.games.mnk.board import Board
    from gameai.games.mnk.game import as_mnk
    from gameai.games.mnk.positions import enumerate_positions
    from gameai.games.mnk.solver import solve_positions

    kind, name, *rest = case.split(":")
    game = get_game(name)
    solve_positions(enumerate_positions(Board.empty(as_mnk(get_game("tictactoe")))))  # warm
    seen: list[budget.Estimate] = []
    require = budget.require

    def spy(estimate: budget.Estimate, limit: budget.Limit | None = None) -> budget.Estimate:
        seen.append(estimate)
        return require(estimate, limit)

    budget.require = spy  # every caller looks it up on the module: each estimate is seen
    if kind == "solve":
        def work() -> object:
            return solve_positions(enumerate_positions(Board.empty(as_mnk(game))))
    elif kind == "analyze":
        from gameai.games.mnk.stats import analyze

        def work() -> object:
            return analyze(as_mnk(game))
    elif kind == "evaluate":
        from gameai.trainer.evaluation.evaluate import optimal_moves
        from gameai.trainer.training import make_learner

        learner = make_learner(game, "td", seed=1)
        learner.play(2000)
        model = learner.export()

        def work() -> object:
            return optimal_moves(model)
    else:
        from gameai.trainer.training import make_learner

        small = make_learner(get_game("tictactoe"), rest[0], seed=1)
        small.play(100)
        small.export()  # the export's kernels loaded
        learner = make_learner(game, rest[0], seed=1)
        learner.play(int(rest[1]))
        work = learner.export
    seen.clear()
    before = _status("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the peak restarts from here
    started, cpu = time.perf_counter(), time.process_time()
    result = work()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak = _status("VmHWM") - before
    del result
    estimate = max(e.bytes for e in seen)
    took = max((e.seconds for e in seen if e.seconds is not None), default=None)
    return {"case": case, "estimate_mb": round(estimate / 2**20, 1),
            "measured_mb": round(peak / 2**20, 1), "ratio": round(peak / estimate, 3),
            "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
            "estimate_seconds": None if took is None else round(took, 2)}


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1])))
