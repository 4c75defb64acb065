"""Levels of play in the server: never illegal, wins in one taken from strong up, seeds that
repeat, the sticky split, errors and metrics, through the core and both transports of a
real server (the policies themselves: tests/models/test_levels.py)."""

from __future__ import annotations

import random

import grpc
import httpx
import pytest

from gameai.games import get_game
from gameai.games.mnk.board import Board
from gameai.games.mnk.positions import live_boards
from gameai.models import TableModel
from gameai.models.levels import LEVELS, winning_actions
from gameai.models.oracle import solver_model
from gameai.service import core
from gameai.service.errors import InvalidRequest
from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.store import ModelStore
from tests.service.conftest import RunningServer, random_ntuple, weak_model

TTT = get_game("tictactoe")
MORRIS = "three-mens-morris"
C4 = "connect-four"


@pytest.fixture
def registry(store: ModelStore, perfect: TableModel) -> Registry:
    """tictactoe: version 1 perfect (production), version 2 knows nothing (canary at 30 %,
    and the alias ``weak``); three-mens-morris: its solver's model; connect-four: an
    n-tuple network of random weights (the rules alone must keep its levels legal and
    take its wins)."""
    one = store.publish(perfect.to_bytes(), by="tests").version
    two = store.publish(weak_model().to_bytes(), by="tests").version
    store.set_alias(game="tictactoe", alias="production", version=one, by="tests")
    store.set_alias(game="tictactoe", alias="weak", version=two, by="tests")
    store.set_canary(game="tictactoe", version=two, weight=30, by="tests")
    morris = store.publish(solver_model(get_game(MORRIS)).to_bytes(), by="tests").version
    store.set_alias(game=MORRIS, alias="production", version=morris, by="tests")
    c4 = store.publish(random_ntuple(C4).to_bytes(), by="tests").version
    store.set_alias(game=C4, alias="production", version=c4, by="tests")
    registry = Registry(store, ("tictactoe", MORRIS, C4), Metrics())
    registry.store_up = True
    registry.refresh()
    return registry


def walk_positions(name: str, limit: int) -> list[tuple[str, str]]:
    """Reachable positions (board, side to move) of the game ``name`` by a seeded random
    walk: for morris, placements and movements."""
    game, rng, found = get_game(name), random.Random(7), {}
    while len(found) < limit:
        state = game.initial()
        while not state.is_over() and len(found) < limit:
            found[str(state), state.to_move] = None
            state = state.play(rng.choice(state.legal_actions()))
    return list(found)


def test_no_level_plays_an_illegal_move_and_strong_up_never_misses_a_win(registry) -> None:
    """Every live tictactoe position, with the perfect model and with one that knows
    nothing (which would miss every win by its values), morris positions with movements
    and Connect Four positions (gravity): the move played is legal; from strong up it wins
    at once if any move does."""
    cases = [("tictactoe", b, "", m) for b in live_boards(TTT) for m in ("1", "weak")]
    cases += [(name, b, side, "") for name in (MORRIS, C4)
              for b, side in walk_positions(name, 400)]
    missed_below_strong = 0
    for game, board, side, model in cases:
        state = get_game(game).parse(board, to_move=side)
        legal, wins = set(state.legal_actions()), set(winning_actions(state))
        for name in LEVELS:
            for seed in (1, 2):
                a = core.best_move(registry, game=game, board=board, to_move=side,
                                   model=model, level=name, seed=seed)
                assert a.move.action_id in legal, (game, board, name)
                assert a.level == name
                if wins and LEVELS[name].takes_wins:
                    assert a.move.action_id in wins, (game, board, name)
                elif wins and a.move.action_id not in wins:
                    missed_below_strong += 1
    assert missed_below_strong > 0  # the lower levels do miss some: the rule is theirs


