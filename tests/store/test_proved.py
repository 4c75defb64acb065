"""The shared table of proved positions (:mod:`gameai.store.proved`) on a real Redis: what a
writer puts is read back as the solver's solution, in the asker's orientation (a Connect
Four position and its mirror share one entry), the table is bounded, and an entry that is
not a solution of the position reads as missing."""

from __future__ import annotations

from gameai.games import get_game
from gameai.store import ModelStore, ProvedIndex, proved

C4 = get_game("connect-four")
TTT = get_game("tictactoe")
GAME = "111561466663112343747547223422774655235375"  # a drawn 42-ply game
LATE = GAME[:28]  # O loses in 14; only column 5 holds out
MIRROR = "".join(str(8 - int(c)) for c in LATE)


def fields(solution):
    return sorted((m.move, m.score, m.outcome, m.distance, m.optimal) for m in solution.moves)


def test_a_proof_reads_back_as_the_solvers_solution(store: ModelStore):
    table = store.proved()
    state = C4.parse_moves(LATE)
    assert table.get(state) is None
    solution = C4.solve(state)
    assert table.put(state, solution) == ("written", 1)
    got = table.get(state)
    assert got is not None
    assert fields(got) == fields(solution)
    assert (got.value, got.outcome, got.distance) == (solution.value, solution.outcome,
                                                      solution.distance)
    assert got.optimal_moves == solution.optimal_moves


def test_the_mirror_image_shares_the_entry_in_its_own_orientation(store: ModelStore):
    table = store.proved()
    state, mirror = C4.parse_moves(LATE), C4.parse_moves(MIRROR)
    table.put(state, C4.solve(state))
    assert table.put(mirror, C4.solve(mirror)) == ("held", 1)  # one entry for both
    got = table.get(mirror)
    assert got is not None and fields(got) == fields(C4.solve(mirror))
    assert fields(got) != fields(C4.solve(state))  # the moves were mapped, not copied


def test_the_table_is_bounded(store: ModelStore):
    table = store.proved(max_entries=2)
    states = [C4.parse_moves(GAME[:n]) for n in (28, 30, 32)]
    results = [table.put(s, C4.solve(s)) for s in states]
    assert results == [("written", 1), ("written", 2), ("full", 2)]
    assert table.size(game=C4.name) == 2
    assert table.get(states[2]) is None and table.get(states[0]) is not None


def test_games_have_their_own_tables(store: ModelStore):
    table = store.proved(max_entries=1)
    c4, ttt = C4.parse_moves(LATE), TTT.parse("X--|-O-|---")
    assert table.put(c4, C4.solve(c4))[0] == "written"
    assert table.put(ttt, TTT.solve(ttt))[0] == "written"
    got = table.get(ttt)
    assert got is not None and fields(got) == fields(TTT.solve(ttt))
    assert table.size(game=C4.name) == table.size(game=TTT.name) == 1


def test_an_entry_that_is_not_a_solution_reads_as_missing(store: ModelStore):
    table = store.proved()
    state = C4.parse_moves(LATE)
    key, _ = state.canonical()
    client = store._redis  # what another program, or damage, could have left there
    for wrong in ("garbage", "38:5:w:17", "38:5:x:17,39:1:w:2", ""):
        client.hset(store.keys.proved(C4.name), str(key), wrong)
        assert table.get(state) is None, wrong


# -- the servers' local index of the table ----------------------------------------------

def states_of(moves: str, plies: range) -> list:
    return [C4.parse_moves(moves[:n]) for n in plies]


def test_the_index_holds_what_was_written_and_nothing_else(store: ModelStore):
    table = store.proved()
    held = states_of(GAME, range(26, 40, 2))
    for state in held:
        table.put(state, C4.solve(state))
    index = ProvedIndex(table, C4.name)
    assert not index.ready and index.might_hold(1)  # unread: everything may be held
    index.refresh()
    assert index.ready and index.read == len(held)
    assert all(index.might_hold(s.canonical()[0]) for s in held)
    others = [C4.parse_moves(GAME[:n]) for n in range(1, 26)]
    assert not any(index.might_hold(s.canonical()[0]) for s in others)
    later = C4.parse_moves(GAME[:41])
    table.put(later, C4.solve(later))
    assert not index.might_hold(later.canonical()[0])  # not read yet: a miss, not an error
    index.refresh()
    assert index.might_hold(later.canonical()[0]) and index.read == len(held) + 1


def test_the_index_reads_a_large_table_in_chunks(store: ModelStore, monkeypatch):
    monkeypatch.setattr(proved, "INDEX_CHUNK", 3)
    table = store.proved()
    held = states_of(GAME, range(26, 40))
    for state in held:
        table.put(state, C4.solve(state))
    index = ProvedIndex(table, C4.name)
    reads = 0
    while not index.ready:
        index.refresh()
        reads += 1
    assert reads == 5 and all(index.might_hold(s.canonical()[0]) for s in held)


def test_the_index_reads_a_cleared_table_anew(store: ModelStore):
    table = store.proved()
    first, second = C4.parse_moves(GAME[:28]), C4.parse_moves(GAME[:30])
    table.put(first, C4.solve(first))
    index = ProvedIndex(table, C4.name)
    index.refresh()
    table.clear(game=C4.name)
    assert store._redis.exists(store.keys.proved_keys(C4.name)) == 0
    index.refresh()  # shorter than what was read: start again
    assert not index.ready and index.read == 0
    table.put(second, C4.solve(second))
    index.refresh()
    assert index.ready and index.might_hold(second.canonical()[0])
    assert not index.might_hold(first.canonical()[0])


def test_a_table_written_without_its_keys_is_mended(store: ModelStore):
    """A table written before the list of keys existed (or by an older server) has fields
    the list lacks: the index notices, the list is made again from the table, and every
    position is indexed."""
    table = store.proved()
    old = states_of(GAME, range(28, 34, 2))
    for state in old:  # as an older server wrote: the hash alone
        key, sym = state.canonical()
        store._redis.hset(store.keys.proved(C4.name), str(key),
                          proved.encode(state, sym, C4.solve(state)))
    new = C4.parse_moves(GAME[:36])
    table.put(new, C4.solve(new))  # the list holds this one only
    index = ProvedIndex(table, C4.name)
    index.refresh()
    assert not index.ready  # the list does not match the table: mended
    assert store._redis.llen(store.keys.proved_keys(C4.name)) == 4
    index.refresh()
    assert index.ready and all(index.might_hold(s.canonical()[0]) for s in [*old, new])
    assert table.rebuild_keys(game=C4.name) == 4  # whole now: left alone


def test_entries_go_in_and_come_out_as_stored_each_as_put_would(store: ModelStore):
    """A book file's way in and out (``put_entries``, ``entries``): by key, held positions
    keep theirs, none past the bound, and the index's list of keys grows with them."""
    table = store.proved(max_entries=3)
    states = [C4.parse_moves(GAME[:n]) for n in (30, 32, 34, 36)]
    rows = []
    for state in states:
        key, sym = state.canonical()
        rows.append((key, proved.encode(state, sym, C4.solve(state))))
    table.put(states[0], C4.solve(states[0]))
    assert table.put_entries("connect-four", rows) == {"written": 2, "held": 1, "full": 1}
    assert table.entries(game="connect-four") == sorted(rows[:3])
    assert table.keys_since("connect-four", 0, 10).length == 3
    for state in states[:3]:
        assert fields(table.get(state)) == fields(C4.solve(state))
