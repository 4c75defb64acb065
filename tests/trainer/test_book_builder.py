"""The book builder (:mod:`gameai.trainer.book_builder`, ``gameai book build``) on a real
Redis and real worker processes: it proves the positions the model's games reach, deepest
ply first, writes the solver's solutions to the shared table the servers read, stays
within the table's bound, and a second run goes on where the first stopped."""

from __future__ import annotations

import json

import pytest

from gameai.cli import main
from gameai.games import get_game
from gameai.store import ModelStore
from gameai.trainer.book_builder import build_book, local_pool, model_move, reached_positions
from tests.service.conftest import random_ntuple

GAME = "connect-four"
C4 = get_game(GAME)
PLIES, FROM_PLY, GAMES = 26, 23, 30  # late plies: each position proved in milliseconds


@pytest.fixture(scope="module")
def model():
    return random_ntuple(GAME)


def ply_of(state) -> int:
    return sum(state.cell(i) != "-" for i in range(C4.cells))


def test_the_positions_are_the_models_games_one_per_symmetry(model):
    by_ply = reached_positions(model, plies=10, games=20, seed=1)
    assert by_ply == reached_positions(model, plies=10, games=20, seed=1)  # seeded
    assert by_ply != reached_positions(model, plies=10, games=20, seed=2)
    keys = [s.canonical()[0] for states in by_ply for s in states]
    assert len(keys) == len(set(keys))
    for ply, states in enumerate(by_ply):
        assert all(ply_of(s) == ply and not s.is_over() for s in states)
    # game 0: the model is X, so its move from the start is the only position of ply 1
    # that game reached; with X's first move fixed, ply 1 has one position per game pair
    first = C4.initial().play(model_move(model, C4.initial()))
    assert first.canonical()[0] in {s.canonical()[0] for s in by_ply[1]}


def test_a_book_is_proved_deepest_first_and_resumes(model, redis_url):
    with ModelStore.from_url(redis_url, prefix="book") as store, local_pool(1) as submit:
        notes: list[str] = []
        report = build_book(model, store_url=redis_url, prefix="book", plies=PLIES,
                            games=GAMES, submit=submit, workers=1, from_ply=FROM_PLY,
                            max_entries=100_000, notes=notes.append)
        assert [p.ply for p in report.by_ply] == list(range(PLIES, FROM_PLY - 1, -1))
        proved = sum(p.proved for p in report.by_ply)
        assert proved == sum(p.positions for p in report.by_ply) > 0
        assert store.proved().size(game=GAME) == proved
        assert "left:" in notes[0] and "solver time" in notes[0]
        table = store.proved()
        for states in reached_positions(model, plies=PLIES, games=GAMES)[FROM_PLY:]:
            for state in states:
                got, solved = table.get(state), C4.solve(state)
                assert got is not None and got.optimal_moves == solved.optimal_moves
                assert [m.score for m in got.moves] == [m.score for m in solved.moves]
        again = build_book(model, store_url=redis_url, prefix="book", plies=PLIES,
                           games=GAMES, submit=submit, workers=1, from_ply=FROM_PLY,
                           max_entries=100_000)
    assert sum(p.proved for p in again.by_ply) == 0
    assert [p.held for p in again.by_ply] == [p.positions for p in report.by_ply]


def test_a_book_stays_within_the_tables_bound(model, redis_url):
    with ModelStore.from_url(redis_url, prefix="small") as store, local_pool(1) as submit:
        report = build_book(model, store_url=redis_url, prefix="small", plies=PLIES,
                            games=GAMES, submit=submit, workers=1, from_ply=FROM_PLY,
                            max_entries=5)
        assert store.proved().size(game=GAME) == 5
    assert sum(p.proved for p in report.by_ply) == 5
    assert sum(p.full for p in report.by_ply) == sum(p.positions for p in report.by_ply) - 5


def test_the_command_builds_from_the_served_model(model, redis_url, capsys):
    with ModelStore.from_url(redis_url) as store:
        record = store.publish(model.to_bytes(), by="tests")
        store.set_alias(game=GAME, alias="production", version=record.version, by="tests")
    argv = ["book", "build", "--game", GAME, "--plies", str(PLIES), "--from-ply",
            str(FROM_PLY), "--games", str(GAMES), "--workers", "1", "--store", redis_url,
            "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["version"] == record.version and out["backend"] == "local"
    assert [p["ply"] for p in out["by_ply"]] == list(range(PLIES, FROM_PLY - 1, -1))
    assert sum(p["proved"] for p in out["by_ply"]) > 0


@pytest.mark.parametrize(("argv", "status", "says"), [
    (["--game", "chess", "--plies", "4"], 2, "chess"),
    (["--game", GAME, "--plies", "4", "--from-ply", "5"], 2, "--from-ply"),
    (["--game", GAME, "--plies", "4"], 1, "production"),  # nothing published
])
def test_the_command_refuses_what_it_cannot_build(argv, status, says, redis_url, capsys):
    assert main(["book", "build", *argv, "--store", redis_url]) == status
    assert says in capsys.readouterr().err


def test_a_ray_cluster_proves_the_same_book(model, redis_url):
    """Ray tasks on a real two-node cluster on the loopback write the same table."""
    pytest.importorskip("ray", reason="the Ray backend is the extra gameai[ray]")
    from gameai.trainer.book_builder import ray_pool

    from .raycluster import loopback_cluster

    with loopback_cluster(workers=1, cpus=1), ray_pool() as submit:
        report = build_book(model, store_url=redis_url, prefix="ray", plies=PLIES,
                            games=GAMES, submit=submit, workers=2, backend="ray",
                            from_ply=FROM_PLY, max_entries=100_000)
    with ModelStore.from_url(redis_url, prefix="ray") as store:
        table = store.proved()
        proved = sum(p.proved for p in report.by_ply)
        assert proved == sum(p.positions for p in report.by_ply) > 0
        assert table.size(game=GAME) == proved
        state = reached_positions(model, plies=PLIES, games=GAMES)[PLIES][0]
        got = table.get(state)
        assert got is not None and got.optimal_moves == C4.solve(state).optimal_moves


def test_the_estimate_grows_by_the_factor_fitted_over_every_ply():
    from gameai.trainer.book_builder import _growth

    assert _growth({10: 1.0, 9: 2.0, 8: 4.0}) == pytest.approx(2.0)
    # odd plies against even ones swing; the fit follows the trend, not the last step
    assert _growth({10: 1.0, 9: 4.0, 8: 4.0, 7: 16.0}) == pytest.approx(2.297, abs=0.001)
    assert _growth({10: 1.0}) == 1.0 and _growth({10: 2.0, 9: 1.0}) == 1.0
