import datetime as dt

import pytest

from gameai.store import AliasChange, AliasRefused
from gameai.store.errors import InvalidArgument
from gameai.store.policy import (
    check_alias,
    check_weight,
    describe_versions,
    gc_victims,
    rollback_target,
)

NOW = dt.datetime(2025, 6, 1, tzinfo=dt.UTC)


def change(frm, to, *, alias="production", action="set", days_ago=30.0):
    at = (NOW - dt.timedelta(days=days_ago)).isoformat().replace("+00:00", "Z")
    return AliasChange(game="tictactoe", alias=alias, from_version=frm, to_version=to, at=at,
                       by="test", action=action)


def test_rollback_walks_back_one_change_at_a_time():
    history = [change(None, 1), change(1, 2), change(2, 3)]
    assert rollback_target(history, "production") == 2
    history.append(change(3, 2, action="rollback"))
    assert rollback_target(history, "production") == 1
    history.append(change(2, 1, action="rollback"))
    assert rollback_target(history, "production") is None


def test_rollback_after_a_new_promotion_returns_to_where_it_came_from():
    history = [change(None, 1), change(1, 2), change(2, 1, action="rollback"), change(1, 4)]
    assert rollback_target(history, "production") == 1


def test_rollback_ignores_other_aliases():
    history = [change(None, 1), change(None, 7, alias="canary"), change(7, 8, alias="canary")]
    assert rollback_target(history, "production") is None
    assert rollback_target(history, "canary") == 7


def test_gc_keeps_newest_aliased_recent_and_rollback_targets():
    history = [change(None, 2, days_ago=40), change(2, 3, days_ago=30),
               change(3, 5, days_ago=1)]
    victims = gc_victims(range(1, 10), keep=2, aliases={"production": 5, "canary": 6},
                         history=history, window_seconds=7 * 86400, now=NOW)
    # 8, 9 newest; 5, 6 aliased; 3 named within the window and production's rollback target
    assert victims == [1, 2, 4, 7]


def test_gc_window_zero_still_keeps_rollback_target():
    history = [change(None, 1, days_ago=90), change(1, 2, days_ago=60)]
    victims = gc_victims([1, 2, 3, 4], keep=1, aliases={"production": 2}, history=history,
                         window_seconds=0, now=NOW)
    assert victims == [3]


@pytest.mark.parametrize("keep", [0, -1, True, 1.5])
def test_gc_refuses_to_keep_nothing(keep):
    with pytest.raises(InvalidArgument, match="at least 1"):
        gc_victims([1, 2], keep=keep, aliases={}, history=[], window_seconds=0, now=NOW)


@pytest.mark.parametrize("name", ["", "3", "1abc", "latest", "has space", "x" * 65, "a:b"])
def test_invalid_alias_names_are_refused(name):
    with pytest.raises(AliasRefused, match="invalid alias name"):
        check_alias(name)


@pytest.mark.parametrize("weight", [-1, 101, 10.5, True, "10"])
def test_invalid_weights_are_refused(weight):
    with pytest.raises(AliasRefused, match="0 to 100"):
        check_weight(weight)


def test_describe_versions_groups_runs():
    assert describe_versions([5, 1, 2, 3, 9, 10]) == "versions: 1-3, 5, 9-10"
    assert describe_versions([]) == "no versions stored"


@pytest.mark.parametrize("window", [-1.0, float("nan")])
def test_gc_refuses_a_bad_window(window):
    with pytest.raises(InvalidArgument, match="window"):
        gc_victims([1, 2], keep=1, aliases={}, history=[], window_seconds=window, now=NOW)


def test_gc_window_longer_than_the_calendar_keeps_all_named_versions():
    history = [change(None, 1, days_ago=3000)]
    assert gc_victims([1, 2, 3], keep=1, aliases={}, history=history,
                      window_seconds=float("inf"), now=NOW) == [2]
