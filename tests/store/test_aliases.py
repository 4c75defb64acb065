import pytest
import redis

from gameai.store import AliasRefused, UnknownVersion, choose_version
from gameai.store.routing import bucket


def test_promote_records_history_and_points_the_alias(store, publish):
    publish(3)
    change = store.set_alias(game="tictactoe", alias="production", version=2, by="ops")
    assert (change.from_version, change.to_version, change.by) == (None, 2, "ops")
    store.set_alias(game="tictactoe", alias="production", version=3, by="trainer")
    assert store.resolve(game="tictactoe", ref="production") == 3
    assert [c.to_json() | {"at": None} for c in store.history(game="tictactoe")] == [
        {"alias": "production", "from": None, "to": 2, "at": None, "by": "ops", "action": "set"},
        {"alias": "production", "from": 2, "to": 3, "at": None, "by": "trainer",
         "action": "set"},
    ]


def test_setting_the_same_version_changes_nothing(store, publish):
    publish(1)
    store.set_alias(game="tictactoe", alias="production", version=1, by="ops")
    counter = store.counter()
    change = store.set_alias(game="tictactoe", alias="production", version=1, by="ops")
    assert change.from_version == change.to_version == 1
    assert store.counter() == counter and len(store.history(game="tictactoe")) == 1


def test_alias_to_a_missing_version_is_refused_and_changes_nothing(store, publish):
    publish(2)
    store.set_alias(game="tictactoe", alias="production", version=1, by="ops")
    before = (store.rollout(game="tictactoe"), store.history(game="tictactoe"))
    with pytest.raises(UnknownVersion, match="no version 7"):
        store.set_alias(game="tictactoe", alias="production", version=7, by="ops")
    with pytest.raises(AliasRefused, match="invalid alias name"):
        store.set_alias(game="tictactoe", alias="9", version=1, by="ops")
    assert (store.rollout(game="tictactoe"), store.history(game="tictactoe")) == before


def test_alias_to_a_payload_that_no_longer_verifies_is_refused(store, redis_url, publish):
    publish(2)
    client = redis.Redis.from_url(redis_url)
    client.setrange(store.keys.payload("tictactoe", 2), 50, b"\x00\x01")
    with pytest.raises(AliasRefused, match="sha256"):
        store.set_alias(game="tictactoe", alias="production", version=2, by="ops")
    assert store.rollout(game="tictactoe").aliases == {}


def test_repeated_rollbacks_walk_back_then_refuse(store, publish):
    publish(3)
    for v in (1, 2, 3):
        store.set_alias(game="tictactoe", alias="production", version=v, by="ops")
    assert store.rollback(game="tictactoe", by="ops").to_version == 2
    assert store.rollback(game="tictactoe", by="ops").to_version == 1
    counter = store.counter()
    with pytest.raises(AliasRefused, match="no earlier version"):
        store.rollback(game="tictactoe", by="ops")
    assert store.counter() == counter and store.resolve(game="tictactoe", ref="production") == 1
    assert [c.action for c in store.history(game="tictactoe")][-2:] == ["rollback", "rollback"]


def test_rollback_of_an_unset_alias_is_refused(store, publish):
    publish(1)
    with pytest.raises(AliasRefused, match="no alias 'staging'"):
        store.rollback(game="tictactoe", alias="staging", by="ops")


def test_canary_weight_and_version_are_set_together(store, publish):
    publish(3)
    store.set_alias(game="tictactoe", alias="production", version=2, by="ops")
    store.set_canary(game="tictactoe", version=3, weight=10, by="ops")
    rollout = store.rollout(game="tictactoe")
    assert (rollout.production, rollout.canary, rollout.canary_weight) == (2, 3, 10)
    store.set_canary(game="tictactoe", version=None, weight=25, by="ops")
    assert store.rollout(game="tictactoe").canary_weight == 25
    assert store.rollout(game="tictactoe").canary == 3
    assert [c.action for c in store.history(game="tictactoe")] == ["set", "canary"]


@pytest.mark.parametrize("weight", [-1, 101, True])
def test_bad_canary_weights_change_nothing(store, publish, weight):
    publish(1)
    with pytest.raises(AliasRefused, match="0 to 100"):
        store.set_canary(game="tictactoe", version=1, weight=weight, by="ops")
    assert store.rollout(game="tictactoe").aliases == {}


def test_a_weight_without_a_canary_version_is_refused(store, publish):
    publish(1)
    with pytest.raises(AliasRefused, match="no canary version"):
        store.set_canary(game="tictactoe", version=None, weight=5, by="ops")
    store.set_canary(game="tictactoe", version=None, weight=0, by="ops")  # harmless
    assert store.rollout(game="tictactoe").canary_weight == 0


def test_resolve_names_numbers_aliases_and_latest(store, publish):
    publish(3)
    store.set_alias(game="tictactoe", alias="staging", version=2, by="ops")
    assert [store.resolve(game="tictactoe", ref=r) for r in ("1", "staging", "latest", "8",
                                                              "nope", "²")] == [1, 2, 3, None,
                                                                               None, None]


@pytest.mark.parametrize("weight", [0, 1, 10, 37, 50, 99, 100])
def test_canary_share_over_10000_clients_is_within_2_points(weight):
    loaded = {3, 4}
    chosen = [choose_version(game="tictactoe", client_id=f"client-{i}", production=3,
                             canary=4, weight=weight, loaded=loaded) for i in range(10_000)]
    share = 100 * chosen.count(4) / len(chosen)
    assert abs(share - weight) <= 2, share
    assert set(chosen) <= loaded


def test_routing_is_sticky_and_never_picks_an_unloaded_version(store, publish):
    publish(2)
    store.set_alias(game="tictactoe", alias="production", version=1, by="ops")
    store.set_canary(game="tictactoe", version=2, weight=30, by="ops")
    rollout = store.rollout(game="tictactoe")
    clients = [f"user-{i}" for i in range(500)]
    first = [rollout.route(c, loaded={1, 2}) for c in clients]
    assert first == [rollout.route(c, loaded={1, 2}) for c in clients]
    assert first == [2 if bucket("tictactoe", c) < 30 else 1 for c in clients]
    assert {rollout.route(c, loaded={1}) for c in clients} == {1}
    assert [rollout.route(c, loaded={2}) for c in clients] == [v if v == 2 else None
                                                               for v in first]
    assert {rollout.route(c, loaded=set()) for c in clients} == {None}
