"""The web board's review and version panel in a real headless Chromium: a game lost to the
perfect model, reviewed as a graph over the game with the losing moves marked; the shadow
test's figures beside the versions."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from gameai.models import TableModel
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import RunningServer, new_store, settings, weak_model
from tests.service.test_rollout import wait_until
from tests.service.test_web import browser, watched_page  # noqa: F401  (the shared Chromium fixture)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def review_web(redis_server: RedisServer, perfect: TableModel) -> Iterator[RunningServer]:
    """The perfect model in production; a model that knows nothing shadowed at 100%."""
    store: ModelStore = new_store(redis_server.url)
    store.publish(perfect.to_bytes(), by="tests")
    store.publish(weak_model().to_bytes(), by="tests")
    store.set_alias(game="tictactoe", alias="production", version=1, by="tests")
    store.set_shadow(game="tictactoe", version=2, share=100, by="tests")
    store.record_shadow(game="tictactoe", version=2, production=1,
                        counts={"compared": 10, "agreed": 4, "proved": 10,
                                "production_optimal": 10, "shadow_optimal": 4})
    running = RunningServer(settings(store), store)
    wait_until(lambda: httpx.get(f"{running.http}/readyz").status_code == 200)
    yield running
    running.stop()
    store.close()


def test_a_lost_game_is_reviewed_as_a_graph_with_the_losing_moves_marked(
        browser, review_web) -> None:  # noqa: F811
    from playwright.sync_api import expect

    with watched_page(browser, f"{review_web.http}/") as page:
        status = page.locator("#status")
        expect(status).to_have_text("Your move (X)", timeout=10_000)
        expect(page.locator("#shadow")).to_contain_text(
            "Shadow test at 100% of production's best-move queries (never answered with): "
            "version 2 against production 1: 10 queries compared, agrees 40.0%")
        # X plays the first free cell every time: the perfect model wins
        while not re.search(r"wins|Draw", status.inner_text()):
            page.locator("#board .cell:not([disabled])").first.click()
            expect(status).to_have_text(re.compile(r"Your move \(X\)|wins|Draw"),
                                        timeout=10_000)
        assert "the model won" in status.inner_text()
        plies = page.locator("#board .cell.X").count() + page.locator("#board .cell.O").count()
        page.click("#review")
        expect(page.locator("#review-panel")).to_be_visible(timeout=10_000)
        marks = page.locator("#review-graph circle.mark")
        expect(marks).to_have_count(plies)
        assert page.locator("#review-graph polyline.line").count() == 1
        bad = page.locator("#review-graph circle.mark.bad")
        assert bad.count() >= 1  # X walked into the loss somewhere
        judgments = {bad.nth(i).get_attribute("data-judgment") for i in range(bad.count())}
        assert judgments <= {"blunder", "throws_away_win", "walks_into_loss"}
        expect(page.locator("#review-plies li")).to_have_count(plies)
        expect(page.locator("#review-plies li.bad").first).to_contain_text("X ")
        expect(page.locator("#review-summary")).to_contain_text(re.compile(
            r"^X: \d+ blunders?, \d+ mistakes?, \d+ inaccurac(y|ies)[,;]"))
        page.click("#new-game")
        expect(page.locator("#review-panel")).to_be_hidden()
