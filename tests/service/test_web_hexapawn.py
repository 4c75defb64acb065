"""The web board plays Hexapawn, a game that plugs in, in a real headless Chromium. The
board knows none of its rules: it starts from the listing's ``start``, takes each
position's legal moves from the server and learns the end, and the winner, from its 409.
Pawns move by a click on the pawn and then on the square, or by dragging; a capture lands
on the enemy pawn."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from gameai.games import get_game
from gameai.models.oracle import solver_model
from gameai.store import RedisServer
from tests.service.conftest import RunningServer, new_store, settings
from tests.service.test_web import browser, choose_game  # noqa: F401  (the shared Chromium fixture)
from tests.service.test_web_morris import board_of, cell

pytestmark = pytest.mark.slow
GAME = "hexapawn"


@pytest.fixture(scope="module")
def hexapawn_server(redis_server: RedisServer) -> Iterator[RunningServer]:
    store = new_store(redis_server.url)
    for name in ("tictactoe", GAME):
        record = store.publish(solver_model(get_game(name)).to_bytes(), by="tests")
        store.set_alias(game=name, alias="production", version=record.version, by="tests")
    running = RunningServer(settings(store, games=("tictactoe", GAME)), store)
    yield running
    running.stop()
    store.close()


@pytest.fixture
def page(browser, hexapawn_server: RunningServer):  # noqa: F811
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{hexapawn_server.http}/")
    yield page
    context.close()
    assert errors == []


def start(page, side: str = "X") -> None:
    from playwright.sync_api import expect

    choose_game(page, GAME)
    if side != "X":
        page.select_option("#side", side)
    expect(page.locator("#status")).to_have_text(f"Your move ({side})", timeout=10_000)


def test_the_board_starts_from_the_games_start(page) -> None:
    from playwright.sync_api import expect

    start(page)
    assert board_of(page) == "OOO|---|XXX"
    movable = page.locator("#board .cell:not([disabled])")
    expect(movable).to_have_count(3)  # X's three pawns, nothing else
    assert {int(c.get_attribute("data-index")) for c in movable.all()} == {6, 7, 8}
    cell(page, 7).click()  # the middle pawn: its one square lights up with its value
    expect(cell(page, 7)).to_have_class(re.compile("selected"))
    assert not cell(page, 4).is_disabled()
    assert cell(page, 4).get_attribute("data-value") not in ("", None)
    assert cell(page, 1).is_disabled() and cell(page, 3).is_disabled()  # not one of its moves


def test_play_o_by_clicks_and_drags_capture_and_win(page, tmp_path: Path) -> None:
    """The model opens as X; O answers with the solver's best moves, the first a capture by
    clicks, then by drags, and wins: the second player's win."""
    from playwright.sync_api import expect

    game = get_game(GAME)
    start(page, "O")
    status = page.locator("#status")
    assert board_of(page) == "OOO|-X-|X-X"  # the model went up the middle
    clicked = dragged = captures = 0
    for _ in range(4):
        state = game.parse(board_of(page), to_move="O")
        best = game.solve(state).moves[0]
        to = best.row * 3 + best.col
        captures += state.cell(to) == "X"
        if clicked == 0:
            cell(page, best.from_index).click()
            expect(cell(page, best.from_index)).to_have_class(re.compile("selected"))
            if state.cell(to) == "X":  # the pawn to take shows the capture's value
                expect(cell(page, to)).not_to_have_attribute("data-value", "")
            cell(page, to).click()
            clicked += 1
        else:
            cell(page, best.from_index).drag_to(cell(page, to))
            dragged += 1
        expect(status).to_have_text(re.compile(r"Your move \(O\)|wins|Draw"), timeout=10_000)
        if "wins" in status.inner_text():
            break
    page.screenshot(path=str(tmp_path / "hexapawn.png"))
    assert status.inner_text() == "O wins: you beat the model!"
    assert clicked == 1 and dragged >= 1 and captures >= 1
    assert page.locator("#board .cell:not([disabled])").count() == 0
    assert page.locator("#score-human").inner_text() == "1"


def test_a_pawn_cannot_step_onto_a_pawn_or_sideways(page) -> None:
    start(page, "O")
    assert board_of(page) == "OOO|-X-|X-X"
    assert cell(page, 1).is_disabled()  # O's middle pawn faces X's: it has no move
    cell(page, 0).click()  # the corner pawn: down, or take the centre; not sideways
    assert not cell(page, 3).is_disabled() and not cell(page, 4).is_disabled()
    assert cell(page, 5).is_disabled() and cell(page, 6).is_disabled()
    assert board_of(page) == "OOO|-X-|X-X"


def test_ai_against_ai_ends_when_the_server_says_so(page) -> None:
    from playwright.sync_api import expect

    start(page)
    page.click("#autoplay")
    expect(page.locator("#status")).to_have_text("O wins (AI vs AI)", timeout=60_000)
    final = board_of(page)
    assert get_game(GAME).parse(final).winner() == "O"
    assert page.locator("#auto-o").inner_text() == "1"
