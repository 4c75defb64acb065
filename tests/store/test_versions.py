import hashlib
import json
import multiprocessing
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import redis

from gameai.models import CorruptModel, MlpModel, ModelInfo
from gameai.store import ModelStore, UnknownVersion
from gameai.store.errors import InvalidArgument

from .conftest import TTT


def _mlp() -> MlpModel:
    rng = np.random.default_rng(4)
    return MlpModel(TTT, ModelInfo(game="tictactoe", algorithm="mlp", seed=4),
                    w1=rng.normal(size=(9, 27)).astype(np.float32),
                    b1=rng.normal(size=27).astype(np.float32),
                    w2=rng.normal(size=(27, 9)).astype(np.float32),
                    b2=rng.normal(size=9).astype(np.float32),
                    exception_keys=np.array([3, 9], dtype=np.uint64),
                    exception_values=np.zeros((2, 9), np.float32))


@pytest.mark.parametrize("form", ["table", "mlp"])
def test_every_model_form_round_trips_exactly(store, oracle, form):
    model = oracle if form == "table" else _mlp()
    data = model.to_bytes()
    record = store.publish(data, by="trainer@test")
    assert (record.version, record.kind, record.size) == (1, form, len(data))
    assert record.sha256 == hashlib.sha256(data).hexdigest()
    assert store.payload(game="tictactoe", version=1) == data
    loaded = store.load(game="tictactoe", version=1)
    assert type(loaded) is type(model) and loaded.info == model.info
    assert loaded.to_bytes() == data
    assert store.version(game="tictactoe", version=1) == record
    assert store.games() == ["tictactoe"]


def test_publish_refuses_a_corrupt_payload_and_stores_nothing(store, make_payload):
    data = bytearray(make_payload(1))
    data[len(data) // 2] ^= 0xFF
    before = store.counter()
    with pytest.raises(CorruptModel, match="checksum"):
        store.publish(bytes(data), by="test")
    assert store.versions(game="tictactoe") == [] and store.counter() == before


def test_bytes_damaged_in_redis_never_load(store, redis_url, make_payload):
    store.publish(make_payload(1), by="test")
    client = redis.Redis.from_url(redis_url)
    key = store.keys.payload("tictactoe", 1)
    data = bytearray(client.get(key))
    data[100] ^= 0x01
    client.set(key, bytes(data))
    with pytest.raises(CorruptModel, match="do not match their sha256"):
        store.load(game="tictactoe", version=1)
    client.delete(key)
    with pytest.raises(CorruptModel, match="no payload"):
        store.load(game="tictactoe", version=1)


def test_unknown_version_is_named(store, publish):
    publish(3)
    assert store.version(game="tictactoe", version=9) is None
    assert store.payload(game="tictactoe", version=9) is None
    with pytest.raises(UnknownVersion, match=r"tictactoe has no version 9 \(versions: 1-3\)"):
        store.load(game="tictactoe", version=9)
    assert store.versions(game="mnk-4x4-4") == []
    with pytest.raises(UnknownVersion, match="unknown game"):
        store.versions(game="bad:name")


def test_numbers_are_never_reused_even_if_the_counter_key_is_lost(store, redis_url, publish):
    publish(3)
    assert store.gc(game="tictactoe", keep=1, window_seconds=0, by="test") == [1, 2]
    assert publish(1, start=10) == 4
    redis.Redis.from_url(redis_url).delete(store.keys.next("tictactoe"))
    assert publish(1, start=20) == 5, "a lost counter must not hand out 1-4 again"


def test_the_same_token_publishes_once(store, make_payload):
    first = store.publish(make_payload(1), by="test", token="job-42")
    again = store.publish(make_payload(1), by="test", token="job-42")
    assert again == first and len(store.versions(game="tictactoe")) == 1
    with pytest.raises(InvalidArgument, match="already published tictactoe version 1 with "
                                              "other bytes"):
        store.publish(make_payload(2), by="test", token="job-42")
    assert len(store.versions(game="tictactoe")) == 1
    with pytest.raises(InvalidArgument):
        store.publish(make_payload(1), by="test", token="has space")


def test_racing_threads_get_distinct_versions_and_lose_nothing(store, make_payload):
    payloads = [make_payload(seed) for seed in range(40)]
    barrier = threading.Barrier(4)

    def publish_share(share: list[bytes]) -> list[tuple[int, str]]:
        barrier.wait()
        return [(r.version, r.sha256) for r in (store.publish(p, by="t") for p in share)]

    with ThreadPoolExecutor(4) as pool:
        results = [x for part in pool.map(publish_share, [payloads[i::4] for i in range(4)])
                   for x in part]
    _check_nothing_lost(store, payloads, results)


def _publish_in_process(url: str, payloads: list[bytes], start, results) -> None:
    with ModelStore.from_url(url, prefix="test") as store:
        start.wait()
        results.put([(r.version, r.sha256) for r in (store.publish(p, by="p") for p in payloads)])


@pytest.mark.slow
def test_racing_processes_get_distinct_versions_and_lose_nothing(store, redis_url,
                                                                 make_payload):
    payloads = [make_payload(seed) for seed in range(60)]
    ctx = multiprocessing.get_context("spawn")
    start, queue = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_publish_in_process, args=(redis_url, payloads[i::3], start,
                                                           queue)) for i in range(3)]
    for proc in procs:
        proc.start()
    start.set()
    results = [x for _ in procs for x in queue.get(timeout=60)]
    for proc in procs:
        proc.join(10)
    _check_nothing_lost(store, payloads, results)


