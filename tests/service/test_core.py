"""The core functions over a real registry and a real store: answers, routing, errors."""

from __future__ import annotations

import numpy as np
import pytest

from gameai.games import GameOver, InvalidBoard, UnknownGame, get_game
from gameai.games.mnk.board import Board
from gameai.games.mnk.positions import live_boards
from gameai.models import TableModel
from gameai.service import core
from gameai.service.errors import InvalidRequest, RequestTooLarge, UnknownModel, classify
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.store import ModelStore
from tests.service.conftest import variant, weak_model


@pytest.fixture
def registry(store: ModelStore, perfect: TableModel) -> Registry:
    """Version 1 perfect (production), version 2 weak (canary at 30 %), refreshed once."""
    one = store.publish(perfect.to_bytes(), by="tests").version
    two = store.publish(weak_model().to_bytes(), by="tests").version
    store.set_alias(game="tictactoe", alias="production", version=one, by="tests")
    store.set_canary(game="tictactoe", version=two, weight=30, by="tests")
    registry = Registry(store, ("tictactoe",), Metrics())
    registry.store_up = True
    registry.refresh()
    return registry


def test_best_move_is_the_perfect_models_move(registry: Registry, perfect: TableModel) -> None:
    board = "XX-|OO-|---"  # X to move wins at (0, 2)
    answer = core.best_move(registry, game="tictactoe", board=board, model="1")
    assert (answer.version, answer.move.row, answer.move.col, answer.move.index) == (1, 0, 2, 2)
    assert answer.value == pytest.approx(perfect.evaluate(
        Board.parse(get_game("tictactoe"), board)).value, abs=1e-6)
    assert answer.value > 0.5


def test_evaluate_lists_every_legal_move_best_first(registry: Registry) -> None:
    answer = core.evaluate(registry, game="tictactoe", board="X--|-O-|---", model="1")
    e = answer.evaluation
    assert e.to_move == "X"
    assert sorted(m.index for m in e.moves) == [1, 2, 3, 5, 6, 7, 8]
    values = [m.value for m in e.moves]
    assert values == sorted(values, reverse=True)
    assert e.value == values[0] == 0.0  # a draw with perfect play


def test_batch_matches_single_evaluations_on_every_live_position(registry: Registry) -> None:
    boards = live_boards(get_game("tictactoe"), limit=2000)
    batch = core.evaluate_batch(registry, game="tictactoe", boards=boards, model="1",
                                include_move_values=True)
    assert batch.version == 1 and len(batch.to_move) == len(boards) > 600
    assert batch.move_values is not None
    for i in range(len(boards)):
        single = core.evaluate(registry, game="tictactoe", board=boards[i], model="1")
        e = single.evaluation
        assert batch.to_move[i] == e.to_move
        assert batch.values[i] == pytest.approx(e.value, abs=1e-6)
        assert int(batch.best[i]) == e.best.index
        legal = {m.index: m.value for m in e.moves}
        row = batch.move_values[i]
        assert {j for j in range(9) if not np.isnan(row[j])} == set(legal)


def test_batch_names_the_first_bad_board(registry: Registry) -> None:
    cases = [
        (["---|---|---", "XX|---|---"], InvalidBoard, "boards[1]"),
        (["---|---|---", "XXX|OO-|---", "bad"], GameOver, "boards[1]"),
        (["XXX|XXX|XXX"], InvalidBoard, "boards[0]"),
        (["XOX|XOO|OXX"], GameOver, "boards[0]"),  # full board: a draw
        (["---|-?-|---"], InvalidBoard, "boards[0]"),
        (["---|---|---", 7], InvalidRequest, "boards[1]"),
    ]
    for boards, kind, field in cases:
        with pytest.raises(kind) as caught:
            core.evaluate_batch(registry, game="tictactoe", boards=boards)
        status = classify(caught.value)
        assert status is not None and status.field == field, boards
        assert status.message.startswith(f"{field}: ")


def test_batch_over_the_limit_is_refused(registry: Registry) -> None:
    with pytest.raises(RequestTooLarge, match="11 boards"):
        core.evaluate_batch(registry, game="tictactoe", boards=["---|---|---"] * 11,
                            max_batch=10)


def test_canary_share_follows_the_weight_and_sticks_to_the_client(registry: Registry) -> None:
    versions = [core.best_move(registry, game="tictactoe", board="---|---|---",
                               client_id=f"client-{i}").version for i in range(1000)]
    share = versions.count(2) / len(versions)
    assert 0.25 < share < 0.35
    for i in range(50):
        again = core.best_move(registry, game="tictactoe", board="---|---|---",
                               client_id=f"client-{i}").version
        assert again == versions[i]
    explicit = core.best_move(registry, game="tictactoe", board="---|---|---", model="canary")
    assert explicit.version == 2


@pytest.mark.parametrize(("request_fields", "kind", "field"), [
    ({"game": "chess"}, UnknownGame, "game"),
    ({"game": "four-in-a-row"}, UnknownModel, "game"),
    ({"game": ""}, InvalidRequest, "game"),
    ({"model": "9"}, UnknownModel, "model"),
    ({"model": "staging"}, UnknownModel, "model"),
    ({"model": "x" * 300}, InvalidRequest, "model"),
    ({"board": "X--|-O-"}, InvalidBoard, "board"),
    ({"board": "XXX|OO-|---"}, GameOver, "board"),
    ({"board": None}, InvalidRequest, "board"),
])
def test_errors_name_the_field(registry: Registry, request_fields: dict[str, object],
                               kind: type[Exception], field: str) -> None:
    fields: dict[str, object] = {"game": "tictactoe", "board": "---|---|---", "model": "1"}
    fields.update(request_fields)
    with pytest.raises(kind) as caught:
        core.best_move(registry, **fields)  # type: ignore[arg-type]
    status = classify(caught.value)
    assert status is not None and status.field == field
    assert status.message.startswith(f"{field}: ")


def test_game_names_are_normalised(registry: Registry) -> None:
    answer = core.best_move(registry, game="MNK-3x3-3", board="---|---|---", model="1")
    assert answer.game == "tictactoe"


def test_models_are_listed_with_their_aliases(registry: Registry, store: ModelStore,
                                              perfect: TableModel) -> None:
    store.publish(variant(perfect, games_played=5), by="tests")
    listing = core.list_models(registry, game="tictactoe")
    assert [v.version for v in listing.versions] == [1, 2, 3]
    assert listing.aliases == {"production": 1, "canary": 2}
    assert [v.aliases for v in listing.versions] == [["production"], ["canary"], []]
    assert [v.loaded for v in listing.versions] == [True, True, False]
    summary = core.get_model(registry, game="tictactoe", version="canary")
    assert summary.version == 2 and summary.to_json()["algorithm"] == "empty"
    with pytest.raises(UnknownModel):
        core.get_model(registry, game="tictactoe", version="7")


@pytest.mark.parametrize("alias", [0, None, ["production"], ""])
def test_set_alias_names_a_mistyped_alias(registry: Registry, alias: object) -> None:
    with pytest.raises(InvalidRequest) as caught:
        core.set_alias(registry, game="tictactoe", alias=alias, version=1, by="tests")
    assert caught.value.field == "alias"
