"""The n-tuple network model: each numba kernel against a plain-Python reference, the
artifact's round trip and its refusal of damage."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gameai.games import get_game
from gameai.games.mnk.board import Board
from gameai.models import CorruptModel, ModelInfo, NtupleModel, load_model
from gameai.models.container import decode, encode
from gameai.models.ntuple import build_net, ensemble, parse_patterns, random_walks
from gameai.models.ntuple_kernels import (
    afterstate_delta,
    afterstate_sum,
    cell_states,
    read_weights,
    set_cell,
    set_cell_cur,
    total,
    tuple_indices,
)

GAMES = ("tictactoe", "four-in-a-row", "connect-4x5-4", "connect-four")


def _model(name: str, *, tuples: int = 5, length: int = 4, seed: int = 3,
           states: int | None = None, sides: int = 1) -> NtupleModel:
    game = get_game(name)
    states = states or (4 if game.gravity else 3)
    cells = random_walks(game, tuples, length, seed)
    rng = np.random.default_rng(seed)
    weights = rng.normal(scale=0.3, size=(sides * tuples, states ** length)).astype(np.float32)
    return NtupleModel(game, ModelInfo(game=game.name, algorithm="ntuple"), tuples=cells,
                       weights=weights)


# -- plain-Python references ----------------------------------------------------------------

def ref_states(game, mine: int, theirs: int, states: int) -> list[int]:
    occupied = mine | theirs
    out = []
    for c in range(game.cells):
        if mine >> c & 1:
            out.append(1)
        elif theirs >> c & 1:
            out.append(2)
        elif states == 4 and not occupied >> c & 1 and (
                c >= game.cells - game.cols or occupied >> (c + game.cols) & 1):
            out.append(3)
        else:
            out.append(0)
    return out


def ref_sum(model: NtupleModel, mine: int, theirs: int, side: int = 0) -> float:
    """Every tuple under every symmetry, read from scratch, from the tables of ``side`` (the
    owner of ``mine``: 0 X, 1 O) when the model has one set a side."""
    game = model.game
    cells = ref_states(game, mine, theirs, model.states)
    first = side * len(model.tuples) if model.weights.shape[0] > len(model.tuples) else 0
    s = 0.0
    for perm in game.symmetries:
        for t, row in enumerate(model.tuples.tolist()):
            index = sum(cells[perm[c]] * model.states ** j for j, c in enumerate(row))
            s += float(model.weights[first + t, index])
    return s


def _side(board: Board) -> int:
    return 0 if board.to_move == "X" else 1


def ref_values(model: NtupleModel, board: Board) -> list[float | None]:
    mine, theirs = (board.x, board.o) if board.to_move == "X" else (board.o, board.x)
    out: list[float | None] = [None] * model.game.cells
    for c in board.legal_moves():
        after = board.play(c)
        if after.winner() is not None:
            out[c] = 1.0
        elif after.is_full():
            out[c] = 0.0
        else:
            out[c] = float(np.tanh(ref_sum(model, mine | 1 << c, theirs, _side(board))))
    return out


def random_board(game, rng) -> Board:
    while True:
        board = game.initial()
        for _ in range(int(rng.integers(0, game.cells))):
            if board.is_over():
                break
            moves = board.legal_moves()
            board = board.play(moves[int(rng.integers(len(moves)))])
        if not board.is_over():
            return board


# -- kernels ------------------------------------------------------------------------------

@pytest.mark.parametrize("sides", [1, 2])
@pytest.mark.parametrize("name", GAMES)
def test_kernels_match_the_reference(name, sides):
    model = _model(name, sides=sides)
    game, net = model.game, model.net
    rng = np.random.default_rng(5)
    for _ in range(40):
        board = random_board(game, rng)
        mine, theirs = (board.x, board.o) if board.to_move == "X" else (board.o, board.x)
        side = _side(board)
        W = model.tables[side % sides]
        states = np.empty(game.cells, np.int64)
        cell_states(net, np.uint64(mine), np.uint64(theirs), states)
        assert states.tolist() == ref_states(game, mine, theirs, model.states)
        idx = np.empty(net.pt_cells.shape[0], np.int64)
        tuple_indices(net, states, idx)
        base = total(net, W, idx)
        assert base == pytest.approx(ref_sum(model, mine, theirs, side), abs=1e-4)
        cur = np.empty(len(idx), np.float32)  # the learner's path: one read a tuple
        assert read_weights(net, W, idx, cur) == pytest.approx(base, abs=1e-5)
        pend, touched = np.zeros(len(idx), np.int64), np.empty(len(idx), np.int64)
        for c in board.legal_moves():
            before = (idx.copy(), states.copy(), cur.copy())
            after = afterstate_sum(net, W, idx, states, base, c)
            assert np.array_equal(idx, before[0]) and np.array_equal(states, before[1])
            assert after == pytest.approx(ref_sum(model, mine | 1 << c, theirs, side), abs=1e-4)
            delta = afterstate_delta(net, W, idx, cur, states, c, pend, touched)
            assert base + delta == pytest.approx(after, abs=1e-4)
            assert np.array_equal(idx, before[0]) and np.array_equal(states, before[1])
            assert np.array_equal(cur, before[2]) and not pend.any()
        got = model.evaluate(board)
        want = ref_values(model, board)
        for mv in got.moves:
            assert mv.value == pytest.approx(want[mv.index], abs=1e-5)
            assert not mv.unknown
        assert [mv.index for mv in got.moves if want[mv.index] is None] == []


def test_set_cell_is_an_exact_incremental_update():
    model = _model("connect-four", tuples=8, length=6)
    game, net = model.game, model.net
    states = np.zeros(game.cells, np.int64)
    idx = np.empty(net.pt_cells.shape[0], np.int64)
    tuple_indices(net, states, idx)
    running = total(net, model.weights, idx)
    rng = np.random.default_rng(2)
    for _ in range(200):
        cell, state = int(rng.integers(game.cells)), int(rng.integers(4))
        running += set_cell(net, model.weights, idx, states, cell, state)
        fresh = np.empty_like(idx)
        tuple_indices(net, states, fresh)
        assert np.array_equal(idx, fresh)
        assert running == pytest.approx(total(net, model.weights, fresh), abs=1e-3)


def test_set_cell_cur_keeps_each_tuples_weight():
    model = _model("connect-four", tuples=8, length=6)
    game, net = model.game, model.net
    states = np.zeros(game.cells, np.int64)
    idx = np.empty(net.pt_cells.shape[0], np.int64)
    tuple_indices(net, states, idx)
    cur = np.empty(len(idx), np.float32)
    running = read_weights(net, model.weights, idx, cur)
    rng = np.random.default_rng(4)
    for _ in range(200):
        cell, state = int(rng.integers(game.cells)), int(rng.integers(4))
        running += set_cell_cur(net, model.weights, idx, cur, states, cell, state)
        fresh = np.empty_like(idx)
        tuple_indices(net, states, fresh)
        assert np.array_equal(idx, fresh)
        assert cur.tolist() == [float(model.weights[net.pt_table[p], fresh[p]])
                                for p in range(len(fresh))]
        assert running == pytest.approx(total(net, model.weights, fresh), abs=1e-3)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_symmetric_boards_get_symmetric_values(seed):
    model = _model("four-in-a-row", seed=seed % 7)
    game = model.game
    board = random_board(game, np.random.default_rng(seed))
    values = model.move_values([board])[0]

    for s, perm in enumerate(game.symmetries):
        image = model.move_values([board.transformed(s)])[0]
        for c in range(game.cells):
            assert np.isnan(values[c]) == np.isnan(image[perm[c]])
            if not np.isnan(values[c]):
                assert image[perm[c]] == pytest.approx(values[c], abs=1e-5)


def test_batch_and_board_answers_agree():
    model = _model("four-in-a-row")
    rng = np.random.default_rng(9)
    boards = [random_board(model.game, rng) for _ in range(30)]
    batch = model.game.parse_batch([str(b) for b in boards])
    by_batch = model.batch_values(batch)
    by_masks = model.move_values_of_masks(*batch.masks)
    assert np.array_equal(by_batch, by_masks, equal_nan=True)
    for board, row in zip(boards, by_batch, strict=True):
        assert model.best_move(board).index == int(np.nanargmax(row))


# -- the artifact -------------------------------------------------------------------------

@pytest.mark.parametrize("sides", [1, 2])
@pytest.mark.parametrize("name", GAMES)
def test_round_trip_is_exact(name, sides):
    model = _model(name, sides=sides)
    data = model.to_bytes()
    back = load_model(data)
    assert isinstance(back, NtupleModel)
    assert np.array_equal(back.tuples, model.tuples)
    assert np.array_equal(back.weights, model.weights)
    assert back.states == model.states and back.sides == sides
    assert back.to_bytes() == data
    board = random_board(model.game, np.random.default_rng(1))
    assert back.evaluate(board) == model.evaluate(board)


def _forged(model: NtupleModel, **arrays) -> bytes:
    container = decode(model.to_bytes())
    return encode(container.metadata, {**container.arrays, **arrays})


@pytest.mark.parametrize(("change", "message"), [
    ({"tuples": np.array([[0, 1, 2, 99]] * 5, np.int16)}, "outside"),
    ({"tuples": np.array([[0, 1, 1, 2]] * 5, np.int16)}, "twice"),
    ({"weights": np.zeros((5, 80), np.float32)}, "fit neither"),
    ({"weights": np.zeros((4, 81), np.float32)}, "do not match"),
    ({"weights": np.zeros((15, 81), np.float32)}, "one or two per tuple"),
    ({"weights": np.full((5, 81), np.nan, np.float32)}, "finite"),
    ({"weights": np.zeros((5, 256), np.float32)}, "gravity games"),
    ({"tuples": np.zeros((0, 4), np.int16), "weights": np.zeros((0, 81), np.float32)},
     "at least one"),
])
def test_damage_is_refused(change, message):
    model = _model("four-in-a-row")
    with pytest.raises(CorruptModel, match=message):
        load_model(_forged(model, **change))


def test_a_missing_array_is_refused():
    model = _model("four-in-a-row")
    container = decode(model.to_bytes())
    data = encode(container.metadata, {"tuples": container.arrays["tuples"]})
    with pytest.raises(CorruptModel, match="lacks the array"):
        load_model(data)


def test_patterns_and_walks():
    game = get_game("four-in-a-row")
    walks = random_walks(game, 10, 6, seed=4)
    assert walks.shape == (10, 6)
    assert np.array_equal(walks, random_walks(game, 10, 6, seed=4))
    for row in walks.tolist():
        assert len(set(row)) == 6
        for a, b in itertools.pairwise(row):  # neighbours: a king's step
            assert max(abs(a // 4 - b // 4), abs(a % 4 - b % 4)) == 1
    assert parse_patterns(game, "0,1,2,3; 4,5,6,7").tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    for bad, message in [("0,1;2", "same length"), ("a,b", "numbers"), ("0,16", "outside"),
                         ("", "at least one")]:
        with pytest.raises(ValueError, match=message):
            parse_patterns(game, bad)
    with pytest.raises(ValueError, match="does not fit"):
        random_walks(game, 1, 17, seed=0)
    net = build_net(game, walks, 3)
    assert net.pt_cells.shape == (80, 6)  # 10 tuples under 8 symmetries


# -- search -------------------------------------------------------------------------------

NET_SCALE, WIN_STEP = 0.95, 1e-3


def ref_search(model: NtupleModel, board: Board, depth: int, ply: int = 1) -> list:
    """Plain minimax without pruning: each legal move's value for the side to move."""
    out = [None] * model.game.cells
    mine, theirs = (board.x, board.o) if board.to_move == "X" else (board.o, board.x)
    for c in board.legal_moves():
        after = board.play(c)
        if after.winner() is not None:
            out[c] = 1.0 - WIN_STEP * (ply - 1)
        elif after.is_full():
            out[c] = 0.0
        elif depth == 0:
            if any(after.play(r).winner() is not None for r in after.legal_moves()):
                out[c] = -(1.0 - WIN_STEP * ply)
            else:
                out[c] = NET_SCALE * float(np.tanh(ref_sum(model, mine | 1 << c, theirs,
                                                           _side(board))))
        else:
            out[c] = -max(v for v in ref_search(model, after, depth - 1, ply + 1)
                          if v is not None)
    return out