def test_best_is_the_models_top_move(registry, perfect: TableModel) -> None:
    """Without a level the answer is what it was before levels: the top move."""
    for board in live_boards(TTT)[::7]:
        expected = perfect.evaluate(Board.parse(TTT, board)).best
        for level in ("", "best"):
            a = core.best_move(registry, game="tictactoe", board=board, model="1", level=level)
            assert (a.move.index, a.level) == (expected.index, "best")
            assert a.value == pytest.approx(expected.value, abs=1e-6)


def test_a_seed_repeats_a_whole_game(registry) -> None:
    """Two games at beginner against the same fixed opponent line with the same seed are
    the same game; another seed plays another game somewhere in 20 tries."""
    def game(seed: int) -> list[int]:
        state, played = TTT.initial(), []
        while not state.is_over():
            if state.to_move == "X":
                a = core.best_move(registry, game="tictactoe", board=str(state), model="1",
                                   level="beginner", seed=seed)
                action = a.move.action_id
            else:
                action = state.legal_actions()[0]
            played.append(action)
            state = state.play(action)
        return played

    first = game(12345)
    assert all(game(12345) == first for _ in range(5))
    assert any(game(seed) != first for seed in range(20))


def test_without_a_seed_games_differ(registry) -> None:
    moves = {core.best_move(registry, game="tictactoe", board="---|---|---", model="1",
                            level="beginner").move.index for _ in range(60)}
    assert len(moves) > 3


def test_the_canary_split_stays_sticky_by_client_id_at_every_level(registry) -> None:
    """A client keeps its version whatever level it asks for, so it keeps one opponent."""
    versions: dict[str, set[int]] = {}
    for i in range(60):
        client = f"player-{i}"
        for name in (*LEVELS, "", "casual", "beginner"):
            a = core.best_move(registry, game="tictactoe", board="X--|---|---", level=name,
                               client_id=client)
            versions.setdefault(client, set()).add(a.version)
    assert all(len(v) == 1 for v in versions.values())
    assert {v for vs in versions.values() for v in vs} == {1, 2}


@pytest.mark.parametrize(("level", "seed", "field"), [
    ("expert", None, "level"), (7, None, "level"), ("casual", -1, "seed"),
    ("casual", 2**63, "seed"), ("casual", "12", "seed"), ("casual", 1.5, "seed"),
    ("casual", True, "seed")])
def test_a_bad_level_or_seed_is_named(registry, level, seed, field) -> None:
    with pytest.raises(InvalidRequest) as caught:
        core.best_move(registry, game="tictactoe", board="---|---|---", level=level, seed=seed)
    assert caught.value.field == field
    if field == "level" and level == "expert":
        assert "beginner, casual, strong, best" in str(caught.value)


def test_every_answer_is_counted_by_level(registry) -> None:
    def count(level: str) -> float:
        value = registry.metrics.registry.get_sample_value(
            "gameai_level_moves_total", {"game": "tictactoe", "level": level})
        return value or 0.0

    assert count("strong") == 0.0  # listed from the start, so dashboards show the zero
    for level, n in (("casual", 3), ("", 2), ("strong", 1)):
        for _ in range(n):
            core.best_move(registry, game="tictactoe", board="---|---|---", level=level)
    assert (count("beginner"), count("casual"), count("strong"), count("best")) == (0, 3, 1, 2)


# -- both transports ---------------------------------------------------------------------

def test_rest_and_grpc_play_the_same_seeded_move(server: RunningServer) -> None:
    stub = move_pb2_grpc.MoveServiceStub(grpc.insecure_channel(server.grpc))
    with httpx.Client(base_url=server.http, timeout=10) as http:
        for seed in range(12):
            body = {"board": "X--|---|---", "level": "casual", "seed": seed}
            rest = http.post("/v1/games/tictactoe/best-move", json=body).json()
            rpc = stub.BestMove(move_pb2.BestMoveRequest(game="tictactoe", **body))
            assert rest["level"] == rpc.level == "casual"
            assert rest["move"]["index"] == rpc.move.index
            assert rest["value"] == pytest.approx(rpc.value)
        r = stub.BestMove(move_pb2.BestMoveRequest(game="tictactoe", board="XX-|OO-|---"))
        assert (r.level, r.move.index) == ("best", 2)
        assert http.post("/v1/games/tictactoe/best-move",
                         json={"board": "XX-|OO-|---", "seed": "x"}).json()["error"][
            "field"] == "seed"


