"""gameai train --algorithm ntuple and gameai bench ntuple as a user runs them."""

import json

import numpy as np

from gameai.host import cache_dir
from gameai.models import load_model
from tests.cli.test_games_cli import gameai


def test_train_then_bench_an_ntuple_model(tmp_path):
    out = tmp_path / "ttt.model"
    kept = tmp_path / "checkpoints"
    trained = gameai("train", "--game", "tictactoe", "--algorithm", "ntuple", "--games",
                     "6000", "--eval-every", "2000", "--seed", "1",
                     "--out", str(out), "--keep-checkpoints", str(kept), "--json", "--quiet")
    assert trained.returncode == 0, trained.stderr
    report = json.loads(trained.stdout)
    served = report["evaluation"]["served"]  # the policy a server plays: depth 4 here
    assert served["losses_as_x"] == served["losses_as_o"] == 0
    assert report["evaluation"]["unbeatable"] is True
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
    assert set(figures["judge"]["policies"]) == {"network", "depth 4"}  # tictactoe's default


def test_bench_ntuple_judges_the_depths_asked_on_the_positions_asked(tmp_path):
    """--judge-depths picks the policies judged, --judge-sides the sides, --positions-seed
    the set of positions, --exact-ms adds the served best level to the games too; a class
    the board cannot have is omitted with the reason, not a crash."""
    small = tmp_path / "c45.model"
    assert gameai("train", "--game", "connect-4x5-4", "--algorithm", "ntuple", "--games",
                  "300", "--seed", "2", "--out", str(small), "--quiet").returncode == 0
    bench = gameai("bench", "ntuple", "--model", str(small), "--skip-latency",
                   "--skip-strength", "--judge", "4", "--noisy-games", "2", "--per-stage",
                   "0", "--judge-depths", "1,3", "--judge-sides", "X", "--positions", "3",
                   "--judge-mistakes", "--judge-seed", "3", "--exact-ms", "500", "--json")
    assert bench.returncode == 0, bench.stderr
    figures = json.loads(bench.stdout)
    assert figures["judge"]["seed"] == 3
    judged = {"network", "depth 1", "depth 3", "level best"}
    assert set(figures["judge"]["policies"]) == judged
    for name, policy in figures["judge"]["policies"].items():
        assert set(policy) == {"vs_perfect_as_x"}  # --judge-sides X: first player only
        found = policy["vs_perfect_as_x"]["first_mistakes"]  # --judge-mistakes
        assert found["games"] <= policy["vs_perfect_as_x"]["games"]
        assert set(found["others_right"]) == judged - {name}
    # this board's solver is a whole-game table: level best proves every move, so it
    # keeps the drawn start to the end, which 300 games of self-play do not
    best = figures["judge"]["policies"]["level best"]["vs_perfect_as_x"]
    assert best["loss"] == 0 and best["first_mistakes"]["positions"] == []
    assert sum(p["vs_perfect_as_x"]["loss"] for p in figures["judge"]["policies"].values()) > 0
    hard = figures["positions"]["classes"]["beginning hard"]
    assert "needs 28 or more plies left" in hard["omitted"]  # 20 cells: none exist
    # other classes, and the served best level beside the network (a budget of 200 ms
    # proves every end-easy position of this board, so the level errs on none there)
    bench = gameai("bench", "ntuple", "--model", str(small), "--skip-latency",
                   "--skip-strength", "--positions", "3", "--position-classes",
                   "end-easy,middle-easy", "--exact-ms", "200", "--json")
    assert bench.returncode == 0, bench.stderr
    classes = json.loads(bench.stdout)["positions"]["classes"]
    assert set(classes) == {"end easy", "middle easy"}
    for figures in classes.values():
        for policy in ("network", "depth 2", "level best"):
            assert {"by_score", "by_outcome"} <= set(figures[policy])
            assert figures[policy]["by_score"]["errors"] >= \
                figures[policy]["by_outcome"]["errors"]
    assert classes["end easy"]["level best"]["by_score"]["errors"] == 0
    for argv, says in ((["--position-classes", "middle-hardest"], "is not STAGE-DIFFICULTY"),
                       (["--exact-ms", "-1"], "--exact-ms: from 0 to 1000"),
                       (["--proved-store", "redis://127.0.0.1:1"], "give --exact-ms and --judge"),
                       (["--exact-ms", "1", "--judge", "2", "--proved-store",
                         "redis://127.0.0.1:1"], "--proved-store redis://127.0.0.1:1")):
        bad = gameai("bench", "ntuple", "--model", str(small), "--skip-latency",
                     "--positions", "3", *argv)
        assert bad.returncode != 0 and says in bad.stderr, bad.stderr
        assert "Traceback" not in bad.stderr
    c4 = tmp_path / "c4.model"
    assert gameai("train", "--game", "connect-four", "--algorithm", "ntuple", "--games",
                  "300", "--seed", "2", "--out", str(c4), "--quiet").returncode == 0
    boards = {}
    for seed in ("1", "2"):
        bench = gameai("bench", "ntuple", "--model", str(c4), "--skip-latency",
                       "--skip-strength", "--judge-depths", "0,2", "--positions", "2",
                       "--positions-seed", seed, "--json")
        assert bench.returncode == 0, bench.stderr
        report = json.loads(bench.stdout)["positions"]
        assert report["seed"] == int(seed)
        for figures in report["classes"].values():
            assert figures["positions"] == 2
            assert {"network", "depth 0", "depth 2"} <= set(figures)
        boards[seed] = sorted(json.loads(p.read_text())[0]["board"] for p in (
            cache_dir().glob(f"bench-connect-four-*-s{seed}-n2.json")))
    assert boards["1"] and boards["1"] != boards["2"]  # another seed, other positions
    bad = gameai("bench", "ntuple", "--model", str(small), "--skip-latency",
                 "--judge-depths", "3,x")
    assert bad.returncode != 0 and "--judge-depths: '3,x' is not a list" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_bench_ntuple_refuses_other_models_and_bad_depths(tmp_path):
    out = tmp_path / "td.model"
    assert gameai("train", "--game", "tictactoe", "--algorithm", "td", "--games", "100",
                  "--out", str(out), "--quiet").returncode == 0
    refused = gameai("bench", "ntuple", "--model", str(out))
    assert refused.returncode != 0
    assert "is a table model, not an n-tuple network" in refused.stderr
    bad = gameai("bench", "ntuple", "--model", str(out), "--depths", "a")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
