"""One learner per algorithm gives the same models as the two it replaced: for the same
game, seed and parameters, today's td, qlearning and tally (one kernel each, over the
walker the game asks for) play the same games and export the same model bytes as the
learners of before (``tests/trainer/reference``: one kernel per algorithm and engine), on
bitboard games (tic-tac-toe, four-in-a-row, a gravity board) and state-graph games (Three
Men's Morris, Nine Holes, and Hexapawn, which plugs in from outside), with exploring
starts, epsilon and Boltzmann exploration, a random opponent, all-moves credit, resumed
play and warm starts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from gameai.games import get_game
from gameai.models.oracle import solver_model
from gameai.trainer.learners.base import Learner, build_params
from gameai.trainer.learners.tabular import TabularLearner
from gameai.trainer.training import LEARNERS, make_learner, train
from tests.trainer.reference.qlearning import QLearner as OldQ
from tests.trainer.reference.qlearning_graph import QGraphLearner as OldQGraph
from tests.trainer.reference.tally import TallyLearner as OldTally
from tests.trainer.reference.tally_graph import TallyGraphLearner as OldTallyGraph
from tests.trainer.reference.td import TdLearner as OldTd
from tests.trainer.reference.td_graph import TdGraphLearner as OldTdGraph

OLD: dict[str, dict[str, type[Learner]]] = {
    "bitboard": {"td": OldTd, "qlearning": OldQ, "tally": OldTally},
    "position_graph": {"td": OldTdGraph, "qlearning": OldQGraph, "tally": OldTallyGraph},
}


def pair(name: str, algorithm: str, seed: int, params: dict[str, Any],
         walker: str | None = None) -> tuple[TabularLearner, Learner]:
    """Today's learner (with the game's defaults, as ``gameai train`` makes it) and the old
    one of the same engine, with the same seed and the same parameters."""
    game = get_game(name)
    if walker is None:
        new = make_learner(game, algorithm, seed=seed, params=params)
    else:
        cls = LEARNERS[algorithm]
        assert issubclass(cls, TabularLearner)
        new = cls(game, seed=seed, walker=walker,
                  params=build_params(cls.params_type_for(game, walker), params))
    assert isinstance(new, TabularLearner)
    old_cls = OLD[new.walker.method][algorithm]
    old = old_cls(game, seed=seed, params=build_params(old_cls.params_type, new.params.to_json()))
    assert old.params.to_json() == new.params.to_json()
    return new, old


def model_bytes(learner: Learner) -> bytes:
    """The export's bytes, with the metadata that depends on the clock fixed."""
    info = learner.info(training_seconds=0.0, created_at="2026-01-01T00:00:00Z")
    return learner.export(info).to_bytes()


def same_games(new: Learner, old: Learner, games: int) -> None:
    a, b = new.play(games), old.play(games)
    assert (a.x_wins, a.o_wins, a.draws, a.moves) == (b.x_wins, b.o_wins, b.draws, b.moves)


BITBOARD = [
    ("tictactoe", "td", {}),
    ("tictactoe", "td", {"explore": "epsilon"}),
    ("tictactoe", "td", {"exploring_starts": 0.0}),
    ("tictactoe", "qlearning", {}),
    ("tictactoe", "qlearning", {"opponent": "random", "exploring_starts": 0.0}),
    ("tictactoe", "tally", {}),
    ("tictactoe", "tally", {"credit": "all", "exploring_starts": 0.3}),
    ("four-in-a-row", "td", {}),
    ("four-in-a-row", "qlearning", {"exploring_starts": 0.2}),
    ("four-in-a-row", "tally", {}),
    ("connect-4x5-4", "td", {"explore": "epsilon"}),
    ("connect-4x5-4", "qlearning", {}),
    ("connect-4x5-4", "tally", {"exploring_starts": 0.0}),
]
GRAPH = [
    ("three-mens-morris", "td", {}),
    ("three-mens-morris", "td", {"explore": "epsilon", "random_starts": 0.5}),
    ("three-mens-morris", "qlearning", {}),
    ("three-mens-morris", "qlearning", {"opponent": "random", "random_starts": 0.0}),
    ("three-mens-morris", "tally", {}),
    ("three-mens-morris", "tally", {"credit": "all", "random_starts": 0.0}),
    ("nine-holes", "td", {"random_starts": 0.0}),
    ("nine-holes", "qlearning", {"random_starts": 0.6}),
    ("nine-holes", "tally", {}),
    ("hexapawn", "td", {}),  # a game that plugs in (examples/hexapawn)
    ("hexapawn", "qlearning", {"random_starts": 0.5}),
    ("hexapawn", "tally", {}),
]


