"""The alpha-beta solver against plain references: a plain-Python negamax over every
position of small boards (gravity and not), the layered table solver on connect-4x5-4, and
the numba helpers against their Python definitions."""

from __future__ import annotations

import random
from functools import cache

import numpy as np
import pytest

from gameai.games import Game, GameOver, get_game
from gameai.games.mnk import search_kernel as kern
from gameai.games.mnk.board import Board
from gameai.games.mnk.game import MnkGame
from gameai.games.mnk.positions import enumerate_positions
from gameai.games.mnk.search import (
    FIRST_SLICE,
    Searcher,
    SearchTimeout,
    supports,
    to_external,
)
from gameai.games.mnk.solver import score_layers, solve


def reference_scores(game: MnkGame) -> dict[tuple[int, int], int]:
    """Plain negamax, memoised, over every position reachable from the empty board:
    ``(x, o) -> score`` in the ``big - t`` convention (0 for a draw)."""
    memo: dict[tuple[int, int], int] = {}

    def negamax(board: Board) -> int:
        key = (board.x, board.o)
        if key not in memo:
            best = None
            for move in board.legal_moves():
                child = board.play(move)
                if child.winner() is not None:
                    score = game.big - 1
                elif child.is_full():
                    score = 0
                else:
                    v = -negamax(child)
                    score = v - 1 if v > 0 else v + 1 if v < 0 else 0
                best = score if best is None else max(best, score)
            memo[key] = best if best is not None else 0
        return memo[key]

    negamax(game.initial())
    return memo


@cache
def reference(name: str) -> dict[tuple[int, int], int]:
    return reference_scores(get_game(name))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["connect-4x4-3", "connect-3x4-3", "mnk-3x4-3", "tictactoe",
                                  "connect-4x4-4"])
def test_every_position_scores_as_plain_negamax(name):
    game = get_game(name)
    searcher = Searcher(game, tt_bits=16)
    ref = reference(name)
    live = [(x, o) for (x, o) in ref if not Board(game, x, o).is_over()]
    assert len(live) > 100
    for x, o in live:
        assert searcher.score(Board(game, x, o)) == ref[(x, o)], Board(game, x, o)


def _move_score(game: MnkGame, ref: dict[tuple[int, int], int], board: Board, move: int) -> int:
    child = board.play(move)
    if child.winner() is not None:
        return game.big - 1
    if child.is_full():
        return 0
    v = -ref[(child.x, child.o)]
    return v - 1 if v > 0 else v + 1 if v < 0 else 0


@pytest.mark.parametrize("name", ["connect-4x4-3", "mnk-3x4-3"])
def test_every_move_scores_as_plain_negamax(name):
    game = get_game(name)
    searcher = Searcher(game, tt_bits=16)
    ref = reference(name)
    rng = random.Random(7)
    live = [k for k in ref if not Board(game, *k).is_over()]
    for x, o in rng.sample(live, 300):
        board = Board(game, x, o)
        solution = searcher.solve(board)
        for m in solution.moves:
            assert m.score == _move_score(game, ref, board, m.move), (board, m)
        assert solution.moves[0].score == ref[(x, o)]
        assert {m.move for m in solution.moves} == set(board.legal_moves())


@pytest.mark.parametrize("name", ["connect-4x4-3", "mnk-3x4-3", "connect-3x4-3"])
def test_optimal_and_non_losing_moves_as_plain_negamax(name):
    """Live positions (every one of the two gravity boards, 20,000 of mnk-3x4-3's 79,563,
    drawn with a fixed seed: the whole board took 40 s of a slow CI core): the moves a
    perfect player draws among (the best score), the moves that do not lose and the moves
    that win (however slowly), each settled by one null-window search, as plain negamax
    says."""
    import random

    game = get_game(name)
    searcher = Searcher(game, tt_bits=16)
    ref = reference(name)
    live = [k for k in ref if not Board(game, *k).is_over()]
    if len(live) > 25_000:
        live = random.Random(0).sample(live, 20_000)
    for x, o in live:
        board = Board(game, x, o)
        scores = {m: _move_score(game, ref, board, m) for m in board.legal_moves()}
        best = max(scores.values())
        assert searcher.optimal_moves(board) == (
            best, tuple(sorted(m for m, s in scores.items() if s == best))), board
        assert searcher.non_losing_moves(board) == tuple(
            sorted(m for m, s in scores.items() if s >= 0)), board
        assert searcher.winning_moves(board) == tuple(
            sorted(m for m, s in scores.items() if s > 0)), board


