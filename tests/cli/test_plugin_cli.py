"""``gameai analyze`` and ``gameai solve`` on a game that plugs in (Hexapawn), whose first
moves move pieces: the analysis lists them in the game's notation."""

import json
import subprocess
import sys


def gameai(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gameai", *args], capture_output=True,
                          text=True, timeout=120)


def test_analyze_lists_the_first_moves_that_move_pieces():
    out = gameai("analyze", "hexapawn")
    assert out.returncode == 0, out.stderr
    assert "positions: 135 reachable (71 up to symmetry; 37 of those live)" in out.stdout
    assert "value: O wins with perfect play in 6 plies" in out.stdout
    lines = out.stdout.splitlines()
    first = lines.index(next(line for line in lines if line.startswith("X's first moves")))
    assert lines[first + 1:first + 4] == ["  * 8-5: loss 6", "    7-4: loss 4", "    9-6: loss 4"]
    report = json.loads(gameai("analyze", "hexapawn", "--json").stdout)
    assert report["openings"] == [None] * 9 and report["first_moves"][0] == {
        "from": 7, "to": 4, "outcome": "loss", "distance": 6, "optimal": True}


def test_solve_from_a_move_list_and_a_precise_error():
    out = gameai("solve", "hexapawn", "--moves", "8-5", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["to_move"] == "O" and report["outcome"] == "win"
    bad = gameai("solve", "hexapawn", "--moves", "8-5 2-5")
    assert bad.returncode == 2
    assert "moves: move 2 (2-5): 5 (row 1, column 1) is taken" in bad.stderr


def test_bench_retrograde_times_a_named_game():
    out = gameai("bench", "retrograde", "--game", "hexapawn", "--json")
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)["variants"]
    assert (row["game"], row["positions"], row["value"]) == ("hexapawn", 135, "o_wins")
    refused = gameai("bench", "solver", "--game", "hexapawn")
    assert refused.returncode != 0
    assert "time it with 'gameai bench retrograde --game hexapawn'" in refused.stderr
