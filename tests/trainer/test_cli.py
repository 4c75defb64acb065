"""``gameai train`` and ``gameai evaluate`` from the command line."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from gameai.cli import main
from gameai.models import MlpModel, load_model
from gameai.store import ModelStore


def _gameai(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "gameai", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


def test_train_until_unbeatable_writes_a_model_and_a_plot(tmp_path, capsys):
    out, plot = tmp_path / "td.gmodel", tmp_path / "curves.png"
    assert main(["train", "--game", "tictactoe", "--algorithm", "td", "--until-unbeatable",
                 "--seed", "1", "--out", str(out), "--plot", str(plot), "--json",
                 "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["stopped"] == "unbeatable"
    assert report["evaluation"]["losses_as_x"] == report["evaluation"]["losses_as_o"] == 0
    model = load_model(out.read_bytes())
    assert model.info.evaluation == report["evaluation"]
    assert model.info.evaluation["model_bytes"] == out.stat().st_size
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["evaluate", str(out), "--json"]) == 0
    said = capsys.readouterr()
    again = json.loads(said.out)
    # the estimate comes first, on stderr: memory and time, before any figure
    assert re.match(r"gameai evaluate: evaluating a tictactoe model: about [0-9.]+ (MB|KB) "
                    r"of memory and .+ of one core \(estimated\)", said.err)
    assert {k: again[k] for k in ("losses_as_x", "losses_as_o", "optimal_move_rate")} == \
        {k: report["evaluation"][k] for k in ("losses_as_x", "losses_as_o", "optimal_move_rate")}


def test_train_stopped_by_the_memory_budget_writes_the_model_and_says_why(tmp_path, capsys,
                                                                         monkeypatch):
    """Issue 28: the table reaching --memory-limit ends training with the model written
    (the growth check leaves room for the export) and the reason in the report."""
    monkeypatch.setenv("GAMEAI_MEMORY_LIMIT", "1G")  # restored after: --memory-limit sets it
    out = tmp_path / "td.gmodel"
    assert main(["train", "--game", "four-in-a-row", "--algorithm", "td", "--games",
                 "10000000", "--memory-limit", "16M", "--seed", "1", "--out", str(out),
                 "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["stopped"] == "memory budget"
    assert "over the memory limit of 16.0 MB" in report["why"]
    model = load_model(out.read_bytes())
    assert 0 < model.info.games_played < 10_000_000 and len(model.keys) > 10_000


def test_same_seed_same_file_bytes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # reproducible-build metadata
    paths = [tmp_path / f"{i}.gmodel" for i in range(2)]
    for path in paths:
        assert main(["train", "--game", "tictactoe", "--algorithm", "qlearning", "--games",
                     "6000", "--seed", "7", "--out", str(path), "--quiet"]) == 0
    assert paths[0].read_bytes() == paths[1].read_bytes()
    info = load_model(paths[0].read_bytes()).info
    assert info.created_at == "2026-01-01T00:00:00Z" and info.training_seconds == 0.0


def test_help_is_fast_and_complete():
    done = _gameai("train", "--help")
    assert done.returncode == 0 and "--until-unbeatable" in done.stdout


def test_distil_a_teacher_into_an_mlp(tmp_path, td_model, capsys):
    teacher, student = tmp_path / "teacher.gmodel", tmp_path / "student.gmodel"
    teacher.write_bytes(td_model.to_bytes())
    assert main(["train", "--game", "tictactoe", "--algorithm", "mlp", "--teacher",
                 str(teacher), "--out", str(student), "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    model = load_model(student.read_bytes())
    assert isinstance(model, MlpModel)
    assert report["distillation"]["student_bytes"] < report["distillation"]["teacher_bytes"]
    assert report["evaluation"]["losses_as_x"] == report["evaluation"]["losses_as_o"] == 0


def test_train_publishes_and_promotes_through_the_gates(redis_url, capsys):
    assert main(["train", "--game", "tictactoe", "--algorithm", "td", "--until-perfect",
                 "--seed", "2", "--store", redis_url, "--promote", "auto", "--json",
                 "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["stopped"] == "perfect" and report["evaluation"]["optimal_move_rate"] == 1.0
    assert report["published"]["promoted"] is True
    with ModelStore.from_url(redis_url) as store:
        record = store.version(game="tictactoe", version=report["published"]["version"])
        assert record.evaluation["losses_as_x"] == 0
        assert store.rollout(game="tictactoe").production == record.version
    assert main(["evaluate", "--store", redis_url, "--game", "tictactoe", "--version",
                 "production"]) == 0
    text = capsys.readouterr().out
    assert "unbeatable" in text and "opens in centre" in text


@pytest.mark.parametrize(("args", "message"), [
    (["--algorithm", "td", "--param", "alpha0=7"], "parameter 'alpha0' must be in (0, 1]"),
    (["--algorithm", "td", "--param", "alpha0"], "--param expects NAME=VALUE"),
    (["--algorithm", "mlp"], "--teacher FILE"),
    (["--algorithm", "td", "--teacher", "x"], "--teacher is only for --algorithm mlp"),
    (["--algorithm", "td", "--promote", "auto"], "--promote needs --store"),
])
def test_bad_train_requests_are_named(args, message, capsys):
    assert main(["train", "--game", "tictactoe", "--games", "10", "--quiet", *args]) == 1
    assert message in capsys.readouterr().err


def test_train_never_replaces_a_file_silently(tmp_path, capsys):
    out = tmp_path / "kept.gmodel"
    out.write_bytes(b"precious")
    assert main(["train", "--game", "tictactoe", "--algorithm", "td", "--games", "10",
                 "--out", str(out), "--quiet"]) == 1
    assert "exists; use --force" in capsys.readouterr().err
    assert out.read_bytes() == b"precious"


def test_evaluate_refuses_what_is_not_a_model(tmp_path, capsys):
    junk = tmp_path / "junk.gmodel"
    junk.write_bytes(b"\x80\x04not a model")
    assert main(["evaluate", str(junk)]) == 1
    assert "is not a valid model" in capsys.readouterr().err
    assert main(["evaluate", str(tmp_path / "missing")]) == 1
    assert "cannot read" in capsys.readouterr().err
    assert main(["evaluate"]) == 1
    assert "give a model FILE" in capsys.readouterr().err


def test_evaluate_names_a_missing_version(redis_url, capsys):
    assert main(["evaluate", "--store", redis_url, "--game", "tictactoe", "--version",
                 "4"]) == 1
    assert "tictactoe has no version 4" in capsys.readouterr().err


def _without_matplotlib(tmp_path) -> dict[str, str]:
    """An environment whose Python cannot import matplotlib (as after the README's install
    without the plot extra)."""
    import os

    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['matplotlib'] = None\n")
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(hide),
                                                        os.environ.get("PYTHONPATH")]))}


def test_plot_without_matplotlib_is_refused_before_training(tmp_path):
    out = tmp_path / "td.gmodel"
    done = _gameai("train", "--game", "tictactoe", "--algorithm", "td", "--until-unbeatable",
                   "--out", str(out), "--plot", str(tmp_path / "td.png"), "--json",
                   env=_without_matplotlib(tmp_path))
    assert done.returncode == 2, done.stderr
    assert "--plot: plots need matplotlib: pip install 'gameai[plot]'" in done.stderr
    assert done.stdout == "" and "td tictactoe" not in done.stderr  # no training, no bar
    assert not out.exists()


def test_a_plot_that_cannot_be_drawn_never_loses_the_model(tmp_path, capsys):
    out, plot = tmp_path / "td.gmodel", tmp_path / "curves.nosuchformat"
    code = main(["train", "--game", "tictactoe", "--algorithm", "td", "--games", "300",
                 "--seed", "1", "--out", str(out), "--plot", str(plot), "--json", "--quiet"])
    captured = capsys.readouterr()
    assert code == 1
    assert f"cannot draw {plot}" in captured.err and f"the model is kept ({out})" in captured.err
    assert load_model(out.read_bytes()).info.games_played == 300
    assert json.loads(captured.out)["out"] == str(out)


def test_a_plot_into_a_missing_folder_is_refused_before_training(tmp_path, capsys):
    code = main(["train", "--game", "tictactoe", "--algorithm", "td", "--games", "300",
                 "--plot", str(tmp_path / "nowhere" / "td.png"), "--quiet"])
    assert code == 2 and "not a file in an existing directory" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "message"), [
    (["bench", "selfplay", "--game", "mnk-7x7-5"], "mnk-7x7-5 has 49 cells; the table "
     "learners (tally, td, qlearning) handle boards of at most 40"),
    (["bench", "selfplay", "--game", "three-mens-morris"], "gameai bench learners --game "
     "three-mens-morris"),
    (["bench", "learners", "--game", "mnk-7x7-5", "--seeds", "1", "--algorithms", "td"],
     "mnk-7x7-5 has 49 cells"),
    (["bench", "solver", "--game", "nine-holes"], "gameai bench retrograde"),
    (["train", "--game", "mnk-7x7-5", "--algorithm", "td", "--games", "10", "--quiet"],
     "mnk-7x7-5 has 49 cells"),
])
def test_a_game_a_command_cannot_handle_is_one_line(args, message):
    done = _gameai(*args)
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_bench_schedules_names_a_bad_setting_and_a_game_it_cannot_learn():
    done = _gameai("bench", "schedules", "--game", "tictactoe", "--seconds", "0.1",
                   "--setting", "tau_halflife=soon")
    assert done.returncode == 2 and "--setting: parameter 'tau_halflife'" in done.stderr
    done = _gameai("bench", "schedules", "--game", "mnk-7x7-5", "--seconds", "0.1")
    assert done.returncode == 1 and "mnk-7x7-5 has 49 cells" in done.stderr
    assert "Traceback" not in done.stderr


def test_bench_schedules_prints_each_setting(capsys):
    assert main(["bench", "schedules", "--game", "tictactoe", "--seconds", "0.2",
                 "--setting", "tau_halflife=500", "--setting", "", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["effective"]["tau_halflife"] for r in rows] == [500.0, 2000.0]
    assert all(r["games"] > 0 and r["optimal_move_rate"] is not None for r in rows)


def test_bench_schedules_says_why_a_figure_is_missing(capsys):
    assert main(["bench", "schedules", "--game", "connect-four", "--algorithm", "td",
                 "--seconds", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "lost - / -  optimal -" in out
    assert "losses_as_o: not measured: the exhaustive opponent is not tried" in out
    assert "optimal_move_rate: not measured: " in out and "None" not in out
