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