def _out_of_time(ask: str) -> tuple[Searcher, Board, SearchTimeout]:
    """A fresh searcher's ``ask`` (a method name) on Connect Four after "4453", given 0.05
    s: the searcher, the board and the timeout it raised."""
    board = get_game("connect-four").parse_moves("4453")
    searcher = Searcher(board.game, tt_bits=18)
    with pytest.raises(SearchTimeout) as caught:
        getattr(searcher, ask)(board, time_limit=0.05)
    return searcher, board, caught.value


def test_a_games_forced_wins_by_search_are_its_solutions_wins():
    """Connect Four's ``forced_win_actions`` (null-window searches) against the interface's
    own (every move's exact outcome from :meth:`Game.solve`), on positions of random games
    late enough to solve quickly: some with no win, some with a win only slower than the
    fastest."""
    game = get_game("connect-four")
    rng = random.Random(11)
    kinds = set()
    for _ in range(40):
        state = game.initial()
        while state.ply < 22 and not state.is_over():
            state = state.play(rng.choice(state.legal_actions()))
        if state.is_over():
            continue
        solution = game.solve(state)
        expected = Game.forced_win_actions(game, state)
        assert game.forced_win_actions(state) == expected, state
        kinds.add((bool(expected), len(expected) > len(solution.optimal_moves)))
    assert {(False, False), (True, True)} <= kinds


def test_optimal_moves_out_of_time_say_what_they_know():
    _, board, timeout = _out_of_time("optimal_moves")
    bounds = timeout.partial.moves
    assert {mb.move for mb in bounds} == set(board.legal_moves())
    assert all(mb.lower <= mb.upper for mb in bounds)
    assert "not settled within 0.05 s" in str(timeout)
    game = board.game
    # on Connect Four the interface asks the search, which agrees with the full solution
    easy = game.parse_moves("44444433333")
    assert game.optimal_actions(easy) == tuple(sorted(game.solve(easy).optimal_moves))


def test_a_sample_of_connect_4x5_4_scores_as_the_table_solver():
    """The layered table solver is an independent exact reference (a numpy backward pass
    over all 1,974,174 canonical positions)."""
    game = get_game("connect-4x5-4")
    positions = enumerate_positions(game.initial())
    scores = score_layers(positions)
    searcher = Searcher(game, tt_bits=20)
    rng = np.random.default_rng(3)
    checked = 0
    for layer, layer_scores in zip(positions.layers, scores, strict=True):
        live = np.flatnonzero(~layer.over)
        for i in rng.choice(live, size=min(len(live), 150), replace=False) if len(live) else []:
            board = Board(game, int(layer.x[i]), int(layer.o[i]))
            assert searcher.score(board) == layer_scores[i], board
            checked += 1
    assert checked > 2000


def test_the_kernel_batch_agrees_with_one_at_a_time():
    game = get_game("connect-4x4-3")
    searcher = Searcher(game, tt_bits=16)
    ref = reference("connect-4x4-3")
    boards = [Board(game, x, o) for x, o in ref if not Board(game, x, o).is_over()][:500]
    enc = [searcher.encode(b) for b in boards]
    curs = np.array([e[0] for e in enc], dtype=np.uint64)
    masks = np.array([e[1] for e in enc], dtype=np.uint64)
    plies = np.array([e[2] for e in enc], dtype=np.int64)
    out = np.zeros(len(boards), dtype=np.int64)
    kern.solve_many(curs, masks, plies, searcher.geo, searcher.tt, searcher.stats, out)
    got = [to_external(int(s), int(p)) for s, p in zip(out, plies, strict=True)]
    assert got == [ref[(b.x, b.o)] for b in boards]


@pytest.mark.parametrize("name", ["connect-four", "mnk-4x5-4", "connect-5x4-3", "mnk-3x3-2"])
def test_winning_cells_match_the_games_lines(name):
    """The shift formulas (Pons's for k=4, the general one otherwise) against the lines."""
    game = get_game(name)
    searcher = Searcher(game, tt_bits=10)
    rng = random.Random(name)
    for _ in range(300):
        stones = {i for i in range(game.cells) if rng.random() < 0.3}
        bits = sum(searcher.cell_bit[i] for i in stones)
        got = kern.winning_cells(np.uint64(bits), searcher.board_mask, game.k, searcher.shifts)
        expected = set()
        for line in game.lines:
            cells = {i for i in range(game.cells) if line >> i & 1}
            missing = cells - stones
            if len(missing) <= 1:
                expected |= missing or cells
        assert {searcher.bit_cell[b] for b in range(64) if int(got) >> b & 1} == expected


