"""Hints (analyze) and the levels listing, through the core and both transports: exact
outcomes and distances from the solver whatever the model knows, the model's line, the
position the solver cannot afford, the calibration shown with the levels."""

from __future__ import annotations

import json
from collections.abc import Iterator

import grpc
import httpx
import pytest

from gameai.games import GameOver, get_game
from gameai.games.mnk import search
from gameai.games.mnk.positions import live_boards
from gameai.models import TableModel
from gameai.models.oracle import solver_model
from gameai.service import core
from gameai.service.calibration import load_calibration
from gameai.service.errors import UnknownModel
from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.store import RedisServer
from tests.service.conftest import (
    RunningServer,
    empty_model,
    new_store,
    random_ntuple,
    weak_model,
)

TTT = get_game("tictactoe")
MORRIS = "three-mens-morris"
BIG = "mnk-4x5-4"
C4 = "connect-four"  # 20 cells: no whole-game table within a small memory limit


@pytest.fixture
def registry(redis_server: RedisServer, perfect: TableModel) -> Iterator[Registry]:
    """tictactoe: perfect (production) and weak (alias ``weak``); morris: its solver's
    model; mnk-4x5-4: a model that knows nothing; connect-four: random n-tuples."""
    store = new_store(redis_server.url)
    for model, alias in ((perfect, "production"), (weak_model(), "weak"),
                         (solver_model(get_game(MORRIS)), "production"),
                         (empty_model(BIG), "production"), (random_ntuple(C4), "production")):
        version = store.publish(model.to_bytes(), by="tests").version
        store.set_alias(game=model.game.name, alias=alias, version=version, by="tests")
    registry = Registry(store, ("tictactoe", MORRIS, BIG, C4), Metrics())
    registry.store_up = True
    registry.refresh()
    yield registry
    store.close()


def test_every_move_has_the_solvers_outcome_and_distance(registry) -> None:
    """On every 5th live tictactoe position, with the perfect model and with one that
    knows nothing, the hints' outcomes and distances are the solver's."""
    for board in live_boards(TTT)[::5]:
        solution = TTT.solve(TTT.parse(board))
        exact = {m.move: (m.outcome, m.distance) for m in solution.moves}
        for model in ("", "weak"):
            a = core.analyze(registry, game="tictactoe", board=board, model=model)
            h = a.analysis
            assert (h.outcome, h.distance, h.unsolved) == (solution.outcome,
                                                           solution.distance, "")
            assert {m.move.index: (m.outcome, m.distance) for m in h.moves} == exact
            assert [m.move for m in h.moves] == list(h.evaluation.moves)


def test_a_win_in_one_and_the_models_line(registry) -> None:
    h = core.analyze(registry, game="tictactoe", board="XX-|OO-|---").analysis
    first = h.moves[0]
    assert (first.move.index, first.outcome, first.distance) == (2, "win", 1)
    assert {m.move.index: m.outcome for m in h.moves[1:]} == {5: "draw", 6: "loss",
                                                             7: "loss", 8: "loss"}
    assert [(s.to_move, s.move.index) for s in h.line] == [("X", 2)] and h.line_end == "X wins"
    # the empty board: the perfect model's line is a whole drawn game
    h = core.analyze(registry, game="tictactoe", board="---|---|---").analysis
    assert (h.outcome, h.distance, h.line_end, len(h.line)) == ("draw", 9, "draw", 9)
    assert [s.to_move for s in h.line] == ["X", "O"] * 4 + ["X"]


def test_the_weak_models_hint_shows_what_it_gets_wrong(registry) -> None:
    """The model that knows nothing plays the lowest cell: where O is lost whatever it
    does, the hint says the model's move loses in 2 plies and the block at 8 holds out
    to the fourth (X forks, O blocks one threat, X wins)."""
    h = core.analyze(registry, game="tictactoe", board="XO-|-X-|---", model="weak").analysis
    assert all(m.move.unknown for m in h.moves)
    top = h.moves[0]
    assert (top.move.index, top.outcome, top.distance) == (2, "loss", 2)  # X wins at 8
    assert {m.move.index: m.distance for m in h.moves if m.distance != 2} == {8: 4}
    assert all(m.outcome == "loss" for m in h.moves)


def test_morris_hints_from_a_move_list(registry) -> None:
    a = core.analyze(registry, game=MORRIS, moves="5 1 9 3 7")
    h = a.analysis
    assert a.board == "O-O|-X-|X-X" and h.evaluation.to_move == "O"
    solution = get_game(MORRIS).solve(get_game(MORRIS).parse(a.board, to_move="O"))
    assert {m.move.action_id: m.outcome for m in h.moves} == \
        {m.move: m.outcome for m in solution.moves}
    assert h.line_end in ("X wins", "O wins", "draw by repetition")


