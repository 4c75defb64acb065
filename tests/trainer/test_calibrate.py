"""The levels' calibration: the perfect opponent is perfect, the tallies add up and repeat
with their seed, the levels come out ordered, and ``gameai bench levels`` says so (or
names the pair that is not)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from gameai.cli import main
from gameai.games import get_game
from gameai.models import ModelInfo, TableModel
from gameai.models.oracle import solver_model
from gameai.trainer.evaluation.calibrate import (
    PerfectPlayer,
    Tally,
    calibrate,
    play_game,
    random_player,
    wilson,
)

TTT = get_game("tictactoe")


@pytest.mark.parametrize("game_name", ["tictactoe", "three-mens-morris"])
def test_the_perfect_player_never_loses_what_the_solver_says_it_holds(game_name) -> None:
    """Against random play the perfect player never does worse than the game's value: it
    never loses tic-tac-toe, and wins three men's morris as X (a first-player win)."""
    game = get_game(game_name)
    perfect, rng = PerfectPlayer(game), random.Random(3)
    as_x = [play_game(game, perfect, random_player, rng) for _ in range(200)]
    as_o = [play_game(game, random_player, perfect, rng) for _ in range(200)]
    assert "O" not in as_x
    if game_name == "tictactoe":
        assert "X" not in as_o and as_x.count("X") > 150
    else:
        assert as_x.count("X") == 200


def test_two_perfect_players_draw_tictactoe_and_vary_their_games() -> None:
    perfect, rng = PerfectPlayer(TTT), random.Random(5)
    assert {play_game(TTT, perfect, perfect, rng) for _ in range(100)} == {None}
    openings = {perfect(TTT.initial(), rng) for _ in range(100)}
    assert len(openings) == 9  # every opening move draws: all are optimal


def test_random_games_with_repetitions_end() -> None:
    """Three men's morris between random players ends, by a win or a third repetition."""
    game, rng = get_game("three-mens-morris"), random.Random(1)
    results = [play_game(game, random_player, random_player, rng) for _ in range(300)]
    assert None in results and "X" in results and "O" in results


def test_wilson_interval() -> None:
    low, high = wilson(5, 10)
    assert (round(low, 4), round(high, 4)) == (0.2366, 0.7634)  # the textbook example
    assert wilson(0, 50)[0] == 0.0 and 0.05 < wilson(0, 50)[1] < 0.08


def test_a_tally_scores_wins_draws_and_losses() -> None:
    tally = Tally(wins=3, draws=2, losses=5)
    assert tally.games == 10 and tally.score == 0.4
    scores = [1] * 3 + [0.5] * 2 + [0] * 5
    assert tally.score_variance == pytest.approx(np.var(scores) / 10)


def test_tictactoe_levels_are_ordered_and_repeat_with_their_seed() -> None:
    report = calibrate(TTT, solver_model(TTT), games=300, seed=2)
    assert report["unordered"] == [] and [o["ordered"] for o in report["order"]] == [True] * 3
    for level in report["levels"].values():
        for opponent in ("perfect", "random"):
            for side in ("X", "O"):
                t = level[opponent][side]
                assert t["wins"] + t["draws"] + t["losses"] == t["games"] == 300
                assert t["win_rate"]["low"] <= t["win_rate"]["value"] <= t["win_rate"]["high"]
    best = report["levels"]["best"]
    assert best["perfect"]["X"]["losses"] == best["perfect"]["O"]["losses"] == 0
    assert best["random"]["X"]["losses"] == 0
    assert report["levels"]["beginner"]["perfect"]["O"]["losses"] > 100
    again = calibrate(TTT, solver_model(TTT), games=300, seed=2)
    assert again["levels"] == report["levels"]


def test_the_command_names_a_pair_that_is_not_ordered(tmp_path, capsys) -> None:
    """With a model that values every move 0, a level's only skill is taking wins in one
    (strong and best): casual is no stronger than beginner. Exit status 1, the pair named."""
    empty = TableModel(TTT, ModelInfo(game="tictactoe", algorithm="empty"),
                       np.zeros(0, np.uint64), np.zeros((0, 9), np.float32))
    path = tmp_path / "empty.gmodel"
    path.write_bytes(empty.to_bytes())
    assert main(["bench", "levels", "--game", "tictactoe", "--games", "200", "--model",
                 str(path)]) == 1
    out = capsys.readouterr().out
    assert "levels NOT ordered: beginner < casual" in out
    assert "casual NOT measurably stronger than beginner" in out


def test_the_command_prints_and_saves_the_calibration(tmp_path, capsys) -> None:
    saved = tmp_path / "levels.json"
    saved.write_text(json.dumps({"four-in-a-row": {"kept": True}}))
    assert main(["bench", "levels", "--game", "tictactoe", "--games", "200", "--json",
                 "--save", str(saved)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["game"] == "tictactoe" and report["unordered"] == []
    assert set(report["levels"]) == {"beginner", "casual", "strong", "best"}
    on_disk = json.loads(saved.read_text())
    assert on_disk["tictactoe"] == report and on_disk["four-in-a-row"] == {"kept": True}
    assert main(["bench", "levels", "--game", "tictactoe", "--games", "50"]) == 0
    text = capsys.readouterr().out
    assert "vs perfect as X" in text and "levels ordered" in text


def test_the_command_refuses_a_model_of_another_game(tmp_path, capsys) -> None:
    path = tmp_path / "morris.gmodel"
    path.write_bytes(solver_model(get_game("three-mens-morris")).to_bytes())
    assert main(["bench", "levels", "--game", "tictactoe", "--model", str(path)]) == 1
    assert "plays three-mens-morris, not tictactoe" in capsys.readouterr().err


def test_the_search_player_plays_the_solvers_optimal_moves() -> None:
    """Past the tables the perfect opponent asks the game's solver position by position:
    on tic-tac-toe its optimal moves are the table player's in every live position."""
    from gameai.games.mnk.positions import live_boards
    from gameai.trainer.evaluation.calibrate import SearchPlayer

    table, search = PerfectPlayer(TTT), SearchPlayer(TTT, time_limit=5)
    for board in live_boards(TTT):
        state = TTT.parse(board)
        assert search.optimal(state) == table.optimal(state), board
        assert search.proved(state)


def random_position(game, plies: int, rng: random.Random):
    """A position ``plies`` random moves into a game that has not ended by then."""
    while True:
        state = game.initial()
        for _ in range(plies):
            state = state.play(rng.choice(state.legal_actions()))
            if state.is_over():
                break
        else:
            return state


def test_the_search_player_past_its_time_plays_the_best_bound_and_says_so() -> None:
    from gameai.trainer.evaluation.calibrate import SearchPlayer

    game = get_game("connect-four")
    player, rng = SearchPlayer(game, time_limit=0.01), random.Random(1)
    opening = game.initial()
    first = player(opening, rng)  # nothing proved in 0.01 s: the centre column
    assert first in opening.legal_actions() and first % game.cols == 3
    assert not player.proved(opening) and player.guessed_moves == 1
    late = random_position(game, 24, rng)
    player.time_limit = 30  # 18 empty cells: proved well within it
    action = player(late, rng)
    assert player.proved(late) and player.exact_moves == 1
    assert action in game.solve(late).optimal_moves