@pytest.mark.parametrize("sides", [1, 2])
@pytest.mark.parametrize(("name", "depth"), [("tictactoe", 3), ("four-in-a-row", 2),
                                             ("connect-4x5-4", 2), ("connect-four", 1)])
def test_search_matches_plain_minimax(name, depth, sides):
    model = _model(name, sides=sides)
    rng = np.random.default_rng(11)
    for _ in range(6):
        board = random_board(model.game, rng)
        for d in range(depth + 1):
            want = ref_search(model, board, d)
            got = model.search(board, d)
            assert got.to_move == board.to_move
            for mv in got.moves:
                assert mv.value == pytest.approx(want[mv.index], abs=1e-4), (str(board), d)
            assert [m.value for m in got.moves] == sorted((m.value for m in got.moves),
                                                          reverse=True)


@pytest.mark.parametrize(("name", "depth", "most_empty"), [("four-in-a-row", 4, 9),
                                                           ("connect-4x5-4", 5, 20),
                                                           ("tictactoe", 5, 9)])
def test_deep_searches_match_plain_minimax(name, depth, most_empty):
    """Deeper than the other reference test, where the move ordering by value and the
    taken-back totals do most: every move's value equals plain minimax's, on boards small
    enough to check."""
    model = _model(name, sides=2)
    rng = np.random.default_rng(17)
    checked = 0
    while checked < 4:
        board = random_board(model.game, rng)
        if model.game.cells - board.ply > most_empty:
            continue
        want = ref_search(model, board, depth)
        got = model.search(board, depth)
        for mv in got.moves:
            assert mv.value == pytest.approx(want[mv.index], abs=1e-4), (str(board), depth)
        checked += 1


