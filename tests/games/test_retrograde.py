"""The state graph and the retrograde solver, against plain references."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from gameai.games import get_game
from gameai.games.graph import DRAWN, LOST, assemble, build_graph
from gameai.games.mnk.solver import game_table
from gameai.games.morris.game import variants
from gameai.games.morris.graph import walk
from gameai.games.retrograde import back_up, solve_graph, solve_state, solved

VARIANTS = [v.name for v in variants()]
SMALL_MNK = ["tictactoe", "mnk-2x3-2", "connect-3x3-3"]


@cache
def walked(name: str):
    """The generic walk's graph (half a second a game: built once per test session)."""
    return build_graph(get_game(name))
FIELDS = ("raw_keys", "raw_children", "raw_to_move", "raw_end", "canon", "sym", "keys", "rep",
          "children", "to_move", "end")


@pytest.mark.parametrize("name", VARIANTS)
def test_the_compiled_walk_equals_the_generic_one(name):
    game = get_game(name)
    fast, plain = assemble(game, *walk(game)), walked(name)
    for field in FIELDS:
        assert np.array_equal(getattr(fast, field), getattr(plain, field)), field


def test_canonical_children_are_the_canonical_ids_of_raw_children():
    graph = get_game("three-mens-morris").state_graph()
    rep_kids = graph.raw_children[graph.rep]
    assert np.array_equal(graph.children >= 0, rep_kids >= 0)
    assert np.array_equal(graph.children[rep_kids >= 0], graph.canon[rep_kids[rep_kids >= 0]])
    assert np.array_equal(graph.keys[graph.canon[graph.rep]], graph.keys)


def reference_scores(graph, big):
    """Plain value iteration by distance: at step t, a position is a win in t if a move
    leads to a loss in t - 1, a loss in t if every move leads to a win in fewer plies;
    whatever is never settled is a draw."""
    n = len(graph)
    kids = [[int(c) for c in row if c >= 0] for row in graph.children]
    value = [None] * n  # (outcome, distance)
    for i in range(n):
        if graph.end[i] == LOST:
            value[i] = ("loss", 0)
        elif graph.end[i] == DRAWN:
            value[i] = ("draw", 0)
    t = 0
    while True:
        t += 1
        new = {}
        for i in range(n):
            if value[i] is not None:
                continue
            if any(value[c] == ("loss", t - 1) for c in kids[i]):
                new[i] = ("win", t)
            elif all(value[c] is not None and value[c][0] == "win" for c in kids[i]):
                new[i] = ("loss", t)
        if not new:
            break
        for i, v in new.items():
            value[i] = v
    score = {"win": lambda d: big - d, "loss": lambda d: d - big, "draw": lambda d: 0}
    return np.array([0 if v is None else score[v[0]](v[1]) for v in value])


@pytest.mark.parametrize("name", [*VARIANTS, *SMALL_MNK])
def test_retrograde_equals_plain_value_iteration(name):
    game = get_game(name)
    graph = walked(name)
    assert np.array_equal(solve_graph(graph), reference_scores(graph, game.big))


@pytest.mark.parametrize("name", SMALL_MNK)
def test_retrograde_equals_the_layered_mnk_solver(name):
    game = get_game(name)
    graph = walked(name)
    assert np.array_equal(solve_graph(graph), game_table(game).lookup(graph.keys))


def search(state, depth, history, big):
    """Negamax with the draw rule over the real history, to ``depth`` plies; 0 where
    nothing is forced within it."""
    if state.is_over():
        return -big if state.winner() else 0
    if depth == 0:
        return 0
    best = -2 * big
    for action in state.legal_actions():
        child = state.play(action)
        if history.get(child.key, 0) >= 2:
            score = 0  # the third occurrence: a draw
        else:
            history[child.key] = history.get(child.key, 0) + 1
            score = int(back_up(np.array([search(child, depth - 1, history, big)]))[0])
            history[child.key] -= 1
        best = max(best, score)
    return best


@pytest.mark.parametrize("name", ["three-mens-morris", "nine-holes"])
def test_short_forced_results_agree_with_a_search_under_the_draw_rule(name):
    game = get_game(name)
    graph, scores = solved(game)
    rng = np.random.default_rng(1)
    live = np.flatnonzero(graph.end == 0)
    for node in rng.choice(live, size=40, replace=False):
        state = _state(game, int(graph.rep[node]), graph)
        score = int(scores[node])
        distance = game.big - abs(score) if score else None
        depth = distance if distance is not None and distance <= 5 else 3
        found = search(state, depth, {state.key: 1}, game.big)
        assert found == (score if distance is not None and distance <= depth else 0)


def _state(game, raw, graph):
    from gameai.games.morris.game import MorrisBoard

    key = int(graph.raw_keys[raw])
    side, rest = divmod(key, 3 ** 9)
    x = o = 0
    for cell in range(9):
        rest, digit = divmod(rest, 3)
        x |= (digit == 1) << cell
        o |= (digit == 2) << cell
    return MorrisBoard(game, x, o, side == 0)


def test_the_standard_game_is_won_by_opening_in_the_centre():
    game = get_game("three-mens-morris")
    solution = solve_state(game.initial())
    assert (solution.value, solution.outcome, solution.distance) == (1, "win", 9)
    assert solution.optimal_moves == (4,)
    assert {m.outcome for m in solution.moves if m.move in (1, 3, 5, 7)} == {"loss"}
    assert {m.outcome for m in solution.moves if m.move in (0, 2, 6, 8)} == {"draw"}


def test_barring_the_centre_opening_makes_it_a_draw():
    solution = solve_state(get_game("three-mens-morris-no-centre-opening").initial())
    assert solution.value == 0 and 4 not in [m.move for m in solution.moves]


def test_movements_report_their_origin_and_every_move_is_scored():
    game = get_game("three-mens-morris")
    state = game.parse("XO-|XO-|O-X", to_move="X")
    solution = solve_state(state)
    assert {(m.from_index, m.row * 3 + m.col) for m in solution.moves} == {(8, 5), (8, 7)}
    for m in solution.moves:
        child = solve_state(state.play(m.move)) if not state.play(m.move).is_over() else None
        if child is not None:
            assert m.outcome == {"win": "loss", "loss": "win", "draw": "draw"}[child.outcome]
    assert solution.moves[0].optimal and solution.moves[0].score == max(
        m.score for m in solution.moves)


def test_analyze_counts_positions_and_rates_each_opening():
    report = get_game("three-mens-morris").analyze()
    assert report["positions"] == 5390 and report["canonical_positions"] == 744
    assert report["value"] == "x_wins" and report["distance"] == 9
    assert report["openings"][4] == {"outcome": "win", "distance": 9, "optimal": True}
    assert report["live_positions"] == (report["won_for_mover"] + report["lost_for_mover"]
                                        + report["drawn"])
    barred = get_game("nine-holes-no-centre-opening").analyze()
    assert barred["openings"][4] is None and barred["value"] == "draw"
