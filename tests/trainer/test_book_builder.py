"""The book builder (:mod:`gameai.trainer.book_builder`, ``gameai book build``) on a real
Redis and real worker processes: it proves the positions the model's games reach, deepest
ply first, in rounds until the games the server would play with those proofs reach nothing
new, against a random or a perfect opponent, writes the solver's solutions to the shared
table the servers read, stays within the table's bound, and a second run goes on where the
first stopped."""

from __future__ import annotations

import json
import random

import pytest

from gameai.cli import main
from gameai.games import get_game
from gameai.store import ModelStore
from gameai.trainer.book_builder import (
    build_book,
    local_pool,
    model_move,
    proved_reply,
    random_opponent,
    reached_positions,
    reply_tree,
    tree_coverage,
)
from gameai.trainer.evaluation.calibrate import PerfectPlayer
from gameai.trainer.evaluation.judge import NoisySolver
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


def rounds_of(report) -> list[list[int]]:
    """The plies a report proved, round by round."""
    out: list[list[int]] = []
    for p in report.by_ply:
        if p.round > len(out):
            out.append([])
        out[-1].append(p.ply)
    return out


def test_a_book_is_proved_deepest_first_in_rounds_and_resumes(model, redis_url):
    with ModelStore.from_url(redis_url, prefix="book") as store, local_pool(1) as submit:
        notes: list[str] = []
        report = build_book(model, store_url=redis_url, prefix="book", plies=PLIES,
                            games=GAMES, submit=submit, workers=1, from_ply=FROM_PLY,
                            max_entries=100_000, notes=notes.append)
        rounds = rounds_of(report)
        assert rounds[0] == list(range(PLIES, FROM_PLY - 1, -1))
        # the first round's proofs changed the model's moves, so its games went elsewhere:
        # a later round proved what they reached, again deepest first
        assert len(rounds) >= 2 and all(r == sorted(r, reverse=True) for r in rounds)
        proved = sum(p.proved for p in report.by_ply)
        assert proved > sum(p.positions for p in report.by_ply if p.round == 1) > 0
        assert store.proved().size(game=GAME) == proved
        assert "left:" in notes[0] and "solver time" in notes[0]
        assert any(n.startswith("round 2 ") for n in notes)  # a later round says so
        table = store.proved()
        for states in reached_positions(model, plies=PLIES, games=GAMES)[FROM_PLY:]:
            for state in states:
                got, solved = table.get(state), C4.solve(state)
                assert got is not None and got.optimal_moves == solved.optimal_moves
                assert [m.score for m in got.moves] == [m.score for m in solved.moves]
        # the games the server plays with the book (its exact moves) stay inside the book
        served = reached_positions(model, plies=PLIES, games=GAMES, proved=table.get)
        assert all(table.get(s) is not None for states in served[FROM_PLY:] for s in states)
        again = build_book(model, store_url=redis_url, prefix="book", plies=PLIES,
                           games=GAMES, submit=submit, workers=1, from_ply=FROM_PLY,
                           max_entries=100_000)
    assert sum(p.proved for p in again.by_ply) == 0 and rounds_of(again) == [rounds[0]]
    assert [p.held for p in again.by_ply] == [len(states) for states in
                                              served[FROM_PLY:][::-1]]


def test_the_models_move_where_the_position_is_proved_is_the_servers(model):
    """Of the optimal moves, the one the network values most (its own if optimal)."""
    others = 0
    late = reached_positions(model, plies=24, games=20, seed=5)
    for state in late[22] + late[23]:  # proved in milliseconds
        solution = C4.solve(state)
        optimal = set(solution.optimal_moves)
        ranked = [m.action_id for m in model.search(state, model.default_depth).moves]
        mine = model_move(model, state)
        expected = mine if mine in optimal else next(a for a in ranked if a in optimal)
        assert model_move(model, state, solution) == expected
        assert model_move(model, state, None) == mine
        others += mine not in optimal
    assert others  # the network's own move was not optimal somewhere: the other case ran


def tictactoe_ntuple():
    """:func:`random_ntuple` for a board without gravity (three cell states)."""
    import numpy as np

    from gameai.games.mnk.game import as_mnk
    from gameai.models import ModelInfo, NtupleModel
    from gameai.models.ntuple import random_walks

    game = get_game("tictactoe")
    weights = np.random.default_rng(1).normal(0, 0.3, (4, 3 ** 4)).astype(np.float32)
    return NtupleModel(game, ModelInfo(game=game.name, algorithm="random"),
                       tuples=random_walks(as_mnk(game), 4, 4, seed=1), weights=weights)


