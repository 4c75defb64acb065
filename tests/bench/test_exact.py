"""``gameai bench exact``: servers with and without a solver budget, driven over REST; with
``--games`` each plays games as X against the perfect player and reports how many of its
best moves were proved exact (issue 26); with ``--book-games`` a book is built first."""

from __future__ import annotations

import json
import subprocess
import sys


def test_games_against_perfect_play_count_the_moves_proved_exact() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "gameai", "bench", "exact", "--budgets", "0,5", "--seconds",
         "1", "--rounds", "1", "--positions", "3000", "--clients", "2", "--games", "2",
         "--time-limit", "0.05", "--model", "bundled", "--book-games", "2",
         "--book-plies", "8-11", "--book-every-reply", "--revisit", "20", "--revisit-wait", "5",
         "--background-ms", "2000", "--json"],
        capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    latency = report["budgets"]
    assert latency["0"]["exact_share"] == 0 and latency["0"]["requests"] > 0
    assert latency["5"]["exact_share"] > 0  # late positions are proved in 5 ms
    assert all(latency[b]["server_cpu_ms"] > 0 for b in ("0", "5"))  # the servers' own
    revisit = report["revisit"]  # the background prover proved what 5 ms did not
    assert revisit["0"]["exact_first"] == revisit["0"]["exact_again"] == 0  # never asked
    assert revisit["5"]["exact_first"] < revisit["5"]["exact_again"] <= 20
    book = report["book"]  # proved before the games, so in the table then
    # the perfect player's moves past its 0.05 s are guesses, so the games end by ply 12
    assert book["games"] == 2 and book["plies"] == [8, 11] and book["proved"] > 0
    assert book["proved"] >= book["positions"] and book["timed_out"] == 0
    assert report["table_size_before_games"] >= book["proved"]
    # every reply is followed only from proved positions of the opponent's: before ply 8
    # none is, so the tree of its replies stops there (the whole tree: test_book_builder)
    tree = book["every_reply"]
    assert tree["complete"] is False and tree["first_missing_ply"] < 8
    assert tree["model_positions"] > tree["model_held"]
    games = report["games"]
    for budget in ("0", "5"):
        g = games[budget]
        assert g["win"] + g["draw"] + g["loss"] == g["games"] == 2
        assert all(int(ply) % 2 == 0 for ply in g["exact_share_by_ply"])  # X's moves only
    assert games["0"]["exact_share"] == 0  # the network alone never says exact
    for g in games.values():  # "every move exact from" is after the game's last inexact one
        by_ply = {int(p): share for p, share in g["exact_share_by_ply"].items()}
        inexact = [p for p, share in by_ply.items() if share < 1]
        assert g["all_exact_from_ply"]["max"] >= (max(inexact) + 2 if inexact else 0)


def test_a_bad_book_is_refused_before_anything_starts(capsys) -> None:
    from gameai.cli import main

    for argv, says in ((["--book-plies", "9-3"], "--book-plies"),
                       (["--book-plies", "ten"], "--book-plies"),
                       (["--book-games", "-1"], "--book-games"),
                       (["--positions", "0"], "--positions"),
                       (["--background-ms", "-1"], "--background-ms"),
                       (["--revisit", "-1"], "--revisit"),
                       (["--budgets", "0,fast"], "--budgets"),
                       (["--budgets", "2000"], "--budgets")):
        assert main(["bench", "exact", *argv]) == 2
        assert says in capsys.readouterr().err