def test_the_published_calibration_is_the_measured_one_and_ordered() -> None:
    """docs/levels.md shows exactly the figures the server serves (gameai/service/levels.json),
    for every game the server is documented to serve, and every one is ordered."""
    from pathlib import Path

    from gameai.service.calibration import load_calibration, markdown

    docs = (Path(__file__).resolve().parents[2] / "docs" / "levels.md").read_text()
    saved = load_calibration()
    morris_variants = {f"{base}{options}" for base in ("three-mens-morris", "nine-holes")
                       for options in ("-no-diagonals", "-no-centre-opening",
                                       "-no-diagonals-no-centre-opening")}
    assert {"tictactoe", "four-in-a-row", "three-mens-morris", "nine-holes",
            "connect-four", "mnk-4x5-4"} | morris_variants <= set(saved)
    for game, report in saved.items():
        assert report["game"] == game and report["unordered"] == []
        assert set(report["levels"]) == set(LEVELS)
        assert markdown(report) in docs, f"docs/levels.md does not show {game}'s figures"


def test_levels_never_show_another_models_calibration_as_the_served_ones(registry) -> None:
    """connect-four's levels were calibrated with the bundled network; a server whose
    production is another model (here random weights) says the figures are another
    model's and shows the served version's own judged figures where it has them."""
    from gameai.service import core
    from gameai.service.calibration import level_entries

    c4 = core.list_levels(registry, game="connect-four")
    assert c4.calibration is not None and not c4.calibration_applies
    assert c4.served_version is not None and c4.served_strength is None  # never judged
    best = next(e for e in level_entries(c4.levels, c4.calibration, c4.calibration_applies)
                if e["name"] == "best")
    made = c4.calibration["model"]["created_at"]  # the bundled model's
    games = c4.calibration["model"]["games_played"]
    assert best["summary"].startswith(f"measured with another model (ntuple, {games:,} "
                                      f"games, made {made}), not the version "
                                      f"served now: it wins ")
    assert best["calibration_applies"] is False
    # tic-tac-toe is served by the exact solver's tables: the calibration's own model
    ttt = core.list_levels(registry, game="tictactoe")
    assert ttt.calibration_applies
    best = next(e for e in level_entries(ttt.levels, ttt.calibration, True)
                if e["name"] == "best")
    assert best["summary"].startswith("wins ")


def test_the_served_versions_judged_strength_is_shown_with_the_levels(store, perfect) -> None:
    from gameai.models import ModelInfo
    from gameai.service import core
    from gameai.service.metrics import Metrics

    judged = {"policy": "depth 3", "seconds": 30.0, "measures": [
        {"name": "vs_perfect_as_x", "kind": "score", "games": 100, "wins": 90, "draws": 6,
         "losses": 4, "score": {"value": 0.93, "low": 0.88, "high": 0.97}}]}
    info = ModelInfo(game="tictactoe", algorithm="ntuple", seed=4, games_played=10,
                     evaluation={"judged": judged})
    version = store.publish(perfect.with_info(info).to_bytes(), by="tests").version
    store.set_alias(game="tictactoe", alias="production", version=version, by="tests")
    registry = Registry(store, ("tictactoe",), Metrics())
    registry.set_store_up(True)
    registry.refresh()
    answer = core.list_levels(registry, game="tictactoe")
    assert answer.served_version == version and not answer.calibration_applies
    assert answer.served_strength == ("judged at depth 3: vs_perfect_as_x 90/6/4 (score "
                                      "0.930 in [0.880, 0.970]) (30.0 s)")
