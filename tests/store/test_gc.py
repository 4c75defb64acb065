import pytest

from gameai.store import UnknownVersion
from gameai.store.errors import InvalidArgument


def test_gc_keeps_newest_aliased_and_recently_named_versions(store, publish):
    publish(8)
    store.set_alias(game="tictactoe", alias="production", version=2, by="ops")
    store.set_alias(game="tictactoe", alias="production", version=3, by="ops")
    store.set_alias(game="tictactoe", alias="staging", version=5, by="ops")
    assert store.gc_plan(game="tictactoe", keep=2) == [1, 4, 6]
    assert store.gc(game="tictactoe", keep=2, by="ops") == [1, 4, 6]
    assert [r.version for r in store.versions(game="tictactoe")] == [2, 3, 5, 7, 8]


def test_gc_outside_the_window_still_keeps_aliases_and_rollback_targets(store, publish):
    publish(5)
    for v in (1, 2, 3):
        store.set_alias(game="tictactoe", alias="production", version=v, by="ops")
    deleted = store.gc(game="tictactoe", keep=1, window_seconds=0, by="ops")
    assert deleted == [1, 4]  # 3 is production, 2 its rollback target, 5 the newest
    assert store.rollback(game="tictactoe", by="ops").to_version == 2


def test_deleted_versions_are_gone_for_good_and_say_so(store, publish):
    publish(3)
    store.gc(game="tictactoe", keep=1, window_seconds=0, by="ops")
    with pytest.raises(UnknownVersion, match=r"version 1 was deleted by gc at .* \(by ops\)"):
        store.load(game="tictactoe", version=1)
    with pytest.raises(UnknownVersion, match="deleted by gc"):
        store.set_alias(game="tictactoe", alias="production", version=2, by="ops")
    assert store.payload(game="tictactoe", version=1) is None
    assert publish(1, start=50) == 4


def test_gc_never_deletes_a_version_aliased_after_it_planned(store, publish, monkeypatch):
    """The race: gc plans, someone promotes a planned victim, gc deletes. The script re-checks
    the aliases at deletion time, so the promoted version survives."""
    publish(4)
    plan = store.gc_plan(game="tictactoe", keep=1, window_seconds=0)
    assert plan == [1, 2, 3]
    store.set_alias(game="tictactoe", alias="production", version=2, by="ops")
    monkeypatch.setattr(store, "gc_plan", lambda **kw: plan)
    assert store.gc(game="tictactoe", keep=1, window_seconds=0, by="ops") == [1, 3]
    assert store.load(game="tictactoe", version=2).info.seed == 1


def test_gc_with_nothing_to_do_emits_nothing(store, publish):
    publish(2)
    counter = store.counter()
    assert store.gc(game="tictactoe", keep=5, by="ops") == []
    assert store.counter() == counter


def test_gc_refuses_keep_zero_and_changes_nothing(store, publish):
    publish(2)
    with pytest.raises(InvalidArgument, match="at least 1"):
        store.gc(game="tictactoe", keep=0, by="ops")
    assert len(store.versions(game="tictactoe")) == 2