def test_connect_four_known_positions():
    game = get_game("connect-four")
    # a full centre column and five stones in column 3: O must play column 2 or 5
    solution = solve(game.parse_moves("44444433333"))
    assert solution.outcome == "loss" and solution.distance == 30
    assert {m.col + 1 for m in solution.moves if m.optimal} == {2, 5}
    # X has three in the bottom row with both ends open: it wins at once at either end
    won = solve(game.parse_moves("445566"))
    assert won.outcome == "win" and won.distance == 1
    assert {m.col + 1 for m in won.moves if m.optimal} == {3, 7}


def test_mnk_4x5_4_empty_board_is_a_draw():
    """Published (seed 004): the 4x5 board with 4 in a row is a draw; every opening draws."""
    solution = solve(get_game("mnk-4x5-4").initial())
    assert solution.outcome == "draw" and all(m.outcome == "draw" for m in solution.moves)


def test_a_time_limit_says_what_it_proved_and_resumes():
    searcher, board, timeout = _out_of_time("solve")
    game = board.game
    partial = timeout.partial
    assert {mb.move for mb in partial.moves} == set(board.legal_moves())
    assert not all(mb.exact for mb in partial.moves)
    assert "not solved within 0.05 s" in str(timeout)
    assert partial.seconds < 5
    # the table it filled stays: a later, easier question on the same searcher is exact
    easy = game.parse_moves("44444433333")
    assert searcher.solve(easy).distance == 30


def test_a_budget_of_milliseconds_is_not_overrun_by_a_first_slice():
    """The server's exact play gives the search a few milliseconds: the first slice of
    nodes is sized to the deadline (it once ran 100,000 nodes, 25 ms, whatever the limit)."""
    game = get_game("connect-four")
    searcher = Searcher(game, tt_bits=16)  # new: no rate measured yet
    with pytest.raises(SearchTimeout) as caught:
        searcher.solve(game.parse_moves("4453"), time_limit=0.001)
    assert caught.value.partial.nodes < FIRST_SLICE


def test_an_outer_immediate_win_is_proved_however_small_the_budget():
    """Moves that end the game are settled before the centre-first search: X's win in
    column 1 after "121212" is exact even when the budget runs out on the first searched
    move (it was left unknown: the search breaks off at the first move out of time)."""
    game = get_game("connect-four")
    board = game.parse_moves("121212")
    with pytest.raises(SearchTimeout) as caught:
        Searcher(game, tt_bits=16).solve(board, time_limit=1e-6)
    win = next(mb for mb in caught.value.partial.moves if mb.move == board.legal_moves()[0])
    assert win.exact and win.lower == game.big - 1  # a win on the next ply


def test_finished_boards_and_other_games_are_refused():
    game = get_game("connect-four")
    with pytest.raises(GameOver):
        Searcher(game, tt_bits=10).solve(game.parse_moves("4455667"))
    assert not supports(get_game("mnk-8x8-5"))  # 9 x 8 bits do not fit in one word
    assert not supports(get_game("three-mens-morris"))


class ReferenceTable:
    """The transposition table's bucket policy in plain Python: buckets of two slots; a
    position already held is narrowed in place; a new one takes the first slot when it is
    at most as deep as the position there (which moves to the second), else the second.
    A slot written in an older epoch is empty."""

    def __init__(self, bits: int) -> None:
        self.size = 1 << bits
        self.slots: list[tuple[int, int, int, int, int, int] | None] = [None] * self.size

    def bucket(self, a: int, b: int) -> int:
        m = (1 << 64) - 1
        h = (a * 0x9E3779B97F4A7C15 & m) ^ (b * 0xC2B2AE3D27D4EB4F & m)
        h ^= h >> 29
        return h & (self.size - 1) & ~1

    def held(self, j: int, a: int, b: int, epoch: int) -> tuple[int, ...] | None:
        slot = self.slots[j]
        return slot if slot is not None and slot[:2] == (a, b) and slot[5] == epoch else None

    def probe(self, a: int, b: int, epoch: int) -> tuple[int, int]:
        i = self.bucket(a, b)
        for j in (i, i + 1):
            slot = self.held(j, a, b, epoch)
            if slot is not None:
                return slot[2], slot[3]
        return kern.NO_LOWER, kern.NO_UPPER

    def store(self, a: int, b: int, lo: int, hi: int, ply: int, epoch: int) -> None:
        i = self.bucket(a, b)
        for j in (i, i + 1):
            slot = self.held(j, a, b, epoch)
            if slot is not None:
                self.slots[j] = (a, b, max(lo, slot[2]), min(hi, slot[3]), ply, epoch)
                return
        first = self.slots[i]
        if first is None or first[5] != epoch or ply <= first[4]:
            self.slots[i + 1] = first
            self.slots[i] = (a, b, lo, hi, ply, epoch)
        else:
            self.slots[i + 1] = (a, b, lo, hi, ply, epoch)