@pytest.mark.parametrize(("name", "depths"), [("four-in-a-row", (0, 1, 2, 3, 4)),
                                              ("connect-4x5-4", (1, 3, 5)),
                                              ("mnk-4x5-4", (2, 4))])
def test_best_only_finds_the_full_searchs_best_move_and_value(name, depths):
    """The narrowed root window of ``best_only`` answers the same move (ties broken the
    same way) with the same value as the search that values every move exactly; on a
    network with few distinct weights, so that ties happen."""
    model = _model(name, sides=2)
    coarse = _model(name, sides=2)
    coarse.weights[:] = np.round(coarse.weights * 2) / 2  # many equal afterstate values
    rng = np.random.default_rng(23)
    ties = 0
    for net in (model, coarse):
        for _ in range(12):
            board = random_board(net.game, rng)
            for depth in depths:
                full = net.search(board, depth)
                best = net.search(board, depth, best_only=True)
                assert len(best.moves) == 1
                assert (best.best.index, best.value) == (full.best.index, full.value), (
                    str(board), depth)
                ties += sum(mv.value == full.value for mv in full.moves) > 1
    assert ties  # the tie-break was exercised


def test_search_takes_a_win_and_blocks_a_loss_even_at_depth_zero():
    model = _model("connect-four")
    model.weights[:] = 0.9  # a network that likes everything
    game = model.game
    # X to move: X wins at column 3 (cell 38 + ... bottom row 35-41); O threatens too
    board = game.parse("-------|-------|-------|-------|-------|XXX-OOO")
    assert board.to_move == "X"
    assert model.search(board, 0).best.index == 38
    # O to move after X's three in the bottom row: O must block at cell 38
    block = game.parse("-------|-------|-------|-------|----O--|XXX-OOX")
    assert block.to_move == "O"
    e = model.search(block, 0)
    assert e.best.index == 38
    assert all(mv.value < -0.99 for mv in e.moves if mv.index != 38)
    with pytest.raises(ValueError, match="at least 0"):
        model.search(board, -1)


