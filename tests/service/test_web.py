"""The web board end to end in a real headless Chromium: play a game to its end by
clicking, see the model's replies and the heat map, watch AI against AI."""

from __future__ import annotations

import contextlib
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.service.conftest import RunningServer

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip("chromium is not installed (Debian: chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@contextlib.contextmanager
def watched_page(browser, url: str) -> Iterator[Any]:
    """A fresh browser context's page at ``url``; closed after, and no script error may
    have been raised on it (checked when the block ends normally)."""
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(url)
        yield page
    finally:
        context.close()
    assert errors == []


@pytest.fixture
def page(browser, server: RunningServer):
    with watched_page(browser, f"{server.http}/") as page:
        yield page


def choose_game(page, name: str) -> None:
    """Pick ``name`` in the game selector and wait until the board has switched to it: the
    switch loads the game's models and levels first, and on a busy machine a click meant
    for the new game would otherwise land on the old one and be undone by the switch."""
    from playwright.sync_api import expect

    page.select_option("#game", name)
    expect(page.locator(f'#board[data-game="{name}"]')).to_have_count(1, timeout=30_000)
    expect(page.locator("#score-game")).to_have_text(name, timeout=30_000)


def pieces(page, player: str) -> int:
    return page.locator(f"#board .cell.{player}").count()


def test_play_a_game_to_the_end_by_clicking(page, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    status = page.locator("#status")
    expect(status).to_have_text("Your move (X)", timeout=10_000)
    heat = page.locator("#board .cell[data-value]:not([data-value=''])")
    expect(heat).to_have_count(9)  # every legal move of the empty board has a value
    moves = 0
    while not re.search(r"wins|Draw", status.inner_text()):
        assert moves < 5
        o_before = pieces(page, "O")
        page.locator("#board .cell:not([disabled])").first.click()
        moves += 1
        expect(status).to_have_text(re.compile(r"Your move \(X\)|wins|Draw"), timeout=10_000)
        if not re.search(r"wins|Draw", status.inner_text()):
            assert pieces(page, "O") == o_before + 1  # the model replied
            expect(page.locator("#answered-by")).to_contain_text("model version 1")
    page.screenshot(path=str(tmp_path / "board.png"))
    assert pieces(page, "O") >= 2
    final = status.inner_text()
    assert "you beat the model" not in final  # the perfect model never loses
    assert page.locator("#score-ai").inner_text() != "0" or \
        page.locator("#score-draw").inner_text() != "0"
    assert page.locator("#board .cell:not([disabled])").count() == 0


def test_ai_plays_first_when_you_choose_o(page) -> None:
    from playwright.sync_api import expect

    expect(page.locator("#status")).to_have_text("Your move (X)", timeout=10_000)
    page.select_option("#side", "O")
    expect(page.locator("#status")).to_have_text("Your move (O)", timeout=10_000)
    assert pieces(page, "X") == 1 and pieces(page, "O") == 0
    options = page.locator("#model option").all_inner_texts()
    assert any("version 1" in o for o in options)


def test_ai_against_ai_ends_in_a_draw(page) -> None:
    from playwright.sync_api import expect

    expect(page.locator("#status")).to_have_text("Your move (X)", timeout=10_000)
    page.click("#autoplay")
    expect(page.locator("#status")).to_have_text("Draw (AI vs AI)", timeout=20_000)
    assert pieces(page, "X") == 5 and pieces(page, "O") == 4
    assert page.locator("#auto-draw").inner_text() == "1"


def test_api_docs_render_without_internet(browser, server: RunningServer) -> None:
    """/docs is Swagger UI served by the app itself: with every request off this server
    refused (no internet), the page still lists the API's operations."""
    from playwright.sync_api import expect

    context = browser.new_context()
    page = context.new_page()
    elsewhere: list[str] = []

    def only_this_server(route) -> None:
        if route.request.url.startswith(server.http):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_server)
    try:
        page.goto(f"{server.http}/docs")
        expect(page.locator(".swagger-ui .opblock").first).to_be_visible(timeout=15_000)
        expect(page.get_by_text("/v1/games/{game}/best-move").first).to_be_visible()
    finally:
        context.close()
    assert elsewhere == []


def test_unknown_moves_are_shown_as_unknown_and_a_pin_is_named(browser, redis_server,
                                                               start_server) -> None:
    """A move the model has no value for is a grey '?', never a yellow draw; an operator's
    pin on production is said above the board."""
    from playwright.sync_api import expect

    from tests.service.conftest import new_store
    from tests.service.test_unknown import half_known

    store = new_store(redis_server.url)
    version = store.publish(half_known().to_bytes(), by="tests").version
    store.set_alias(game="tictactoe", alias="production", version=version, by="ops", pin=True)
    running = start_server(store)
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"{running.http}/")
        expect(page.locator("#status")).to_have_text("Your move (X)", timeout=10_000)
        unknown = page.locator("#board .cell.unknown")
        expect(unknown).to_have_count(1)  # the top edge of the empty board
        assert unknown.get_attribute("data-index") == "1"
        assert unknown.inner_text() == "?" and "unknown" in unknown.get_attribute("title")
        assert unknown.evaluate("c => c.style.background") == ""  # no heat colour
        expect(page.locator("#board .cell[data-value='0.5']")).to_have_count(1)
        expect(page.locator("#pin")).to_contain_text(
            f"Production (version {version}) is pinned by ops")
        page.locator("#board .cell[data-index='0']").click()  # X in a corner: unseen now
        expect(page.locator("#status")).to_have_text("Your move (X)", timeout=10_000)
        expect(page.locator("#answered-by")).to_contain_text("value unknown")
        expect(page.locator("#board .cell.unknown")).to_have_count(7)
    finally:
        context.close()
        store.close()


