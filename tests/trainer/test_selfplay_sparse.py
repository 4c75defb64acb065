"""The sparse deltas and their merge (gameai.trainer.selfplay.sparse): each kernel against a
plain-Python reference, the sparse merge against the dense merge of whole copies it
replaces, and the tracked self-play kernel against the untracked one."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gameai.games import get_game
from gameai.trainer.learners.ntuple import NO_TRACKING, play_games
from gameai.trainer.selfplay.host import Host, Share
from gameai.trainer.selfplay.sparse import (
    RULES,
    SCALED,
    SUM,
    Delta,
    Update,
    apply,
    collect,
    cut_points,
    merge_one,
    merge_round,
    radix_order,
)
from gameai.trainer.training import make_learner


def schedule_of(learner) -> np.ndarray:
    return learner.params.schedule()


def random_deltas(rng: np.random.Generator, base: np.ndarray, actors: int) -> list[Delta]:
    """Deltas from the same base, overlapping: some weights touched by several actors."""
    out = []
    for _ in range(actors):
        index = rng.choice(base.shape[0], size=rng.integers(1, base.shape[0] // 2),
                           replace=False).astype(np.int64)
        rng.shuffle(index)
        after = (base[index] + rng.normal(0, 0.1, index.shape[0])).astype(np.float32)
        reach = rng.choice([0.0, 1e-5, 0.3, 0.9, 1.0], index.shape[0]).astype(np.float32)
        out.append(Delta(index, base[index].copy(), after, reach))
    return out


def reference_merge(base: np.ndarray, deltas: list[Delta], rule: str) -> np.ndarray:
    """The merge rules of the module docstring, weight by weight, in plain Python."""
    out = base.copy()
    touched: dict[int, list[tuple[float, float]]] = {}
    for delta in deltas:
        for e, b, a, r in zip(delta.entry, delta.before, delta.after, delta.reach,
                              strict=True):
            touched.setdefault(int(e), []).append((float(a) - float(b), float(r)))
    for e, moves in touched.items():
        ds = [d for d, _ in moves]
        if rule == "sum":
            move = sum(ds)
        elif rule == "mean":
            move = sum(ds) / len(ds)
        else:
            move, weight, aimed = 0.0, 0.0, 0.0
            for d, r in moves:
                r = min(r, 1.0 - 1e-7)
                if r <= 1e-12:
                    move += d
                else:
                    w = -math.log(1.0 - r)
                    weight += w
                    aimed += w * d / r
            if weight > 0:
                move += aimed / weight * (1.0 - math.exp(-weight))
        out[e] = np.float32(float(base[e]) + move)
    return out


@pytest.mark.parametrize("rule", sorted(RULES))
def test_round_merge_matches_the_reference(rule):
    rng = np.random.default_rng(1)
    base = rng.normal(0, 0.5, 500).astype(np.float32)
    deltas = random_deltas(rng, base, 4)
    flat = base.copy()
    update = merge_round(flat, deltas, RULES[rule])
    expected = reference_merge(base, deltas, rule)
    assert np.allclose(flat, expected, rtol=0, atol=1e-6)
    assert np.all(update.entry[1:] > update.entry[:-1])  # ascending, each weight once
    copy = base.copy()
    apply(copy, update)
    assert np.array_equal(copy, flat)  # an update brings a copy to the master exactly
    assert set(update.entry.tolist()) == set(np.concatenate([d.entry for d in deltas]).tolist())


@pytest.mark.parametrize("rule", sorted(RULES))
def test_a_merge_cut_into_parts_is_the_one_pass_bit_for_bit(rule):
    """The round's merge in threads, one a range of the weights, gives the serial pass's
    weights and update exactly (every weight merged from the same deltas in the same
    order), whatever the number of parts."""
    rng = np.random.default_rng(7)
    base = rng.normal(0, 0.5, 400_000).astype(np.float32)
    deltas = []
    for _ in range(6):
        entry = np.sort(rng.choice(base.size, 60_000, replace=False))
        after = (base[entry] + rng.normal(0, 0.05, entry.size)).astype(np.float32)
        deltas.append(Delta(entry, base[entry].copy(), after,
                            rng.uniform(0, 1, entry.size).astype(np.float32)))
    one = base.copy()
    serial = merge_round(one, deltas, RULES[rule])
    for parts in (2, 3, 16):
        cut = base.copy()
        update = merge_round(cut, deltas, RULES[rule], parts=parts)
        assert np.array_equal(cut, one)
        assert np.array_equal(update.entry, serial.entry)
        assert np.array_equal(update.values, serial.values)


def test_sparse_sum_equals_the_dense_merge_it_replaces():
    """The dense merge added every copy's whole change (weights += copy - before); the
    sparse one, over the touched weights only, gives the same weights."""
    rng = np.random.default_rng(2)
    base = rng.normal(0, 0.5, 2000).astype(np.float32)
    deltas = random_deltas(rng, base, 3)
    dense = base.copy()
    for delta in deltas:
        copy = base.copy()
        copy[delta.entry] = delta.after
        dense += copy - base
    sparse = base.copy()
    merge_round(sparse, deltas, SUM)
    assert np.allclose(sparse, dense, rtol=0, atol=1e-6)


def test_scaled_is_sum_for_small_steps_and_mean_for_converged_ones():
    base = np.zeros(2, np.float32)
    small = [Delta(np.array([0]), np.zeros(1, np.float32), np.array([0.001], np.float32),
                   np.array([1e-6], np.float32)) for _ in range(4)]
    converged = [Delta(np.array([1]), np.zeros(1, np.float32), np.array([v], np.float32),
                       np.array([1.0], np.float32)) for v in (0.5, 0.7)]
    flat = base.copy()
    merge_round(flat, small + converged, SCALED)
    assert flat[0] == pytest.approx(0.004, rel=1e-3)  # four small steps add up
    assert flat[1] == pytest.approx(0.6, rel=1e-3)  # two converged copies: their mean
    one = base.copy()
    merge_round(one, converged[:1], SCALED)
    assert one[1] == np.float32(0.5)  # one actor keeps its own delta


@pytest.mark.parametrize("rule", [SUM, SCALED])
def test_asynchronous_merge_matches_the_reference(rule):
    rng = np.random.default_rng(3)
    base = rng.normal(0, 0.5, 300).astype(np.float32)
    (delta,) = random_deltas(rng, base, 1)
    master = base + rng.normal(0, 0.05, 300).astype(np.float32)  # moved since the base
    expected = master.copy()
    for e, b, a, r in zip(delta.entry, delta.before, delta.after, delta.reach, strict=True):
        m, d = float(master[e]), float(a) - float(b)
        m += d - (m - float(b)) * min(float(r), 1.0) if rule == SCALED else d
        expected[e] = np.float32(m)
    flat = master.copy()
    update = merge_one(flat, delta, rule)
    assert np.allclose(flat, expected, rtol=0, atol=1e-6)
    assert isinstance(update, Update) and np.array_equal(update.values, flat[update.entry])


@pytest.mark.parametrize("name, siblings", [("tictactoe", 0), ("connect-4x5-4", 0),
                                            ("connect-4x5-4", 3)])
def test_a_tracked_share_is_the_untracked_games_taken_out(name, siblings):
    """A host's share plays the same games as the untracked kernel; its delta holds every
    weight that moved (the siblings' too), its before and after values, and the copy is
    put back."""
    learner = make_learner(get_game(name), "ntuple", seed=4,
                           params={"sides": "2", "siblings": str(siblings)})
    learner.play(300)
    schedule = schedule_of(learner)
    base = learner.weights.copy()
    plain, stats = base.copy(), np.zeros(4, np.int64)
    empty = np.zeros((0, 0, 0), np.float32)
    play_games(learner.net, plain, empty, empty, np.array([77], np.uint64), 200, 300,
               schedule, stats, *NO_TRACKING)
    host = Host(learner.net, base)
    (played,) = host.play([Share(0, np.array([77], np.uint64), 200, 300)], schedule)
    assert np.array_equal(host.weights, base)  # put back
    assert np.array_equal(played.stats, stats)
    moved = np.flatnonzero(plain.reshape(-1) != base.reshape(-1))
    assert set(moved.tolist()) <= set(played.delta.entry.tolist())
    assert len(set(played.delta.entry.tolist())) == played.delta.size  # no weight twice
    rebuilt = base.reshape(-1).copy()
    rebuilt[played.delta.entry] = played.delta.after
    assert np.array_equal(rebuilt, plain.reshape(-1))
    assert np.array_equal(played.delta.before, base.reshape(-1)[played.delta.entry])
    assert ((played.delta.reach >= 0) & (played.delta.reach <= 1)).all()
    assert played.delta.reach.max() > 0.5  # the opening's weights, updated every game


def test_parallel_rounds_do_not_depend_on_the_threads():
    """The same seed, actors and round size give the same weights with 1, 2 or 3 host
    threads (a host plays its slots one after another from the round's base)."""
    from gameai.trainer.selfplay.local import LocalBackend

    def trained(threads: int) -> np.ndarray:
        learner = make_learner(get_game("tictactoe"), "ntuple", seed=5,
                               params={"actors": "4", "sync_games": "200"})
        learner.use_backend(LocalBackend(threads))
        learner.play(1500)
        learner.close()
        return learner.weights

    one = trained(1)
    assert np.array_equal(one, trained(2)) and np.array_equal(one, trained(3))


@pytest.mark.parametrize("top", [1, 4095, 4096, 9_175_040, 2**28])
def test_radix_order_sorts_like_a_stable_argsort(top):
    keys = np.random.default_rng(top).integers(0, top, 5000).astype(np.int64)
    assert np.array_equal(radix_order(keys), np.argsort(keys, kind="stable"))
    assert radix_order(np.zeros(0, np.int64)).shape == (0,)


def test_overlapping_rounds_are_reproducible_and_one_round_behind():
    """overlap=1: the same weights whatever the host threads and however the games are
    cut into calls at round ends (a call's last round merged, its update held back until
    the next round is queued); not the plain rounds' weights."""
    from gameai.trainer.selfplay.local import LocalBackend

    def trained(threads: int, calls: list[int], overlap: int = 1) -> np.ndarray:
        learner = make_learner(get_game("tictactoe"), "ntuple", seed=5,
                               params={"actors": "4", "sync_games": "200",
                                       "overlap": str(overlap)})
        learner.use_backend(LocalBackend(threads))
        for games in calls:
            learner.play(games)
        assert learner.games_played == sum(calls)
        learner.sync()
        learner.close()
        return learner.weights.copy()

    one = trained(1, [1600])
    assert np.array_equal(one, trained(2, [1600]))
    assert np.array_equal(one, trained(3, [400, 200, 1000]))
    assert not np.array_equal(one, trained(2, [1600], overlap=0))


@pytest.mark.parametrize("rule", sorted(RULES))
def test_a_round_merged_onto_a_master_that_moved(rule):
    """Overlapping rounds merge a round's deltas onto a master the previous round moved:
    sum and mean add their move; scaled also contracts the distance moved by the combined
    contraction; the update's ``previous`` holds what it replaced."""
    rng = np.random.default_rng(11)
    base = rng.normal(0, 0.5, 400).astype(np.float32)
    deltas = random_deltas(rng, base, 3)
    master = base + rng.normal(0, 0.05, 400).astype(np.float32)
    plain = reference_merge(base, deltas, rule)  # the move each weight gets from the base
    expected = master.copy()
    for e in {int(x) for d in deltas for x in d.entry}:
        move = float(plain[e]) - float(base[e])
        if rule == "scaled":
            weight = 0.0
            for d in deltas:
                hit = np.flatnonzero(d.entry == e)
                if hit.size:
                    r = min(float(d.reach[hit[0]]), 1.0 - 1e-7)
                    weight += -math.log(1.0 - r) if r > 1e-12 else 0.0
            move -= (1.0 - math.exp(-weight)) * (float(master[e]) - float(base[e]))
        expected[e] = np.float32(float(master[e]) + move)
    flat = master.copy()
    update = merge_round(flat, deltas, RULES[rule])
    assert np.allclose(flat, expected, rtol=0, atol=2e-6)
    assert np.array_equal(update.previous, master[update.entry])
    assert np.array_equal(update.values, flat[update.entry])


def test_a_host_steps_back_over_updates_and_forward_again():
    """A share played again after the updates of its round's successors (a lost host's,
    in overlapping rounds) plays from its own round's base, and the copy is left as it was."""
    learner = make_learner(get_game("connect-4x5-4"), "ntuple", seed=2)
    learner.play(200)
    schedule = schedule_of(learner)
    base = learner.weights.copy()
    host = Host(learner.net, base)
    (first,) = host.play([Share(0, np.array([9], np.uint64), 50, 200)], schedule)
    later = base.reshape(-1).copy()
    update = merge_round(later, [first.delta], SCALED)
    host.apply([update])
    assert np.array_equal(host.flat, later)
    (again,) = host.play([Share(0, np.array([9], np.uint64), 50, 200)], schedule, [update])
    assert np.array_equal(host.flat, later)  # forward again
    for a, b in zip(again.delta, first.delta, strict=True):
        assert np.array_equal(a, b)  # the same games from the same base


@pytest.mark.parametrize("parts", [2, 5, 16])
def test_a_merges_parts_hold_about_as_many_entries_each(parts):
    """The parallel merge's cuts follow the entries, not the deltas' order: with as many
    parts as deltas, cuts sampled at the joined columns' even positions would all fall at
    the deltas' smallest entries and leave one part the whole merge."""
    rng = np.random.default_rng(parts)
    size = 9_175_040
    deltas = []
    for _ in range(16):
        entry = np.unique(rng.integers(0, size, 60_000)).astype(np.int64)
        zero = np.zeros(entry.shape[0], np.float32)
        deltas.append(Delta(entry, zero, zero, zero))
    cuts = cut_points(deltas, parts, size)
    assert cuts[0] == 0 and cuts[-1] == size and len(cuts) == parts + 1
    counts = [sum(int(np.searchsorted(d.entry, cuts[p + 1]) - np.searchsorted(d.entry, cuts[p]))
                  for d in deltas) for p in range(parts)]
    assert max(counts) < 1.5 * sum(counts) / parts


def test_the_update_log_collects_as_a_plain_python_pass_over_it():
    """collect: the log sorted by weight (stably), each weight once with its value before
    its first logged update, its value now, and 1 - the product of its steps' 1 - a (in
    the order logged); the weights put back. Against the same in plain Python."""
    rng = np.random.default_rng(8)
    base = rng.normal(0, 0.5, 70_000).astype(np.float32)
    flat = base.copy()
    n = 30_000
    entries = rng.integers(0, base.shape[0], n)  # repeats, in no order
    steps = rng.uniform(0.2, 1.0, n).astype(np.float32)
    log, old = np.empty(n + 5, np.int64), np.empty(n + 5, np.float32)
    for j, (e, step) in enumerate(zip(entries, steps, strict=True)):
        old[j] = flat[e]
        log[j] = (int(e) << 32) | int(np.array([step], np.float32).view(np.uint32)[0])
        flat[e] += np.float32(0.01)
    moved = flat.copy()
    expected: dict[int, tuple[float, float]] = {}  # weight -> (before, keep)
    for e, step, o in zip(entries, steps, old[:n], strict=True):
        before, keep = expected.get(int(e), (float(o), 1.0))
        expected[int(e)] = (before, float(np.float32(np.float32(keep) * step)))
    delta = collect(flat, log, old, n, np.empty(n + 5, np.int64), np.empty(n + 5, np.float32))
    assert delta.entry.tolist() == sorted(expected)
    assert np.array_equal(delta.before, np.array([expected[e][0] for e in sorted(expected)],
                                                 np.float32))
    assert np.array_equal(delta.after, moved[delta.entry])
    assert np.array_equal(delta.reach, np.array([1.0 - expected[e][1] for e in sorted(expected)],
                                                np.float32))
    assert np.array_equal(flat, base)  # put back


def test_a_round_longer_than_the_tables_batch_is_one_round():
    """sync_games above the learners' 4,096-game batch: each round is played whole (the
    batch once cut every 8,192-game round in two), and many rounds go in one call, so
    overlapping rounds pipeline across them."""
    learner = make_learner(get_game("tictactoe"), "ntuple", seed=3,
                           params={"actors": "2", "sync_games": "5000", "overlap": "1"})
    learner.play(15_000)
    selfplay = learner._selfplay
    assert selfplay is not None and selfplay._dispatched == 3
    assert selfplay.status.staleness == 5000  # the merged round was one round behind
    learner.close()
