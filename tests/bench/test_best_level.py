"""The served level best as a judge plays it (``gameai bench ntuple --exact-ms``): the solver
first, with a table of its own, then the network."""

from __future__ import annotations

from gameai.bench.ntuple import best_level_player
from gameai.bench.positions import generate
from gameai.games import get_game
from gameai.games.mnk import search
from gameai.trainer.book_builder import model_move
from gameai.trainer.training import make_learner


def test_the_best_level_plays_a_proved_move_found_by_a_solver_of_its_own():
    """Where its budget proves the position, the level plays an optimal move; the proof is
    its own solver's (the shared solver, which a judge's perfect opponent uses, searched
    nothing meanwhile), and it is kept: the same position again costs no search."""
    game = get_game("connect-four")
    model = make_learner(game, "ntuple", seed=1).export()  # untrained: its moves are anyone's
    positions = generate(game, stage="middle", difficulty="easy", count=8, seed=5,
                         searcher=search.Searcher(game, tt_bits=18))
    boards = [game.parse(p.board) for p in positions]
    player, exact = best_level_player(model, 1000)
    shared = search.searcher(game)
    try:
        before = shared.nodes
        moves = [player(board, None) for board in boards]
        assert shared.nodes == before  # not one node of the shared solver's
        again = [player(board, None) for board in boards]
    finally:
        exact.close()
    assert again == moves
    assert all(exact.held(board) is not None for board in boards)  # proofs kept
    network_wrong = 0
    for board, move in zip(boards, moves, strict=True):
        optimal = game.solve(board).optimal_moves
        assert move in optimal
        network_wrong += model_move(model, board) not in optimal
    assert network_wrong > 0  # the network alone errs here: the proofs chose the moves


def test_the_best_level_reads_a_shared_table_as_a_server_of_that_store_does(redis_url):
    """``--proved-store``: where the table holds a position (a book's), the level plays an
    optimal move of it, though its own budget proves nothing there."""
    from gameai.store import ModelStore

    game = get_game("connect-four")
    model = make_learner(game, "ntuple", seed=1).export()
    positions = generate(game, stage="middle", difficulty="medium", count=6, seed=7,
                         searcher=search.Searcher(game, tt_bits=18))
    boards = [game.parse(p.board) for p in positions]
    solutions = [game.solve(board) for board in boards]
    wrong = [b for b, s in zip(boards, solutions, strict=True)
             if model_move(model, b) not in s.optimal_moves]
    assert wrong  # the network alone errs on some of them
    with ModelStore.from_url(redis_url, prefix="book") as store:
        table = store.proved()
        alone, exact = best_level_player(model, 0.001)  # a microsecond proves nothing
        try:
            assert [alone(b, None) for b in wrong] == [model_move(model, b) for b in wrong]
        finally:
            exact.close()
        for board, solution in zip(boards, solutions, strict=True):
            table.put(board, solution)
        booked, exact = best_level_player(model, 0.001, table)
        try:
            for board, solution in zip(boards, solutions, strict=True):
                assert booked(board, None) in solution.optimal_moves
        finally:
            exact.close()
