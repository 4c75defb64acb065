"""The CLI as a user runs it: a real subprocess."""

import json
import subprocess
import sys
from pathlib import Path


def gameai(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gameai", *args], capture_output=True,
                          text=True, timeout=120)


def test_analyze_json():
    out = gameai("analyze", "tictactoe", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["games"]["total"] == 255168 and report["non_stupid_games"] == 29600


def test_analyze_prints_grids():
    out = gameai("analyze", "tictactoe")
    assert out.returncode == 0
    assert "14,652 | 14,232 | 14,652" in out.stdout
    assert "1,605,264" in out.stdout


def test_unknown_game_exits_2_listing_games():
    out = gameai("analyze", "no-such-game")
    assert out.returncode == 2
    assert "tictactoe" in out.stderr and "mnk-RxC-K" in out.stderr


def test_solve_names_a_malformed_board():
    out = gameai("solve", "tictactoe", "--board", "X--|-Q-|---")
    assert out.returncode == 2
    assert "unknown character 'Q' at row 1, column 1" in out.stderr


def test_solve_json_lists_optimal_moves():
    out = gameai("solve", "tictactoe", "--board", "XO-|-O-|--X", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["value"] == 0 and report["optimal_moves"] == [7]
    assert report["moves"][0] == {"row": 2, "col": 1, "index": 7, "outcome": "draw",
                                  "distance": 5, "optimal": True}


def test_a_board_starting_with_an_empty_cell_is_a_board_not_a_flag():
    for board, to_move, moves in (("-X-|-O-|---", "X", 7), ("---|---|---", "X", 9),
                                  ("--X|-O-|---", "X", 7)):
        out = gameai("solve", "tictactoe", "--board", board, "--json")
        assert out.returncode == 0, out.stderr
        solution = json.loads(out.stdout)
        assert solution["board"] == board and solution["to_move"] == to_move
        assert len(solution["moves"]) == moves
    out = gameai("solve", "tictactoe", "--board=-X-|-O-|---")
    assert out.returncode == 0, out.stderr


def test_solve_connect_four_from_column_moves():
    out = gameai("solve", "connect-four", "--moves", "44444433333", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["outcome"] == "loss" and report["distance"] == 30
    assert {m["col"] for m in report["moves"] if m["optimal"]} == {1, 4}
    out = gameai("solve", "connect-four", "--moves", "445566")
    assert out.returncode == 0, out.stderr
    assert "value: win for X in 1 plies" in out.stdout
    assert " * column 3 (row 5 col 2 (cell 37)): win in 1" in out.stdout


def test_solve_names_a_bad_column_move():
    out = gameai("solve", "connect-four", "--moves", "4444444")
    assert out.returncode == 2
    assert "moves: move 7 (4): column 4 is full" in out.stderr


def test_solve_out_of_time_says_what_it_proved():
    out = gameai("solve", "connect-four", "--moves", "4453", "--time-limit", "0.2")
    assert out.returncode == 2
    assert "not solved within 0.2 s" in out.stderr and "column 4" in out.stderr


def test_solve_mnk_4x5_4_by_search():
    out = gameai("solve", "mnk-4x5-4", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["outcome"] == "draw" and len(report["optimal_moves"]) == 20


def test_bench_solver_times_connect_four_positions_by_class(tmp_path):
    import os

    env = {**os.environ, "GAMEAI_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "gameai", "bench", "solver", "--game",
                          "connect-four", "--count", "3", "--beginning-count", "1", "--json"],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    figures = json.loads(out.stdout)
    classes = {(r["stage"], r["difficulty"]): r for r in figures["classes"]}
    assert set(classes) == {("end", "easy"), ("middle", "easy"), ("middle", "medium"),
                            ("beginning", "hard")}
    assert classes[("end", "easy")]["positions"] == 3 and figures["wrong"] == 0
    assert all(r["mean_ms"] > 0 and r["max_ms"] >= r["mean_ms"] for r in classes.values())
    assert len(list(tmp_path.glob("bench-connect-four-*.json"))) == 4  # the labelled sets


TESTSETS = Path(__file__).resolve().parents[1] / "data" / "testsets"


def test_the_test_set_files_agree_with_bitbully():
    """tests/data/testsets: 20 positions of each class in Pons's format ('MOVES SCORE'),
    drawn by gameai.bench.positions.draw_test_set and labelled by our solver; an
    independent solver (bitbully, a test dependency) gives every score too."""
    import pytest

    core = pytest.importorskip("bitbully").bitbully_core
    solver = core.BitBullyCore()
    files = sorted(TESTSETS.glob("connect-four-*.txt"))
    assert len(files) == 5
    for path in files:
        lines = path.read_text().splitlines()
        assert len(lines) == 20
        for line in lines:
            moves, score = line.split()
            board = core.BoardCore()
            assert board.setBoard([int(c) - 1 for c in moves])
            assert solver.mtdf(board, 0) == int(score), (path.name, line)


def test_solve_positions_checks_every_class_of_the_test_sets():
    for path in sorted(TESTSETS.glob("connect-four-*.txt")):
        out = gameai("solve", "connect-four", "--positions", str(path))
        assert out.returncode == 0, out.stderr
        rows = [json.loads(line) for line in out.stdout.splitlines()]
        given = [int(line.split()[1]) for line in path.read_text().splitlines()]
        assert [r["score"] for r in rows] == given and all(r["agrees"] for r in rows)
        assert "20 positions solved" in out.stderr
        for r in rows:
            assert r["outcome"] == ("win" if r["score"] > 0 else "loss" if r["score"] < 0
                                    else "draw")
            assert r["best_moves"] and r["nodes"] >= 0 and r["microseconds"] > 0


def test_solve_positions_names_the_lines_that_differ_and_exits_1(tmp_path):
    """Given scores that are wrong, lines that are no positions: every one is named, the
    rest are solved, and the exit status is 1. From standard input too."""
    text = ("4455 18\n"        # right (Pons's example)
            "44455554221 -14\n"  # wrong: -15
            "# a comment\n\n"
            "448\n"            # column 8 of 7
            "4455667 3\n"      # X has already won
            "4453 1 2\n")      # not MOVES SCORE
    out = subprocess.run([sys.executable, "-m", "gameai", "solve", "connect-four",
                          "--positions", "-", "--score-only"], input=text,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert "--positions -: line 7: expected 'MOVES' or 'MOVES SCORE'" in out.stderr
    good = text.replace("4453 1 2\n", "")
    path = tmp_path / "set.txt"
    path.write_text(good)
    out = gameai("solve", "connect-four", "--positions", str(path))
    assert out.returncode == 1
    rows = {r["line"]: r for r in map(json.loads, out.stdout.splitlines())}
    assert rows[1]["agrees"] and rows[1]["best_moves"] == [3, 6] and rows[1]["distance"] == 3
    assert rows[2]["score"] == -15 and rows[2]["agrees"] is False
    assert rows[5]["error"] == "moves: move 3 (8): column 8 is out of range (columns are 1-7)"
    assert "X has won" in rows[6]["error"]
    assert "line 2 (44455554221): given -14, solved -15" in out.stderr
    assert "line 5 (448): moves: move 3 (8)" in out.stderr
    assert "3 position(s) differ" in out.stderr
    missing = gameai("solve", "connect-four", "--positions", str(tmp_path / "none.txt"))
    assert missing.returncode == 1 and "cannot read" in missing.stderr
    other = gameai("solve", "tictactoe", "--positions", str(path))
    assert other.returncode == 1 and "gravity game solved by search" in other.stderr
