"""The web board plays Three Men's Morris in a real headless Chromium: place by clicking,
move a piece by clicking it and then a point, or by dragging it; every move's value is
shown; AI against AI ends by a line or by the draw rule."""

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

pytestmark = pytest.mark.slow
GAMES = ("three-mens-morris", "nine-holes", "tictactoe")


@pytest.fixture(scope="module")
def morris_server(redis_server: RedisServer) -> Iterator[RunningServer]:
    store = new_store(redis_server.url)
    for name in GAMES:
        record = store.publish(solver_model(get_game(name)).to_bytes(), by="tests")
        store.set_alias(game=name, alias="production", version=record.version, by="tests")
    running = RunningServer(settings(store, games=GAMES), store)
    yield running
    running.stop()
    store.close()


@pytest.fixture
def page(browser, morris_server: RunningServer):  # noqa: F811
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{morris_server.http}/")
    yield page
    context.close()
    assert errors == []


def board_of(page) -> str:
    cells = [page.locator(f'#board .cell[data-index="{i}"]').evaluate(
        "c => c.classList.contains('X') ? 'X' : c.classList.contains('O') ? 'O' : '-'")
        for i in range(9)]
    return "|".join("".join(cells[r * 3:r * 3 + 3]) for r in range(3))


def cell(page, index: int):
    return page.locator(f'#board .cell[data-index="{index}"]')


def test_play_morris_by_clicks_and_drags_and_win(page, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    game = get_game("three-mens-morris")
    choose_game(page, "three-mens-morris")
    status = page.locator("#status")
    expect(status).to_have_text("Your move (X)", timeout=10_000)
    heat = page.locator("#board .cell[data-value]:not([data-value=''])")
    expect(heat).to_have_count(9)  # every placement of the empty board has a value
    values = [float(cell(page, i).get_attribute("data-value")) for i in range(9)]
    assert max(range(9), key=values.__getitem__) == 4  # the model wins through the centre
    dragged = clicked = 0
    for ply in range(0, 12, 2):
        state = game.parse(board_of(page), to_move="X")
        best = game.solve(state).moves[0]
        to = best.row * 3 + best.col
        if best.from_index is None:
            cell(page, to).click()
        elif clicked == 0:
            cell(page, best.from_index).click()  # select the piece ...
            expect(cell(page, best.from_index)).to_have_class(re.compile("selected"))
            for m in state.moves():
                if m.from_index == best.from_index:  # ... and its moves show their values
                    expect(cell(page, m.index)).not_to_have_attribute("data-value", "")
            cell(page, to).click()  # ... then the point
            clicked += 1
        else:
            cell(page, best.from_index).drag_to(cell(page, to))
            dragged += 1
        expect(status).to_have_text(re.compile(r"Your move \(X\)|wins|Draw"), timeout=10_000)
        if re.search(r"wins|Draw", status.inner_text()):
            break
        assert ply < 10
    page.screenshot(path=str(tmp_path / "morris.png"))
    assert status.inner_text() == "X wins: you beat the model!"
    assert clicked == 1 and dragged == 1  # X's win takes two movements: one of each kind
    assert page.locator("#board .cell:not([disabled])").count() == 0


def test_a_movement_to_a_point_that_is_not_next_is_refused_by_the_board(page) -> None:
    from playwright.sync_api import expect

    choose_game(page, "three-mens-morris")
    status = page.locator("#status")
    for index in (0, 2, 6):  # X in three corners: the model blocks as it likes
        expect(status).to_have_text("Your move (X)", timeout=10_000)
        empty = [i for i, c in enumerate(board_of(page).replace("|", "")) if c == "-"]
        cell(page, index if index in empty else empty[0]).click()
    expect(status).to_have_text(re.compile(r"Your move \(X\)|wins"), timeout=10_000)
    if "wins" in status.inner_text():
        pytest.skip("the model won during the placements")
    board = board_of(page).replace("|", "")
    neighbours = get_game("three-mens-morris").rules()["neighbours"]
    movable = [f for f, c in enumerate(board)
               if c == "X" and any(board[n] == "-" for n in neighbours[f])]
    far = next(((f, t) for f in movable for t in range(9)
                if board[t] == "-" and t not in neighbours[f]), None)
    if far is None:
        pytest.skip(f"every empty point of {board} is next to each movable X")
    cell(page, far[0]).click()
    assert cell(page, far[1]).is_disabled()  # not a legal destination: no click lands
    assert board_of(page).replace("|", "") == board


@pytest.mark.parametrize(("name", "ending"), [
    ("three-mens-morris", "X wins (AI vs AI)"),
    ("nine-holes", "Draw by repetition (AI vs AI)"),
])
def test_ai_against_ai_ends_by_the_rules(page, name: str, ending: str) -> None:
    from playwright.sync_api import expect

    choose_game(page, name)
    expect(page.locator("#status")).to_have_text("Your move (X)", timeout=10_000)
    page.click("#autoplay")
    expect(page.locator("#status")).to_have_text(ending, timeout=60_000)
    assert page.locator("#board .cell.X").count() == 3
    assert page.locator("#board .cell.O").count() == 3


def test_the_hint_marks_the_winning_placements(page) -> None:
    """Three Men's Morris is won by X: at the start the hint says so and outlines exactly
    the placements the solver finds optimal."""
    from playwright.sync_api import expect

    game = get_game("three-mens-morris")
    choose_game(page, "three-mens-morris")
    expect(page.locator("#status")).to_have_text("Your move (X)", timeout=10_000)
    page.click("#hint")
    expect(page.locator("#hint-moves li")).to_have_count(len(game.initial().legal_actions()))
    expect(page.locator("#hint-summary")).to_contain_text("you (X) win in")
    optimal = set(game.solve(game.initial()).optimal_moves)
    best = {int(c.get_attribute("data-index"))
            for c in page.locator("#board .cell.hint-best").all()}
    assert best == optimal and best
    assert page.locator("#hint-line").inner_text().startswith(
        "The model expects: X point ")