def _check_nothing_lost(store, payloads, results):
    versions = [v for v, _ in results]
    assert sorted(versions) == list(range(1, len(payloads) + 1))
    by_version = {v: sha for v, sha in results}
    for record in store.versions(game="tictactoe"):
        data = store.payload(game="tictactoe", version=record.version)
        assert hashlib.sha256(data).hexdigest() == record.sha256 == by_version[record.version]
    assert {hashlib.sha256(p).hexdigest() for p in payloads} == set(by_version.values())


def test_a_reader_never_sees_half_a_version(store, redis_url, make_payload):
    payloads = [make_payload(seed) for seed in range(30)]
    seen: set[int] = set()
    done = threading.Event()
    problems: list[str] = []

    def read() -> None:
        reader = redis.Redis.from_url(redis_url)
        k = store.keys
        while not done.is_set() or len(seen) < len(payloads):
            # raw reads, index first: a half-written version would show as an index entry
            # without its payload, or bytes that do not match the index
            index = reader.hgetall(k.index("tictactoe"))
            for v, raw in index.items():
                record = json.loads(raw)
                data = reader.get(k.payload("tictactoe", int(v)))
                if data is None or hashlib.sha256(data).hexdigest() != record["sha256"]:
                    problems.append(f"version {int(v)} seen half-written")
                seen.add(int(v))
        reader.close()

    thread = threading.Thread(target=read)
    thread.start()
    for p in payloads:
        store.publish(p, by="test")
    done.set()
    thread.join(30)
    assert not problems and seen == set(range(1, 31))


JUDGED = {"policy": "depth 3", "seconds": 12.5, "command": "gameai evaluate m --judge-games 2",
          "measures": [{"name": "vs_perfect_as_x", "kind": "score", "games": 2, "wins": 2,
                        "draws": 0, "losses": 0,
                        "score": {"value": 1.0, "low": 0.34, "high": 1.0}}]}


def test_judged_measures_made_outside_the_file_are_the_versions_own(store, make_payload):
    """A bundled model's manifest carries its judged figures: published with them, the
    version's record holds them as its evaluation's 'judged', beside the file's own
    figures, and the payload's bytes are the file's."""
    payload = make_payload(0)
    record = store.publish(payload, by="tests", judged=JUDGED)
    again = store.version(game="tictactoe", version=record.version)
    assert again is not None and again.evaluation["judged"] == JUDGED
    assert {k for k in again.evaluation if k != "judged"} == \
        set(store.load(game="tictactoe", version=record.version).info.evaluation)
    assert store.payload(game="tictactoe", version=record.version) == payload
    plain = store.publish(make_payload(1), by="tests")
    assert "judged" not in plain.evaluation


@pytest.mark.parametrize(("judged", "message"), [
    ({**JUDGED, "measures": []}, "non-empty list of 'measures'"),
    ({"measures": JUDGED["measures"], "seconds": 1}, "need a 'policy'"),
    ({**JUDGED, "measures": [{"name": "x", "kind": "elo", "value": 1}]},
     "'kind' of score, rate or lines, not"),
    ({**JUDGED, "measures": [{"name": "vs_perfect_as_x", "kind": "score", "games": 2}]},
     "'vs_perfect_as_x' lacks wins, draws, losses, score"),
    ("good", "need a 'policy'"),
])
def test_malformed_judged_measures_are_refused_and_nothing_is_stored(store, make_payload,
                                                                     judged, message):
    with pytest.raises(InvalidArgument, match=message):
        store.publish(make_payload(0), by="tests", judged=judged)
    assert store.versions(game="tictactoe") == []


def test_a_files_own_judged_measures_are_never_recorded_over(store, make_payload):
    own = make_payload(0, evaluation={"judged": {**JUDGED, "policy": "its own"}})
    with pytest.raises(InvalidArgument, match="carries its own judged measures"):
        store.publish(own, by="tests", judged=JUDGED)
    assert store.versions(game="tictactoe") == []