@pytest.mark.parametrize("words", [2, 3])
def test_the_table_keeps_buckets_as_the_reference(words):
    """Random stores and probes on a small table (many collisions), over three epochs (a
    cleared table), agree with the plain policy, slot by slot, and a position near the root
    is never pushed out by a deeper one. Three words a slot: the key's second half must
    match too."""
    rng = random.Random(3)
    bits = 6
    tt = np.zeros((1 << bits, words), dtype=np.uint64)
    ref = ReferenceTable(bits)
    keys = [(rng.getrandbits(40), rng.getrandbits(40) if words == 3 else 0)
            for _ in range(150)]
    if words == 3:  # the same first word with another second: a different position
        keys += [(a, b ^ 1) for a, b in keys[:20]]
    ply_of = {k: rng.randrange(42) for k in keys}
    for epoch in (1, 2, 3):
        for _ in range(3000):
            a, b = rng.choice(keys)
            if rng.random() < 0.5:
                lo = rng.randrange(-40, 40)
                hi = rng.randrange(lo, 41)
                kern.store(tt, np.uint64(a), np.uint64(b), np.int64(lo), np.int64(hi),
                           np.int64(ply_of[a, b]), np.uint64(epoch))
                ref.store(a, b, lo, hi, ply_of[a, b], epoch)
            got = kern.probe(tt, np.uint64(a), np.uint64(b), np.uint64(epoch))
            assert (int(got[0]), int(got[1])) == ref.probe(a, b, epoch)
        for i, slot in enumerate(ref.slots):
            if slot is None:
                assert int(tt[i, 1]) == 0 and int(tt[i, 0]) == 0
            else:
                assert int(tt[i, 0]) == slot[0] and (words == 2 or int(tt[i, 2]) == slot[1])
                assert int(tt[i, 1]) >> kern.EPOCH_SHIFT == slot[5]
        live = [s for s in ref.slots if s is not None and s[5] == epoch]
        assert live and all(kern.probe(tt, np.uint64(s[0]), np.uint64(s[1]), np.uint64(epoch))
                            == s[2:4] for s in live)
        # a new epoch: everything reads as empty
        assert all(kern.probe(tt, np.uint64(s[0]), np.uint64(s[1]), np.uint64(epoch + 1))
                   == (kern.NO_LOWER, kern.NO_UPPER) for s in live)
    current = [s for s in ref.slots if s is not None and s[5] == 3]
    firsts = [s for s in ref.slots[::2] if s is not None and s[5] == 3]
    seconds = [s for s in ref.slots[1::2] if s is not None and s[5] == 3]
    assert current and firsts and seconds  # both slots in use
    # a bucket's first slot is never deeper than its second
    pairs = [(f, s) for f, s in zip(ref.slots[::2], ref.slots[1::2], strict=True)
             if f and s and f[5] == s[5] == 3]
    assert pairs and all(f[4] <= s[4] for f, s in pairs)


def _plain_score(board: Board, memo: dict[tuple[int, int], int]) -> int:
    """Plain memoised negamax from ``board`` (``big - t`` convention)."""
    key = (board.x, board.o)
    if key not in memo:
        game = board.game
        best = None
        for move in board.legal_moves():
            child = board.play(move)
            if child.winner() is not None:
                score = game.big - 1
            elif child.is_full():
                score = 0
            else:
                v = -_plain_score(child, memo)
                score = v - 1 if v > 0 else v + 1 if v < 0 else 0
            best = score if best is None else max(best, score)
        memo[key] = best if best is not None else 0
    return memo[key]


