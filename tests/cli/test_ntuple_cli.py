"""gameai train --algorithm ntuple and gameai bench ntuple as a user runs them."""

import json

import numpy as np

from gameai.models import load_model
from tests.cli.test_games_cli import gameai


def test_train_then_bench_an_ntuple_model(tmp_path):
    out = tmp_path / "ttt.model"
    kept = tmp_path / "checkpoints"
    trained = gameai("train", "--game", "tictactoe", "--algorithm", "ntuple", "--games",
                     "20000", "--until-unbeatable", "--eval-every", "2000", "--seed", "1",
                     "--out", str(out), "--keep-checkpoints", str(kept), "--json", "--quiet")
    assert trained.returncode == 0, trained.stderr
    report = json.loads(trained.stdout)
    assert report["evaluation"]["losses_as_x"] == report["evaluation"]["losses_as_o"] == 0
    # every checkpoint's model is kept, named by its games; the last is the model written
    games = sorted(int(p.stem.split("-")[1]) for p in kept.glob("tictactoe-*.model"))
    assert len(games) == report["checkpoints"] > 2 and games[-1] == report["games_played"]
    last = load_model((kept / f"tictactoe-{games[-1]}.model").read_bytes())
    assert np.array_equal(last.weights, load_model(out.read_bytes()).weights)
    first = load_model((kept / f"tictactoe-{games[0]}.model").read_bytes())
    assert not np.array_equal(first.weights, last.weights)
    bench = gameai("bench", "ntuple", "--model", str(out), "--depths", "0,2",
                   "--skip-latency", "--judge", "10", "--noisy-games", "5", "--per-stage",
                   "10", "--json")
    assert bench.returncode == 0, bench.stderr
    figures = json.loads(bench.stdout)
    assert set(figures["strength"]["policies"]) == {"network", "depth 0", "depth 2"}
    assert figures["strength"]["policies"]["depth 2"]["losses_as_x"] == 0
    assert figures["judge"]["policies"]["network"]["vs_perfect_as_x"]["games"] == 10


def test_bench_ntuple_refuses_other_models_and_bad_depths(tmp_path):
    out = tmp_path / "td.model"
    assert gameai("train", "--game", "tictactoe", "--algorithm", "td", "--games", "100",
                  "--out", str(out), "--quiet").returncode == 0
    refused = gameai("bench", "ntuple", "--model", str(out))
    assert refused.returncode != 0
    assert "is a table model, not an n-tuple network" in refused.stderr
    bad = gameai("bench", "ntuple", "--model", str(out), "--depths", "a")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
