"""Memory as a budget: the estimates hold against the enumeration, and work that would not
fit is refused before its memory is spent."""

from __future__ import annotations

import tracemalloc

import pytest

from gameai.games import get_game
from gameai.games.budget import (
    ENV,
    BadLimit,
    Estimate,
    Limit,
    OverBudget,
    memory_limit,
    parse_size,
    require,
)
from gameai.games.mnk.board import Board
from gameai.games.mnk.positions import enumerate_positions
from gameai.games.mnk.sizes import estimate_layers, solve_estimate
from gameai.games.mnk.solver import game_table, solve, solve_positions, table_for


@pytest.mark.parametrize("name", ["mnk-3x4-3", "connect-4x4-4", "mnk-3x5-3", "connect-5x4-4"])
def test_the_estimated_positions_are_within_a_few_percent(name):
    game = get_game(name)
    layers = enumerate_positions(Board.empty(game)).layers
    estimate = estimate_layers(game)
    actual = sum(len(layer) for layer in layers)
    assert abs(estimate.total - actual) / actual < 0.06, (estimate.total, actual)
    assert solve_estimate(game).positions == estimate.total


def test_the_estimated_peak_is_within_a_fifth_of_the_traced_one():
    game = get_game("mnk-3x5-3")
    solve_positions(enumerate_positions(Board.empty(get_game("tictactoe"))))  # tables first
    tracemalloc.start()
    try:
        solve_positions(enumerate_positions(Board.empty(game)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    estimate = solve_estimate(game).bytes
    assert abs(peak - estimate) / peak < 0.2, (peak, estimate)


def test_a_game_over_the_limit_is_refused_before_its_memory_is_spent(monkeypatch):
    monkeypatch.setenv(ENV, "64M")
    tracemalloc.start()
    try:
        with pytest.raises(OverBudget) as refused:  # its table; solve() would search it
            game_table(get_game("mnk-4x5-4"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    message = str(refused.value)
    assert "mnk-4x5-4" in message and "GB" in message and "64.0 MB" in message
    assert "--memory-limit" in message and ENV in message
    assert peak < 16 << 20  # the estimate's samples, never the layers


def test_a_subtree_over_the_limit_is_refused_layer_by_layer(monkeypatch):
    monkeypatch.setenv(ENV, "40M")
    board = Board.parse(get_game("mnk-4x5-4"), "X---O|-----|-----|-----")
    tracemalloc.start()
    try:
        with pytest.raises(OverBudget, match="solving this mnk-4x5-4 position"):
            table_for(board)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40 << 20


def test_within_the_limit_the_work_is_done(monkeypatch):
    monkeypatch.setenv(ENV, "1G")
    board = Board.parse(get_game("mnk-4x5-4"), "XO-XO|-X-O-|--X--|-----")
    assert len(table_for(board)) > 1
    assert solve(board).moves


@pytest.mark.parametrize(("text", "size"), [("4G", 4 << 30), ("512M", 512 << 20),
                                            ("1.5GB", 3 << 29), ("2GiB", 2 << 30),
                                            ("1048576", 1 << 20), (" 300 mb ", 300 << 20)])
def test_sizes_are_read(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "4X", "-1G", "12"])
def test_bad_sizes_are_named(text):
    with pytest.raises(BadLimit, match="memory limit"):
        parse_size(text)


def test_the_default_is_a_stated_share_of_the_machine(monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    limit = memory_limit()
    assert limit.bytes > 0 and "50% of this machine's" in limit.source
    monkeypatch.setenv(ENV, "3G")
    assert memory_limit() == Limit(3 << 30, f"{ENV}=3G")


def test_require_names_the_estimate_and_the_setting():
    with pytest.raises(OverBudget) as refused:
        require(Estimate("exporting a table", 3 << 30, 70.0, 1_000_000), Limit(1 << 30, "x"))
    assert str(refused.value).startswith("exporting a table would need 1,000,000 positions, "
                                         "about 3.0 GB and 1 min, over the memory limit of "
                                         "1.0 GB (x)")
    assert require(Estimate("small", 10), Limit(1 << 20, "x")).bytes == 10