def production(redis_url: str, prefix: str, model) -> None:
    """Publish ``model`` in the store under ``prefix`` as its game's production."""
    with ModelStore.from_url(redis_url, prefix=prefix) as store:
        record = store.publish(model.to_bytes(), by="tests")
        store.set_alias(game=model.game.name, alias="production", version=record.version,
                        by="tests")


def child_of_an_optimal_move(perfect, parents, child) -> bool:
    key = child.canonical()[0]
    return any(parent.play(a).canonical()[0] == key
               for parent in parents for a in perfect.optimal(parent))


@pytest.mark.parametrize(("opponent", "optimal"), [("perfect", True), ("random", False)])
def test_a_perfect_opponent_plays_only_optimal_moves(opponent, optimal):
    game = get_game("tictactoe")
    perfect = PerfectPlayer(game)
    model = tictactoe_ntuple()
    by_ply = reached_positions(model, plies=8, games=40, seed=3, sides="X",
                               opponent=perfect if opponent == "perfect" else random_opponent)
    assert len(by_ply[1]) == 1  # the model is X in every game: one first move
    # every position after an O move comes from one of the previous ply's by an optimal
    # move of O's (the positions are kept once up to symmetry: compared as such)
    replies = [child_of_an_optimal_move(perfect, by_ply[ply - 1], child)
               for ply in range(2, 9, 2) for child in by_ply[ply]]
    assert replies and all(replies) is optimal
    assert len(reached_positions(model, plies=8, games=40, seed=3)[1]) > 1  # X and O


def tree_keys(model, game, replies, plies: int) -> set[int]:
    """The canonical keys of every position of the model's games as O up to ``plies``
    when its opponent may answer with any of ``replies(state)``."""
    keys: set[int] = set()
    frontier = [game.initial()]
    for _ in range(plies + 1):
        following = []
        for state in frontier:
            keys.add(state.canonical()[0])
            if state.is_over():
                continue
            moves = [model_move(model, state)] if state.to_move == "O" else replies(state)
            following.extend(state.play(a) for a in moves)
        frontier = following
    return keys


def test_a_noisy_opponent_never_plays_into_a_loss():
    """Its slips (:func:`test_a_proved_position_is_answered_as_the_opponent_would`, and the
    judge's tests of :class:`NoisySolver`) are moves that do not lose."""
    game = get_game("tictactoe")
    model = tictactoe_ntuple()
    noisy = NoisySolver(game, PerfectPlayer(game), 0.5, time_limit=5)
    reached = {s.canonical()[0] for states in reached_positions(
        model, plies=8, games=60, seed=3, sides="O", opponent=noisy) for s in states}
    safe = tree_keys(model, game, lambda s: game.non_losing_actions(s) or s.legal_actions(), 8)
    everything = tree_keys(model, game, lambda s: s.legal_actions(), 8)
    assert len(reached) > 20 and reached <= safe < everything


@pytest.mark.parametrize("noise", [0.0, 0.5, 1.0])
def test_a_proved_position_is_answered_as_the_opponent_would(noise):
    """Where the table holds the opponent's position, its move comes from the solution:
    always optimal for the perfect player, a non-losing move with the noise's
    probability for a noisy solver."""
    game = get_game("tictactoe")
    perfect = PerfectPlayer(game)
    opponent = perfect if noise == 0 else NoisySolver(game, perfect, noise, time_limit=5)
    state = game.parse("O--|---|-X-")  # X to move: one move wins, two draw, four lose
    solution = game.solve(state)
    optimal = set(solution.optimal_moves)
    safe = {m.move for m in solution.moves if m.outcome != "loss"}
    assert optimal < safe < set(state.legal_actions())
    rng = random.Random(0)
    played = {proved_reply(opponent, solution, rng) for _ in range(200)}
    assert played <= safe
    assert (played == optimal) is (noise == 0)
    assert (played == safe) is (noise > 0)


def every_line(game, model, table, plies: int) -> list:
    """The reference for :func:`reply_tree`: every position of every line where the model
    plays the server's move (the table's proof where held) and the opponent, O, every move
    the game's own solver finds optimal, to ply ``plies``; plainly recursive."""
    out = []

    def walk(state, ply: int) -> None:
        if state.is_over() or ply > plies:
            return
        out.append(state)
        if state.to_move == "X":
            walk(state.play(model_move(model, state, table.get(state))), ply + 1)
        else:
            for action in game.optimal_actions(state):
                walk(state.play(action), ply + 1)

    walk(game.initial(), 0)
    return out


