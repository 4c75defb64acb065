"""The shadow alias and its share, like the canary's weight, and the tallies servers add
up in the store: what shadowing a version found against each production version."""

import pytest

from gameai.store import AliasRefused, ShadowReport
from gameai.store.errors import InvalidArgument


def test_shadow_version_and_share_are_set_together(store, publish):
    publish(3)
    store.set_alias(game="tictactoe", alias="production", version=2, by="ops")
    store.set_shadow(game="tictactoe", version=3, share=100, by="ops")
    rollout = store.rollout(game="tictactoe")
    assert (rollout.production, rollout.shadow, rollout.shadow_share) == (2, 3, 100)
    assert rollout.canary_weight == 0 and rollout.canary is None  # the canary is untouched
    store.set_shadow(game="tictactoe", version=None, share=25, by="ops")
    assert (store.rollout(game="tictactoe").shadow_share,
            store.rollout(game="tictactoe").shadow) == (25, 3)
    assert [c.action for c in store.history(game="tictactoe")] == ["set", "shadow"]
    assert rollout.to_json()["shadow_share"] == 100


def test_a_share_without_a_shadow_version_is_refused(store, publish):
    publish(1)
    with pytest.raises(AliasRefused, match="no shadow version"):
        store.set_shadow(game="tictactoe", version=None, share=5, by="ops")
    with pytest.raises(AliasRefused, match="shadow share must be a whole number"):
        store.set_shadow(game="tictactoe", version=1, share=101, by="ops")
    assert store.rollout(game="tictactoe").aliases == {}


def test_tallies_add_up_per_production_version(store, publish):
    publish(3)
    store.record_shadow(game="tictactoe", version=3, production=1,
                        counts={"compared": 10, "agreed": 7, "proved": 8,
                                "production_optimal": 8, "shadow_optimal": 6})
    store.record_shadow(game="tictactoe", version=3, production=1,
                        counts={"compared": 5, "agreed": 5, "dropped": 2})
    store.record_shadow(game="tictactoe", version=3, production=2, counts={"compared": 1})
    first, second = store.shadow_reports(game="tictactoe", version=3)
    assert (first.production, first.compared, first.agreed, first.proved, first.dropped) == (
        1, 15, 12, 8, 2)
    assert first.agreement == pytest.approx(0.8)
    assert first.optimal_rate("shadow") == 0.75 and first.optimal_rate("production") == 1.0
    assert first.updated_at is not None
    assert "15 queries compared, agrees 80.0%" in first.describe()
    assert "optimal 75.0% against production's 100.0% (8 proved)" in first.describe()
    assert second.production == 2 and second.compared == 1
    assert store.shadow_reports(game="tictactoe", version=2) == []
    with pytest.raises(InvalidArgument, match="no shadow tally"):
        store.record_shadow(game="tictactoe", version=3, production=1, counts={"wins": 1})


def test_an_empty_report_says_so():
    report = ShadowReport("tictactoe", 3, 1, dropped=4)
    assert report.agreement is None and report.optimal_rate("shadow") is None
    assert report.describe() == ("version 3 against production 1: nothing compared yet "
                                 "(4 dropped)")
    assert report.to_json()["agreement"] is None
