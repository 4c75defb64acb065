"""``gameai bench solver`` on test-set files and side by side with bitbully: it runs, its
figures add up, its checks bite, and without bitbully it says what to install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTSETS = Path(__file__).resolve().parents[1] / "data" / "testsets"


def gameai(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gameai", *args], capture_output=True,
                          text=True, timeout=300, env=env, cwd=cwd)


def test_a_test_set_file_timed_against_bitbully():
    pytest.importorskip("bitbully")
    path = TESTSETS / "connect-four-middle-medium.txt"
    out = gameai("bench", "solver", "--game", "connect-four", "--positions", str(path),
                 "--against", "bitbully", "--json")
    assert out.returncode == 0, out.stderr
    figures = json.loads(out.stdout)
    assert figures["table"] == "empty" and len(figures["load_average"]) == 6
    (row,) = figures["rows"]
    for who in ("ours", "bitbully"):
        r = row[who]
        assert r["positions"] == 20 and r["wrong"] == 0 and r["mean_nodes"] > 100
        assert 0 < r["median_us"] <= r["max_us"] and r["cpu_seconds"] > 0
    assert row["cpu_ratio"] == pytest.approx(row["ours"]["cpu_seconds"]
                                             / row["bitbully"]["cpu_seconds"], rel=0.05)


def test_a_wrong_score_in_the_file_fails_the_bench(tmp_path):
    lines = (TESTSETS / "connect-four-end-easy.txt").read_text().splitlines()
    moves, score = lines[3].split()
    lines[3] = f"{moves} {int(score) + 1}"
    path = tmp_path / "wrong.txt"
    path.write_text("\n".join(lines) + "\n")
    out = gameai("bench", "solver", "--game", "connect-four", "--positions", str(path),
                 "--warm", "--json")
    assert out.returncode == 1
    (row,) = json.loads(out.stdout)["rows"]
    assert row["ours"]["wrong"] == 1 and row["ours"]["wrong_lines"] == [4]
    assert "bitbully" not in row


def test_compare_draws_every_class_and_runs_both(tmp_path):
    pytest.importorskip("bitbully")
    env = {**os.environ, "GAMEAI_CACHE_DIR": str(tmp_path)}
    out = gameai("bench", "solver", "--game", "connect-four", "--compare", "--count", "3",
                 "--json", env=env)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["rows"]
    assert [r["set"] for r in rows] == ["end easy", "middle easy", "middle medium",
                                        "beginning easy", "beginning medium"]
    assert all(r["ours"]["positions"] == r["bitbully"]["positions"] == 3 for r in rows)
    assert all(r["ours"]["wrong"] == r["bitbully"]["wrong"] == 0 for r in rows)
    assert len(list(tmp_path.glob("testset-connect-four-*-s0-n3.txt"))) == 5


def test_without_bitbully_the_bench_says_what_to_install(tmp_path):
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['bitbully'] = None\n")
    env = {**os.environ, "PYTHONPATH": str(hide)}
    path = TESTSETS / "connect-four-end-easy.txt"
    out = gameai("bench", "solver", "--game", "connect-four", "--positions", str(path),
                 "--against", "bitbully", env=env, cwd=tmp_path)
    assert out.returncode == 1
    assert "bitbully is not installed" in out.stderr and "pip install" in out.stderr
    assert "Traceback" not in out.stderr
    alone = gameai("bench", "solver", "--game", "connect-four", "--positions", str(path),
                   env=env, cwd=tmp_path)
    assert alone.returncode == 0, alone.stderr  # ours alone needs no bitbully


def test_write_sets_draws_every_class_checked_against_bitbully(tmp_path):
    pytest.importorskip("bitbully")
    out = gameai("bench", "solver", "--game", "connect-four", "--write-sets",
                 str(tmp_path / "sets"), "--count", "4", "--seed", "3")
    assert out.returncode == 0, out.stderr
    files = sorted((tmp_path / "sets").glob("connect-four-*.txt"))
    assert len(files) == 5 and "checked against bitbully" in out.stdout
    for path in files:
        lines = path.read_text().splitlines()
        assert len(lines) == 4 and all(len(line.split()) == 2 for line in lines)
    again = gameai("solve", "connect-four", "--positions", str(files[0]))
    assert again.returncode == 0, again.stderr