@pytest.mark.parametrize("seed", [1, 7])
@pytest.mark.parametrize(("name", "algorithm", "params"), BITBOARD + GRAPH)
def test_same_seed_same_games_same_model_bytes(name, algorithm, params, seed):
    new, old = pair(name, algorithm, seed, params)
    games = 3000 if name == "tictactoe" else 1200
    same_games(new, old, games)
    same_games(new, old, games // 2)  # resumed: the same random stream goes on
    assert model_bytes(new) == model_bytes(old)
    assert new.exploration == old.exploration


@pytest.mark.parametrize("algorithm", ["td", "qlearning", "tally"])
def test_the_position_graph_walker_plays_an_mnk_game_as_the_old_graph_learners(algorithm):
    """Tic-tac-toe along its state graph: the generic engine on a game that also has the
    bitboard one, against the old graph learners."""
    new, old = pair("tictactoe", algorithm, 3, {"random_starts": 0.3}, walker="position_graph")
    same_games(new, old, 2000)
    assert model_bytes(new) == model_bytes(old)


@pytest.mark.parametrize("name", ["tictactoe", "three-mens-morris"])
@pytest.mark.parametrize("algorithm", ["td", "qlearning", "tally"])
def test_a_warm_start_from_the_solver_gives_the_same_model(name, algorithm):
    oracle = solver_model(get_game(name))
    new, old = pair(name, algorithm, 2, {})
    new.warm_start(oracle)
    old.warm_start(oracle)
    assert model_bytes(new) == model_bytes(old)
    same_games(new, old, 500)
    assert model_bytes(new) == model_bytes(old)


@pytest.mark.parametrize("name", ["tictactoe", "three-mens-morris"])
def test_a_training_run_gives_the_same_published_model(name):
    """Rounds, checkpoints and the final evaluation: the model ``gameai train`` writes."""
    new, old = pair(name, "td", 4, {})
    runs = [train(learner, games=4000, eval_every=1000, record_time=False,
                  created_at="2026-01-01T00:00:00Z") for learner in (new, old)]
    assert runs[0].model.to_bytes() == runs[1].model.to_bytes()
    assert [c.games for c in runs[0].history] == [c.games for c in runs[1].history]


KERNELS = {"td": ("gameai.trainer.learners.td", "_td_games"),
           "qlearning": ("gameai.trainer.learners.qlearning", "_q_games"),
           "tally": ("gameai.trainer.learners.tally", "_tally_games")}


@pytest.mark.parametrize(("name", "params"), [
    ("tictactoe", {}), ("tictactoe", {"explore": "epsilon"}), ("connect-4x5-4", {}),
    ("three-mens-morris", {}), ("nine-holes", {"random_starts": 0.5})])
@pytest.mark.parametrize("algorithm", ["td", "qlearning", "tally"])
def test_each_kernel_equals_its_plain_python_twin(monkeypatch, name, params, algorithm):
    """The kernel's own source run by Python (``py_func``; the walkers' and stores'
    functions then run their implementations as Python): the same games and model bytes
    as the compiled kernel, into which numba inlined them."""
    import importlib

    if algorithm != "td":
        params = {k: v for k, v in params.items() if k != "explore"}
    module, kernel = KERNELS[algorithm]
    compiled = make_learner(get_game(name), algorithm, seed=3, params=params)
    same = compiled.play(150)
    twin = make_learner(get_game(name), algorithm, seed=3, params=params)
    monkeypatch.setattr(importlib.import_module(module), kernel,
                        getattr(importlib.import_module(module), kernel).py_func)
    with np.errstate(over="ignore"):  # the hash's multiplication wraps around, as compiled
        played = twin.play(150)
    assert (played.x_wins, played.o_wins, played.draws, played.moves) == \
        (same.x_wins, same.o_wins, same.draws, same.moves)
    assert model_bytes(twin) == model_bytes(compiled)


def test_the_tables_are_equal_too():
    """Beyond the export: every value and count of a td table, slot for slot."""
    new, old = pair("four-in-a-row", "td", 5, {})
    same_games(new, old, 2000)
    a, b = new.table, old.table
    assert np.array_equal(a.keys, b.keys)
    assert np.array_equal(a.columns["v"], b.columns["v"])
    assert np.array_equal(a.columns["n"], b.columns["n"])


# -- speed: `pytest -m bench tests/trainer/test_same_models.py -s` ------------------------

# games a timed batch (tens of milliseconds), and the games played between the two stages
SPEED_GAMES = {"tictactoe": (100_000, 500_000), "four-in-a-row": (5_000, 100_000),
               "connect-4x5-4": (5_000, 100_000), "three-mens-morris": (50_000, 500_000),
               "nine-holes": (20_000, 200_000)}


def _best_seconds_a_game(learners: dict[str, Learner], games: int) -> dict[str, float]:
    """Each learner's best CPU time a game over seven batches, interleaved."""
    import time

    best = dict.fromkeys(learners, float("inf"))
    for rep in range(7):
        for tag in (list(learners) if rep % 2 == 0 else list(reversed(learners))):
            started = time.process_time()
            learners[tag].play(games)
            best[tag] = min(best[tag], (time.process_time() - started) / games)
    return best


@pytest.mark.bench
@pytest.mark.parametrize("name", list(SPEED_GAMES))
def test_the_one_kernel_keeps_the_speed_of_the_two(name):
    """Self-play games per second of today's learners and of the old ones on the same
    seed (so the same games), best of seven interleaved batches of CPU time (the fairest
    figure on a shared machine), early on and once the tables have grown; each at least
    90% of the old one (issue 23)."""
    games, later = SPEED_GAMES[name]
    for algorithm in ("td", "qlearning", "tally"):
        new, old = pair(name, algorithm, 1, {})
        for stage, before in (("early", 200), ("later", later)):
            new.play(before)
            old.play(before)
            start = old.games_played
            best = _best_seconds_a_game({"new": new, "old": old}, games)
            ratio = best["old"] / best["new"]
            print(f"\n| {name} | {algorithm} | {stage} (from {start:,} games) | "
                  f"{1 / best['old']:,.0f} | {1 / best['new']:,.0f} | {ratio:.2f} |")
            assert ratio >= 0.9, (name, algorithm, stage, ratio)