@pytest.mark.parametrize(("name", "depth", "cells", "deeper"),
                         [("mnk-4x5-4", 2, 13, 4), ("connect-four", 3, 12, 6)])
def test_the_default_depth_goes_deeper_near_the_end_where_the_game_says(name, depth, cells,
                                                                        deeper):
    """mnk-4x5-4's default depth 2 searches 4 plies with 13 cells or fewer left, Connect
    Four's depth 3 6 plies with 12 or fewer, on one board and in a batch; an explicit
    other depth, and other games, as asked."""
    from gameai.models.ntuple import ENDGAME_DEPTH

    model = _model(name)
    assert model.default_depth == depth and ENDGAME_DEPTH[name] == (cells, deeper)
    rng = np.random.default_rng(5)
    boards = {}
    while len(boards) < 2:
        board = random_board(model.game, rng)
        late = model.game.cells - board.ply <= cells
        # a late board whose values the two depths tell apart (many are decided at both)
        if not late or _kernel(model, board, deeper) != _kernel(model, board, depth):
            boards[late] = board
    late, early = boards[True], boards[False]
    assert _values(model.search(late, depth)) == _kernel(model, late, deeper)
    assert _values(model.search(early, depth)) == _kernel(model, early, depth)
    assert _values(model.search(late, depth + 1)) == _kernel(model, late, depth + 1)
    rows = model.with_search(depth).move_values([late, early])
    for row, board, plies in ((rows[0], late, deeper), (rows[1], early, depth)):
        want = _kernel(model, board, plies)
        assert {c: float(row[c]) for c in want} == pytest.approx(want)
    other = _model("connect-4x5-4")
    board = random_board(other.game, rng)
    depth = other.default_depth
    assert _values(other.search(board, depth)) == _kernel(other, board, depth)


def _values(e) -> dict[int, float]:
    return {mv.index: mv.value for mv in e.moves}