def test_the_board_offers_only_games_with_a_model(browser, redis_server, perfect,
                                                  start_server) -> None:
    """A served game whose trainer has not passed the gates yet is listed but cannot be
    chosen; it becomes playable once its production version is loaded."""
    import numpy as np
    from playwright.sync_api import expect

    from gameai.games import get_game
    from gameai.models import ModelInfo, TableModel
    from tests.service.conftest import new_store

    store = new_store(redis_server.url)
    version = store.publish(perfect.to_bytes(), by="test").version
    store.set_alias(game="tictactoe", alias="production", version=version, by="test")
    server = start_server(store, games=("tictactoe", "four-in-a-row"))
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(f"{server.http}/")
        expect(page.locator("#status")).to_have_text("Your move (X)", timeout=10_000)
        waiting = page.locator("#game option[value='four-in-a-row']")
        expect(waiting).to_be_disabled()
        expect(waiting).to_contain_text("training")
        assert page.locator("#game").input_value() == "tictactoe"

        game = get_game("four-in-a-row")
        empty = TableModel(game, ModelInfo(game=game.name, algorithm="empty"),
                           np.zeros(0, np.uint64), np.zeros((0, game.cells), np.float32))
        version = store.publish(empty.to_bytes(), by="test").version
        store.set_alias(game=game.name, alias="production", version=version, by="test")
        expect(waiting).to_be_enabled(timeout=15_000)
        expect(waiting).to_have_text("four-in-a-row")
        page.click("#autoplay")  # a tic-tac-toe game between the models: a draw
        expect(page.locator("#status")).to_have_text("Draw (AI vs AI)", timeout=20_000)
        expect(page.locator("#auto-draw")).to_have_text("1")
        choose_game(page, "four-in-a-row")
        expect(page.locator("#board .cell")).to_have_count(16)
        # each game keeps its own tally: none of tic-tac-toe's draw counts here
        expect(page.locator("#score-game")).to_have_text("four-in-a-row")
        expect(page.locator("#auto-draw")).to_have_text("0")
        choose_game(page, "tictactoe")
        expect(page.locator("#auto-draw")).to_have_text("1")
    finally:
        context.close()
        store.close()
