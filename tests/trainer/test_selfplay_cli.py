"""The command line's parallel actors: --cluster without Ray says what to install; the
flags are refused where they cannot apply; bench selfplay times actor counts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gameai.cli import main

ROOT = Path(__file__).resolve().parents[2]
HIDE_RAY = "import sys; sys.modules['ray'] = None; from gameai.cli import main; "


def test_cluster_without_ray_says_what_to_install(tmp_path):
    argv = ["train", "--game", "tictactoe", "--algorithm", "ntuple", "--games", "100",
            "--param", "actors=2", "--cluster", "auto", "--quiet"]
    done = subprocess.run([sys.executable, "-c", HIDE_RAY + f"sys.exit(main({argv!r}))"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "pip install 'gameai[ray]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_cluster_needs_parallel_ntuple_actors(capsys):
    assert main(["train", "--game", "tictactoe", "--algorithm", "td", "--games", "10",
                 "--cluster", "auto", "--quiet"]) == 2
    assert "n-tuple learner's parallel actors" in capsys.readouterr().err
    assert main(["train", "--game", "tictactoe", "--algorithm", "ntuple", "--games", "10",
                 "--cluster", "auto", "--quiet"]) == 2
    assert "actors=N" in capsys.readouterr().err


def test_bench_selfplay_times_each_actor_count(capsys):
    assert main(["bench", "selfplay", "--game", "tictactoe", "--algorithm", "ntuple",
                 "--actors", "1,2", "--seconds", "0.3", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)["speed"]
    assert [r["actors"] for r in figures["rows"]] == [1, 2]
    one, two = figures["rows"]
    assert one["speedup"] == 1.0 and one["efficiency"] == 1.0
    assert two["games_per_second"] > 0
    assert two["efficiency"] == round(two["speedup"] / 2, 3) or abs(
        two["efficiency"] - two["speedup"] / 2) < 2e-3
    assert figures["machine"]["cores"] >= 1 and len(figures["machine"]["load_average"]) == 3
    assert main(["bench", "selfplay", "--game", "tictactoe", "--algorithm", "ntuple",
                 "--actors", "0,2"]) == 2


def test_bench_selfplay_measures_the_machines_ceiling_for_each_count(capsys):
    """--ceiling: K one-actor learners in K processes of their own, timed at once, beside
    the K actors' row, which says what share of that ceiling it reached."""
    assert main(["bench", "selfplay", "--game", "tictactoe", "--algorithm", "ntuple",
                 "--actors", "1,2", "--games", "30000", "--ceiling", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)["speed"]
    (ceiling,) = figures["ceiling"]
    assert ceiling["processes"] == 2 and len(ceiling["each"]) == 2
    for each in ceiling["each"]:
        assert each["games"] >= 30000 and each["seconds"] > 0
    first, second = sorted(ceiling["each"], key=lambda e: e["started"])
    assert second["started"] < first["ended"]  # the two ran at the same time
    assert ceiling["games_per_second"] == pytest.approx(
        sum(e["games"] / e["seconds"] for e in ceiling["each"]), rel=0.01)
    one, two = figures["rows"]
    assert ceiling["speedup"] == pytest.approx(
        ceiling["games_per_second"] / one["games_per_second"], rel=0.01)
    assert two["of_ceiling"] == pytest.approx(
        two["games_per_second"] / ceiling["games_per_second"], rel=0.01)
    assert "of_ceiling" not in one


def test_ceiling_needs_the_parallel_actors(capsys):
    assert main(["bench", "selfplay", "--game", "tictactoe", "--ceiling"]) == 2
    assert "--algorithm ntuple" in capsys.readouterr().err


def test_a_ceiling_process_that_fails_is_reported_with_its_error():
    from gameai.bench.learners import CeilingFailed, independent_learners

    with pytest.raises(CeilingFailed, match="no-such-game"):
        independent_learners("no-such-game", 2, seconds=0.1)
