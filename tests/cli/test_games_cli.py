"""The CLI as a user runs it: a real subprocess."""

import json
import subprocess
import sys


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