def test_every_reply_proves_every_line_a_perfect_opponent_can_take(redis_url, tmp_path,
                                                                    monkeypatch):
    monkeypatch.setenv("GAMEAI_CACHE_DIR", str(tmp_path))
    game = get_game("tictactoe")
    model = tictactoe_ntuple()
    perfect = PerfectPlayer(game)
    with ModelStore.from_url(redis_url, prefix="every") as store, local_pool(1) as submit:
        table = store.proved()
        # a sample of games leaves lines out: the check says so
        build_book(model, store_url=redis_url, prefix="every", plies=8, games=1,
                   submit=submit, workers=1, opponent=perfect, sides="X",
                   max_entries=100_000)
        sampled = tree_coverage(model, plies=8, side="X", proved=table.get)
        assert not sampled.complete and sampled.first_missing_ply is not None
        report = build_book(model, store_url=redis_url, prefix="every", plies=8, games=0,
                            submit=submit, workers=1, opponent=perfect, sides="X",
                            every_reply=True, max_entries=100_000)
        coverage = report.coverage["X"]
        assert coverage.complete and coverage.first_missing_ply is None
        assert coverage.model_positions > 1 and coverage.opponent_positions > 1
        assert sum(p.proved for p in report.by_ply) > 0
        assert max(p.round for p in report.by_ply) >= 2  # a reply further each round
        # the tree is the reference's lines, each position once up to symmetry, all held
        lines = every_line(game, model, table, plies=8)
        tree = [s for states in reply_tree(model, plies=8, side="X", proved=table.get)
                for s in states]
        assert {s.canonical()[0] for s in lines} == {s.canonical()[0] for s in tree}
        assert len(tree) == coverage.model_positions + coverage.opponent_positions
        assert all(table.get(s) is not None for s in lines)


def test_every_reply_needs_a_perfect_opponent(model, redis_url):
    with local_pool(1) as submit, pytest.raises(ValueError, match="every_reply"):
        build_book(model, store_url=redis_url, prefix="norandom", plies=4, games=0,
                   submit=submit, workers=1, every_reply=True, max_entries=10)


def test_a_book_stays_within_the_tables_bound(model, redis_url):
    with ModelStore.from_url(redis_url, prefix="small") as store, local_pool(1) as submit:
        report = build_book(model, store_url=redis_url, prefix="small", plies=PLIES,
                            games=GAMES, submit=submit, workers=1, from_ply=FROM_PLY,
                            max_entries=5)
        assert store.proved().size(game=GAME) == 5
    assert sum(p.proved for p in report.by_ply) == 5
    first = [p for p in report.by_ply if p.round == 1]
    assert sum(p.full for p in first) == sum(p.positions for p in first) - 5


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
    assert out["opponent"] == "random" and out["sides"] == "XO"
    assert [p["ply"] for p in out["by_ply"] if p["round"] == 1] == \
        list(range(PLIES, FROM_PLY - 1, -1))
    assert sum(p["proved"] for p in out["by_ply"]) > 0