def _kernel(model: NtupleModel, board: Board, plies: int) -> dict[int, float]:
    """Each legal move's value by the kernel's search ``plies`` deep, whatever the game's
    rule for its depth."""
    from gameai.models.ntuple_kernels import search_values

    row = np.empty(model.game.cells, dtype=np.float32)
    search_values(model.net, model.tables, np.uint64(board.x), np.uint64(board.o), plies, row,
                  False, np.zeros(2, np.int64))
    return {c: float(row[c]) for c in board.legal_moves()}


def test_a_search_within_a_budget_stops_at_the_deepest_finished_depth():
    """Iterative deepening under a node budget: the answer is the full search's at the
    depth it reached, the nodes it reports are within the budget plus the one abandoned
    depth, and a depth that cannot finish is never half-used."""
    from gameai.games import get_game

    model = _model("connect-four", tuples=8, length=6)
    board = get_game("connect-four").parse_moves("4453")
    unlimited, report = model.search_within(board, 4)
    assert report.complete and report.depth == 4
    assert unlimited == model.search(board, 4)
    nodes = report.nodes
    small, cut = model.search_within(board, 4, nodes=nodes // 20)
    assert not cut.complete and cut.depth < 4
    assert small == model.search(board, cut.depth)
    assert cut.nodes < nodes
    none, zero = model.search_within(board, 4, seconds=0.0)
    assert zero.depth == 0 and none == model.search(board, 0)


def test_a_search_without_a_budget_is_one_search_at_its_depth():
    """No node or time budget: the one search at the depth asked, its nodes counted
    (deepening from 0 would cost the shallower depths' nodes for the same answer)."""
    model = _model("connect-four", tuples=8, length=6)
    board = get_game("connect-four").parse_moves("4453")
    answer, report = model.search_within(board, 3)
    assert answer == model.search(board, 3)
    _, deepened = model.search_within(board, 3, nodes=10 ** 9)
    assert deepened.depth == 3 and deepened.complete
    assert 0 < report.nodes < deepened.nodes  # the budgeted one searched depths 0-2 first


def test_a_search_that_sees_every_line_end_is_exact():
    """Values are the game's outcomes only where the search reaches a full board on every
    line: 3 empty cells, depth 2 sees the end (3 plies), depth 1 does not."""
    model = _model("tictactoe")
    board = get_game("tictactoe").parse("XOX|XOO|---")
    _, deep = model.search_within(board, 2)
    _, shallow = model.search_within(board, 1)
    _, cut = model.search_within(board, 2, nodes=1)
    assert deep.exact and not shallow.exact
    assert not cut.complete and not cut.exact


# -- ensembles ----------------------------------------------------------------------------

@pytest.mark.parametrize("sides", [1, 2])
@pytest.mark.parametrize("same_tuples", [True, False])
def test_an_ensemble_values_each_afterstate_by_its_members_mean_sum(same_tuples, sides):
    """Every move's value is tanh of the mean of the members' sums (read by the plain
    reference); members of the same tuples are averaged weight by weight (no more tuples
    than one member), others put side by side."""
    game = get_game("connect-4x5-4")
    members = [_model(game.name, tuples=4, seed=seed, sides=sides) for seed in (3, 4, 5)]
    if same_tuples:
        members = [NtupleModel(game, m.info, tuples=members[0].tuples, weights=m.weights)
                   for m in members]
    joined = ensemble(members, ModelInfo(game=game.name, algorithm="ntuple"))
    assert len(joined.tuples) == (4 if same_tuples else 12)
    rng = np.random.default_rng(7)
    for _ in range(20):
        board = random_board(game, rng)
        mine, theirs = (board.x, board.o) if board.to_move == "X" else (board.o, board.x)
        got = {m.action_id: m.value for m in joined.evaluate(board).moves}
        for c in board.legal_moves():
            after = board.play(c)
            if after.winner() is not None or after.is_full():
                continue
            sums = [ref_sum(m, mine | 1 << c, theirs, _side(board)) for m in members]
            assert got[c] == pytest.approx(np.tanh(np.mean(sums)), abs=1e-5)


def test_an_ensemble_refuses_networks_that_do_not_fit_together():
    info = ModelInfo(game="connect-4x5-4", algorithm="ntuple")
    one = _model("connect-4x5-4", tuples=4)
    for other, what in ((_model("connect-4x5-4", tuples=4, length=5), "tuple length"),
                        (_model("connect-4x5-4", tuples=4, sides=2), "sides"),
                        (_model("connect-4x5-4", tuples=4, states=3), "cell states"),
                        (_model("mnk-4x5-4", tuples=4), "game")):
        with pytest.raises(ValueError, match=f"members differ in {what}"):
            ensemble([one, other], info)
    with pytest.raises(ValueError, match="at least one network"):
        ensemble([], info)
