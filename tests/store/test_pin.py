"""The operator's pin on production: set with a manual promote or rollback (atomically with
the alias change), honoured by automatic promotion inside the same Lua write, released by
an operator, recorded in the history and announced as an event."""

import queue

import pytest

from gameai.store import AliasRefused, Pinned

GAME = "tictactoe"


def test_a_manual_promote_pins_and_auto_promotion_is_refused_until_released(store, publish):
    publish(3)
    store.set_alias(game=GAME, alias="production", version=1, by="trainer", unless_pinned=True)
    assert store.pinned(game=GAME) is None
    store.set_alias(game=GAME, alias="production", version=2, by="ops", pin=True)
    pin = store.pinned(game=GAME)
    assert (pin.version, pin.by, pin.action) == (2, "ops", "set")
    assert store.rollout(game=GAME).pin == pin
    counter, history = store.counter(), store.history(game=GAME)
    refused = r"pinned by ops at .* \(promoted to version 2\).*gameai models release --game"
    with pytest.raises(Pinned, match=refused):
        store.set_alias(game=GAME, alias="production", version=3, by="trainer",
                        unless_pinned=True)
    assert store.resolve(game=GAME, ref="production") == 2  # the refusal changed nothing
    assert (store.counter(), store.history(game=GAME)) == (counter, history)
    released = store.release(game=GAME, by="ops2")
    assert released == pin
    assert store.pinned(game=GAME) is None and store.rollout(game=GAME).pin is None
    store.set_alias(game=GAME, alias="production", version=3, by="trainer", unless_pinned=True)
    assert store.resolve(game=GAME, ref="production") == 3


def test_a_rollback_pins_where_it_lands_and_pins_never_confuse_rollback(store, publish):
    publish(3)
    for v in (1, 2, 3):
        store.set_alias(game=GAME, alias="production", version=v, by="trainer")
    assert store.rollback(game=GAME, by="ops", pin=True).to_version == 2
    assert store.pinned(game=GAME).version == 2
    assert store.pinned(game=GAME).action == "rollback"
    store.release(game=GAME, by="ops")
    store.pin(game=GAME, by="ops")
    store.release(game=GAME, by="ops")
    # pin and release entries move nothing: the next rollback still goes 2 -> 1
    assert store.rollback(game=GAME, by="ops").to_version == 1
    actions = [(c.action, c.from_version, c.to_version, c.by)
               for c in store.history(game=GAME)][-5:]
    assert actions == [("rollback", 3, 2, "ops"), ("release", 2, 2, "ops"),
                       ("pin", 2, 2, "ops"), ("release", 2, 2, "ops"),
                       ("rollback", 2, 1, "ops")]


def test_promoting_the_version_production_already_has_still_pins(store, publish):
    publish(1)
    store.set_alias(game=GAME, alias="production", version=1, by="trainer")
    change = store.set_alias(game=GAME, alias="production", version=1, by="ops", pin=True)
    assert change.from_version == change.to_version == 1
    assert store.pinned(game=GAME).version == 1


def test_releasing_nothing_changes_nothing_and_pinning_needs_production(store, publish):
    publish(1)
    counter = store.counter()
    assert store.release(game=GAME, by="ops") is None
    assert store.counter() == counter and store.history(game=GAME) == []
    with pytest.raises(AliasRefused, match="no production version to pin"):
        store.pin(game=GAME, by="ops")
    with pytest.raises(AliasRefused, match="only production is pinned"):
        store.set_alias(game=GAME, alias="canary", version=1, by="ops", pin=True)
    assert store.pinned(game=GAME) is None


def test_pins_are_announced(store, publish):
    publish(2)
    events: queue.Queue = queue.Queue()
    with store.subscribe(events.put) as sub:
        assert sub.wait_connected(5)
        store.set_alias(game=GAME, alias="production", version=1, by="ops", pin=True)
        store.release(game=GAME, by="ops")
        store.pin(game=GAME, by="ops")
        got = [events.get(timeout=5) for _ in range(3)]
    assert [(e["type"], e.get("pinned"), e.get("version")) for e in got] == [
        ("alias", True, 1), ("pin", False, 1), ("pin", True, 1)]
    assert [e["counter"] for e in got] == sorted(e["counter"] for e in got)


def test_a_pin_of_one_game_leaves_the_others_alone(store, publish, make_payload):
    publish(1)
    store.set_alias(game=GAME, alias="production", version=1, by="ops", pin=True)
    assert store.pinned(game="four-in-a-row") is None
    assert store.rollout(game="four-in-a-row").pin is None