def test_a_wide_board_keys_its_table_by_three_words_and_scores_as_plain_negamax():
    """mnk-6x5-4 has 7 x 5 = 35 padded bits: no one-word key for a non-gravity board, so
    its table keeps the mover's stones and all stones in two words of three. Late
    positions of random games, each from a cleared table and from a warm one, agree with
    plain negamax."""
    game = get_game("mnk-6x5-4")
    searcher = Searcher(game, tt_bits=12)
    assert searcher.tt.shape[1] == 3
    rng = random.Random(11)
    memo: dict[tuple[int, int], int] = {}
    checked = 0
    while checked < 25:
        board = game.initial()
        while board.ply < game.cells - 9 and not board.is_over():
            board = board.play(rng.choice(board.legal_moves()))
        if board.is_over():
            continue
        expected = _plain_score(board, memo)
        assert searcher.score(board) == expected, board  # the table warm from earlier ones
        searcher.clear()
        assert searcher.score(board) == expected, board
        checked += 1


def test_a_cleared_table_forgets_and_scores_again():
    """Clearing starts a new epoch: the same nodes are searched again, with the same
    score, and a finished board is refused by the one-call path as by the others."""
    game = get_game("connect-four")
    searcher = Searcher(game, tt_bits=16)
    board = game.parse_moves("4444433")
    first = searcher.score(board)
    n0 = searcher.nodes
    assert searcher.score(board) == first and searcher.nodes - n0 <= 2  # from the table
    searcher.clear()
    n1 = searcher.nodes
    assert searcher.score(board) == first
    assert searcher.nodes - n1 == n0
    with pytest.raises(GameOver) as over:
        searcher.score(game.parse_moves("4455667"))
    assert over.value.winner == "X"


def test_proving_by_columns_agrees_with_solving_the_board():
    """The batch path (columns to bitboards, no Board) gives the score and the optimal
    moves that ``solve`` gives, on random Connect Four positions of every stage."""
    game = get_game("connect-four")
    searcher = Searcher(game, tt_bits=20)
    rng = random.Random(5)
    checked = 0
    while checked < 40:
        board, columns = game.initial(), []
        for _ in range(rng.randrange(14, 38)):
            cols = [m % 7 for m in board.legal_moves()]
            col = rng.choice(cols)
            board = board.play(next(m for m in board.legal_moves() if m % 7 == col))
            columns.append(col)
            if board.is_over():
                break
        if board.is_over():
            with pytest.raises(GameOver):
                searcher.prove_columns(columns)
            continue
        solution = searcher.solve(board)
        proof = searcher.prove_columns(columns)
        assert proof.ply == board.ply and proof.score == solution.moves[0].score
        assert proof.best == tuple(sorted(m.col for m in solution.moves if m.optimal))
        assert searcher.prove_columns(columns, best=False).best == ()
        # with a time limit the moves are asked one by one from Python: the same answer
        timed = searcher.prove_columns(columns, time_limit=60)
        assert (timed.score, timed.best) == (proof.score, proof.best)
        checked += 1


@pytest.mark.parametrize("moves", ["448", "4444444", "4455667 1", "4455667", "0"])
def test_proving_by_columns_refuses_as_the_notation_does(moves):
    """Out of range, a full column, a move after the end: the same error, word for word, as
    parsing the notation; a finished game is over."""
    from gameai.games.errors import IllegalMove
    from gameai.games.mnk.columns import parse_moves

    game = get_game("connect-four")
    columns = [int(c) - 1 for c in moves.replace(" ", "")]
    searcher = Searcher(game, tt_bits=10)
    try:
        parse_moves(game, moves.replace(" ", ""))
    except IllegalMove as expected:
        with pytest.raises(IllegalMove) as got:
            searcher.prove_columns(columns)
        assert str(got.value) == str(expected) and got.value.field == "moves"
    else:
        with pytest.raises(GameOver):
            searcher.prove_columns(columns)