def test_a_position_the_solver_cannot_afford_is_answered_without_exact_figures(
        registry, monkeypatch) -> None:
    monkeypatch.setenv("GAMEAI_MEMORY_LIMIT", "1M")
    search.forget_shared()  # a searcher made before holds its table already
    h = core.analyze(registry, game=BIG, board="-----|-----|-----|-----").analysis
    assert h.outcome is h.distance is None and "too large for the solver" in h.unsolved
    assert "memory" in h.unsolved.lower()
    assert len(h.moves) == 20 and all(m.outcome is None for m in h.moves)
    assert h.line_end in ("X wins", "O wins", "draw", "continues")


def test_connect_four_hints_come_from_the_search_within_its_time(registry) -> None:
    """Connect Four's exact figures come from the alpha-beta search: a position late in a
    game is solved; the opening is not within the server's 2 s, and says so."""
    game = get_game(C4)
    late = "26347743154354675146"  # 20 plies, columns from 1: X to move wins at once
    solution = game.solve(game.parse_moves(late))  # (compiles the search first)
    a = core.analyze(registry, game=C4, moves=late)
    assert (a.analysis.outcome, a.analysis.distance) == (solution.outcome, solution.distance)
    assert {m.move.index: m.outcome for m in a.analysis.moves} == \
        {m.move: m.outcome for m in solution.moves}
    evaluated = core.evaluate(registry, game=C4, moves=late)  # the same searched values
    assert a.depth == evaluated.depth is not None
    assert a.analysis.evaluation == evaluated.evaluation
    shallow = core.analyze(registry, game=C4, moves=late, depth=0)
    assert shallow.depth == 0 and shallow.analysis.moves[0].outcome is not None
    opening = core.analyze(registry, game=C4, board=str(game.initial())).analysis
    assert opening.outcome is None
    assert "could not prove this position within 2 s" in opening.unsolved
    assert len(opening.moves) == 7 and opening.line


def test_errors(registry) -> None:
    with pytest.raises(GameOver):
        core.analyze(registry, game="tictactoe", board="XXX|OO-|---")
    with pytest.raises(UnknownModel):
        core.list_levels(registry, game="four-in-a-row")


def test_the_levels_come_with_their_calibration(registry) -> None:
    a = core.list_levels(registry, game="mnk-3x3-3")
    assert a.game == "tictactoe"
    assert [level.name for level in a.levels] == ["beginner", "casual", "strong", "best"]
    assert a.calibration == load_calibration()["tictactoe"]
    assert a.calibration["unordered"] == []


# -- both transports ---------------------------------------------------------------------

def test_rest_and_grpc_give_the_same_hints_and_levels(server: RunningServer) -> None:
    stub = move_pb2_grpc.MoveServiceStub(grpc.insecure_channel(server.grpc))
    with httpx.Client(base_url=server.http, timeout=30) as http:
        rest = http.post("/v1/games/tictactoe/analyze", json={"board": "XO-|-X-|---"}).json()
        rpc = stub.Analyze(move_pb2.AnalyzeRequest(game="tictactoe", board="XO-|-X-|---"))
        assert (rest["outcome"], rest["distance"]) == (rpc.outcome, rpc.distance) == ("loss", 4)
        assert [(m["index"], m["outcome"], m["distance"]) for m in rest["moves"]] == \
            [(m.index, m.outcome, m.distance) for m in rpc.moves]
        assert rest["moves"][0] == {"row": 2, "col": 2, "index": 8, "value": pytest.approx(
            rpc.moves[0].value), "outcome": "loss", "distance": 4}
        assert [m["index"] for m in rest["line"]] == [m.index for m in rpc.line]
        assert rest["line_end"] == rpc.line_end == "X wins" and "unsolved" not in rest

        levels = http.get("/v1/games/tictactoe/levels").json()
        listed = stub.ListLevels(move_pb2.ListLevelsRequest(game="tictactoe"))
        assert levels["default"] == listed.default_level == "best"
        assert [lv["name"] for lv in levels["levels"]] == [lv.name for lv in listed.levels]
        casual = levels["levels"][1]
        assert (casual["blunder"], casual["temperature"], casual["takes_wins"]) == (0.2, 0.2,
                                                                                   False)
        assert casual["summary"] == listed.levels[1].summary
        assert "of games against a random player as X" in casual["summary"]
        assert casual["calibration"] == json.loads(listed.levels[1].calibration_json)
        assert levels["calibration"] == json.loads(listed.calibration_json)
        assert "levels" not in levels["calibration"]
        assert http.post("/v1/games/tictactoe/analyze",
                         json={"board": "XXX|OO-|---"}).status_code == 409
        assert http.get("/v1/games/chess/levels").status_code == 404


def test_a_summary_says_when_the_perfect_opponent_was_a_search() -> None:
    from gameai.service.calibration import summary

    level = load_calibration()["tictactoe"]["levels"]["casual"]
    assert "against perfect play it loses" in summary(level)
    searched = {"perfect_opponent": {"solver": "search", "proved_share": 0.564}}
    assert "against the solver's search (perfect in 56% of its moves) it loses" in \
        summary(level, searched)
