"""``gameai solve`` and ``gameai analyze`` on Three Men's Morris, as a user runs them."""

import json
import subprocess
import sys


def gameai(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gameai", *args], capture_output=True,
                          text=True, timeout=120)


def test_solve_a_movement_position_lists_each_move_with_its_origin():
    out = gameai("solve", "three-mens-morris", "--board", "XO-|-XX|OO-", "--to-move", "O",
                 "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["to_move"] == "O" and report["outcome"] == "loss"
    froms = {(m["from"]["index"], m["index"]) for m in report["moves"]}
    assert froms == {(1, 2), (6, 3), (7, 8)}
    assert all(m["outcome"] == "loss" for m in report["moves"])


def test_solve_without_to_move_after_the_placements_is_a_precise_error():
    out = gameai("solve", "three-mens-morris", "--board", "XO-|-XX|OO-")
    assert out.returncode == 2
    assert "to_move: required once all six pieces are down" in out.stderr


def test_analyze_prints_the_value_and_each_opening():
    out = gameai("analyze", "three-mens-morris")
    assert out.returncode == 0, out.stderr
    assert "positions: 5,390 reachable (744 up to symmetry" in out.stdout
    assert "value: X wins with perfect play in 9 plies" in out.stdout
    assert "loss 8 | win 9  | loss 8" in out.stdout
    report = json.loads(gameai("analyze", "nine-holes", "--json").stdout)
    assert report["value"] == "draw" and len(report["openings"]) == 9