def test_pons_scores_of_his_examples_and_decided_within():
    """Pons's examples: "4455" scores 18 (X wins with its fourth stone), "44455554221" -15
    (O's every move loses to X's seventh stone); and decided_within as the exact score."""
    from gameai.games.mnk.columns import pons_score

    game = get_game("connect-four")
    searcher = Searcher(game, tt_bits=16)
    for moves, expected in (("4455", 18), ("44455554221", -15)):
        proof = searcher.prove_columns([int(c) - 1 for c in moves])
        assert pons_score(game, proof.score, proof.ply) == expected
    rng = random.Random(8)
    for _ in range(30):
        board = game.initial()
        for _ in range(rng.randrange(16, 34)):
            board = board.play(rng.choice(board.legal_moves()))
            if board.is_over():
                break
        if board.is_over():
            continue
        distance = game.big - abs(searcher.score(board))
        for plies in (3, 9, 13):
            decided = searcher.score(board) != 0 and distance <= plies
            assert searcher.decided_within(board, plies) == decided, (board, plies)


def test_proving_by_columns_out_of_time_says_so_and_names_the_position():
    game = get_game("connect-four")
    searcher = Searcher(game, tt_bits=16)
    with pytest.raises(SearchTimeout) as caught:
        searcher.prove_columns([3, 3, 4, 2], time_limit=0.02)
    assert "not solved within 0.02 s" in str(caught.value)
    assert caught.value.partial.board == game.parse_moves("4453")


def test_a_search_in_one_thread_lets_the_others_run():
    """The kernels release the interpreter's lock: while a thread searches (with a solver
    and table of its own, as the server's background prover does), another thread's
    Python runs at once rather than once per 50 ms slice of the search."""
    import threading
    import time

    for entry in (kern.solve_bounds, kern.board_bounds, kern.columns_best,
                  kern.columns_bounds, kern.columns_position, kern.child_outcomes,
                  kern.solve_many):  # what Python calls
        assert entry.targetoptions.get("nogil") is True, entry
    c4 = get_game("connect-four")
    own = c4.own_solver(table_bits=16)
    assert own is not None and get_game("tictactoe").own_solver(table_bits=16) is None
    late = c4.parse_moves("111561466663112343747547223422774655235375"[:30])
    assert own(late, 10.0).optimal_moves == c4.solve(late).optimal_moves  # kernels loaded
    opening = c4.parse_moves("4")
    failed: list[BaseException] = []

    def search() -> None:
        try:
            own(opening, 3.0)  # the opening is not proved in 3 s: it searches throughout
        except Exception as e:
            failed.append(e)

    worker = threading.Thread(target=search)
    worker.start()
    time.sleep(0.2)  # the search under way
    started = time.perf_counter()
    for _ in range(40):  # each wake-up needs the lock back
        time.sleep(0.005)
    spent = time.perf_counter() - started
    assert worker.is_alive()  # the loop ran beside the search, not after it
    worker.join()
    # 0.2 s alone; about twice that on this machine when the search kept the lock; a
    # whole search under the lock would hold every wake-up for its 3 s
    assert spent < 2.0, f"40 wake-ups of 5 ms took {spent:.2f} s beside a search"
    assert len(failed) == 1 and "not solved within" in str(failed[0])


@pytest.mark.parametrize("name", ["connect-four", "connect-4x5-4", "tictactoe"])
def test_the_optimal_moves_alone_are_the_solutions(name):
    """``prove_optimal`` (the score and one null-window search a move on Connect Four, the
    whole-game table on the small boards) and ``own_solvers``' two proofs on a table of
    their own agree with the whole solution's value and optimal moves, on positions of
    random games at every stage; the opening's optimal moves are proved for far less than
    its solution."""
    import random

    game = get_game(name)
    own = game.own_solvers(table_bits=18)
    assert (own is None) == (name != "connect-four")
    rng = random.Random(7)
    checked = 0
    while checked < 30:
        state = game.initial()
        for _ in range(rng.randrange(12 if name == "connect-four" else 0, game.cells)):
            if state.is_over():
                break
            state = state.play(rng.choice(state.legal_actions()))
        if state.is_over():
            continue
        whole = game.solve(state)
        for proof in (game.prove_optimal(state),
                      *((own.optimal(state, 60.0),) if own else ())):
            assert (proof.value, proof.optimal_moves) == (
                whole.value, tuple(sorted(whole.optimal_moves))), str(state)
        if own:
            assert own.solve(state, 60.0).moves == whole.moves
        checked += 1
    if own:
        opening = game.parse_moves("4454")  # X wins, quickly; proving each move's score does not
        assert own.optimal(opening, 10.0).optimal_moves == (37, 40)
        with pytest.raises(SearchTimeout):
            own.solve(opening, 0.5)