def test_the_command_builds_against_a_perfect_opponent(redis_url, capsys, tmp_path,
                                                      monkeypatch):
    monkeypatch.setenv("GAMEAI_CACHE_DIR", str(tmp_path))  # the perfect player's own book
    production(redis_url, "perfect", tictactoe_ntuple())
    argv = ["book", "build", "--game", "tictactoe", "--plies", "6", "--games", "20",
            "--opponent", "perfect", "--sides", "X", "--workers", "1", "--store", redis_url,
            "--store-prefix", "perfect", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["opponent"] == "perfect" and out["sides"] == "X"
    with ModelStore.from_url(redis_url, prefix="perfect") as store:
        assert store.proved().size(game="tictactoe") == sum(p["proved"] for p in
                                                            out["by_ply"]) > 0


def test_the_command_builds_against_a_noisy_opponent(redis_url, capsys, tmp_path,
                                                    monkeypatch):
    monkeypatch.setenv("GAMEAI_CACHE_DIR", str(tmp_path))
    production(redis_url, "noisy", tictactoe_ntuple())
    argv = ["book", "build", "--game", "tictactoe", "--plies", "6", "--games", "20",
            "--opponent", "noisy", "--noise", "0.3", "--sides", "O", "--workers", "1",
            "--store", redis_url, "--store-prefix", "noisy", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["opponent"] == "noisy" and out["noise"] == 0.3 and out["sides"] == "O"
    with ModelStore.from_url(redis_url, prefix="noisy") as store:
        assert store.proved().size(game="tictactoe") == sum(p["proved"] for p in
                                                            out["by_ply"]) > 0


def test_the_command_builds_every_reply_and_says_the_tree_is_complete(
        redis_url, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("GAMEAI_CACHE_DIR", str(tmp_path))
    production(redis_url, "replies", tictactoe_ntuple())
    argv = ["book", "build", "--game", "tictactoe", "--plies", "7", "--games", "0",
            "--opponent", "perfect", "--every-reply", "--sides", "X", "--workers", "1",
            "--store", redis_url, "--store-prefix", "replies"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["every_reply"]["X"]["complete"] is True
    assert out["every_reply"]["X"]["model_held"] == out["every_reply"]["X"]["model_positions"]
    assert main(argv) == 0  # again: nothing left to prove, and the text says it is complete
    assert "complete: every line a perfect opponent can take is proved" in \
        capsys.readouterr().out


@pytest.mark.parametrize(("argv", "status", "says"), [
    (["--game", "chess", "--plies", "4"], 2, "chess"),
    (["--game", GAME, "--plies", "4", "--from-ply", "5"], 2, "--from-ply"),
    (["--game", GAME, "--plies", "4"], 1, "production"),  # nothing published
])
def test_the_command_refuses_what_it_cannot_build(argv, status, says, redis_url, capsys):
    assert main(["book", "build", *argv, "--store", redis_url]) == status
    assert says in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "says"), [
    (["--opponent", "strong"], "--opponent"),
    (["--sides", "XX"], "--sides"),
    (["--opponent", "perfect", "--opponent-time-limit", "0"], "--opponent-time-limit"),
    (["--every-reply"], "--opponent perfect"),
    (["--opponent", "noisy", "--every-reply"], "--opponent perfect"),
    (["--noise", "0.3"], "--opponent noisy"),
    (["--opponent", "noisy", "--noise", "1"], "--noise must be more than 0 and less than 1"),
    (["--opponent", "noisy", "--noise", "0"], "--noise must be more than 0 and less than 1"),
    (["--games", "0"], "--games must be 1"),
    (["--opponent", "perfect", "--every-reply", "--games", "-1"], "--games must be 0"),
])
def test_the_command_names_a_bad_option(argv, says, model, redis_url, capsys):
    with ModelStore.from_url(redis_url, prefix="bad") as store:
        record = store.publish(model.to_bytes(), by="tests")
        store.set_alias(game=GAME, alias="production", version=record.version, by="tests")
    try:
        status = main(["book", "build", "--game", GAME, "--plies", "4", *argv, "--store",
                       redis_url, "--store-prefix", "bad"])
    except SystemExit as e:  # argparse's own refusal of a choice
        status = e.code
    assert status == 2
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
        assert proved >= sum(p.positions for p in report.by_ply if p.round == 1) > 0
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
    # microsecond proofs of the end game fit to absurd factors: bounded
    from gameai.trainer.book_builder import MAX_GROWTH

    assert _growth({40: 1e-6, 39: 1e-4, 38: 1e-2}) == MAX_GROWTH


def test_the_command_exports_the_table_as_a_book_file(redis_url, capsys, tmp_path):
    """``gameai book export``: the table's entries, by key, the same bytes each time (a
    bundled book is made this way), read back as the table holds them."""
    from gameai.store.book import read_book

    game = get_game("tictactoe")
    with ModelStore.from_url(redis_url, prefix="export") as store:
        table = store.proved()
        for pattern in ("X--|---|---", "X--|-O-|---", "XO-|-X-|---"):
            state = game.parse(pattern)
            table.put(state, game.solve(state))
        held = table.entries(game="tictactoe")
    argv = ["book", "export", "--game", "tictactoe", "--store", redis_url, "--store-prefix",
            "export"]
    assert main([*argv, "--out", str(tmp_path / "a.gz")]) == 0
    assert "3 proved positions written" in capsys.readouterr().out
    assert main([*argv, "--out", str(tmp_path / "b.gz")]) == 0
    data = (tmp_path / "a.gz").read_bytes()
    assert data == (tmp_path / "b.gz").read_bytes()
    assert read_book(data, "tictactoe") == held
    assert main(["book", "export", "--game", "chess", "--out", str(tmp_path / "c.gz"),
                 "--store", redis_url]) == 2
    assert "chess" in capsys.readouterr().err
    assert main([*argv, "--out", str(tmp_path / "no" / "such" / "dir.gz")]) == 1
    assert "--out" in capsys.readouterr().err
