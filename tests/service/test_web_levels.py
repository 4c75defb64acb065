"""The web board's level picker and hint button in a real headless Chromium: each level's
measured strength is shown, the model plays at the chosen level with one seed per game,
and the hint shows every move's exact outcome on the board and in words."""

from __future__ import annotations

import json
import re

import pytest

from gameai.service.calibration import load_calibration, summary
from tests.service.test_web import browser, page, pieces  # noqa: F401  (shared fixtures)

pytestmark = pytest.mark.slow


def test_the_level_picker_shows_each_levels_measured_strength(page) -> None:  # noqa: F811
    from playwright.sync_api import expect

    expect(page.locator("#status")).to_have_text("Your move (X)", timeout=10_000)
    options = page.locator("#level option")
    assert options.all_inner_texts() == ["beginner", "casual", "strong", "best"]
    assert page.locator("#level").input_value() == "best"
    measured = load_calibration()["tictactoe"]["levels"]
    expect(page.locator("#level-info")).to_contain_text("the model's best move every time")
    expect(page.locator("#level-info")).to_contain_text(summary(measured["best"]))
    page.select_option("#level", "casual")
    expect(page.locator("#level-info")).to_contain_text(
        f"Measured: it {summary(measured['casual'])}")
    assert "against a random player as X" in page.locator("#level-info").inner_text()
    assert options.nth(0).get_attribute("title") == summary(measured["beginner"])
    page.reload()  # the choice is remembered
    expect(page.locator("#status")).to_have_text("Your move (X)", timeout=10_000)
    assert page.locator("#level").input_value() == "casual"


def test_the_model_plays_at_the_chosen_level_with_one_seed_per_game(page) -> None:  # noqa: F811
    from playwright.sync_api import expect

    asked: list[dict[str, object]] = []
    page.on("request", lambda r: asked.append(json.loads(r.post_data))
            if r.url.endswith("/best-move") else None)
    status = page.locator("#status")
    expect(status).to_have_text("Your move (X)", timeout=10_000)
    page.select_option("#level", "beginner")
    page.select_option("#side", "O")
    expect(status).to_have_text("Your move (O)", timeout=10_000)
    expect(page.locator("#answered-by")).to_contain_text("at level beginner")
    while not re.search(r"wins|Draw", status.inner_text()):
        page.locator("#board .cell:not([disabled])").first.click()
        expect(status).to_have_text(re.compile(r"Your move \(O\)|wins|Draw"), timeout=10_000)
    game = [body for body in asked if body["level"] == "beginner"]
    assert len(game) >= 3 and all(body["level"] == "beginner" for body in asked[-len(game):])
    seeds = {body["seed"] for body in game}
    assert len(seeds) == 1 and isinstance(next(iter(seeds)), int)
    page.click("#new-game")
    expect(status).to_have_text("Your move (O)", timeout=10_000)
    assert asked[-1]["level"] == "beginner" and asked[-1]["seed"] not in seeds


def test_the_hint_shows_every_moves_outcome(page) -> None:  # noqa: F811
    """O against the best model, which opens in the corner: only the centre holds the
    draw; the hint says so on the board and in words, and goes once a move is played."""
    from playwright.sync_api import expect

    status = page.locator("#status")
    expect(status).to_have_text("Your move (X)", timeout=10_000)
    page.select_option("#side", "O")
    expect(status).to_have_text("Your move (O)", timeout=10_000)
    assert page.locator("#board .cell.X").get_attribute("data-index") == "0"
    assert page.locator("#hints").is_hidden()
    page.click("#hint")
    expect(page.locator("#hints")).to_be_visible()
    items = page.locator("#hint-moves li")
    expect(items).to_have_count(8)
    expect(page.locator("#hint-moves li.best")).to_have_count(1)
    assert page.locator("#hint-moves li.best").inner_text().startswith("row 2, column 2: draws")
    assert sum("loses in" in t for t in items.all_inner_texts()) == 7
    expect(page.locator("#hint-summary")).to_contain_text("you (O) draw")
    expect(page.locator("#hint-line")).to_contain_text(
        "The model expects: O row 2, column 2, X ")
    centre = page.locator("#board .cell[data-index='4']")
    assert centre.get_attribute("data-hint") == "draw" and "hint-best" in centre.get_attribute(
        "class")
    edge = page.locator("#board .cell[data-index='1']")
    assert edge.get_attribute("data-hint") == "loss" and edge.inner_text().startswith("L6")
    centre.click()
    expect(page.locator("#hints")).to_be_hidden()
    expect(status).to_have_text("Your move (O)", timeout=10_000)
    assert pieces(page, "O") == 1
    expect(page.locator("#board .cell[data-hint]")).to_have_count(0)
