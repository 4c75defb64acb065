"""The seeds' learners learn a game that plugs in (Hexapawn, examples/hexapawn) to
unbeatable along its state graph, knowing nothing of it, and ``gameai train`` does it
from the command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gameai.games import get_game
from gameai.models import load_model
from gameai.trainer.evaluation.evaluate import evaluate, unbeatable
from gameai.trainer.training import make_learner, train
from gameai.trainer.worker.gates import perfect

GAME = get_game("hexapawn")
STAMP = "2026-01-01T00:00:00Z"


@pytest.mark.parametrize("algorithm", ["td", "qlearning", "tally"])
def test_each_learner_learns_hexapawn_to_unbeatable(algorithm: str) -> None:
    untrained = evaluate(make_learner(GAME, algorithm, seed=1).export(), seed=1)
    assert not unbeatable(untrained) and untrained["losses_as_o"] > 0
    result = train(make_learner(GAME, algorithm, seed=1), games=20_000,
                   until_perfect=True, record_time=False, created_at=STAMP)
    report = result.evaluation
    assert result.stopped == "perfect" and unbeatable(report) and perfect(report)
    assert report["game_value"] == "o_wins" and report["losses_as_o"] == 0
    assert report["optimal_move_rate"] == 1.0 and report["optimal_move_positions"] == 70
    assert result.model.info.games_played <= 1_000  # a few hundred games at most
    again = train(make_learner(GAME, algorithm, seed=1), games=20_000, until_perfect=True,
                  record_time=False, created_at=STAMP)
    assert again.model.to_bytes() == result.model.to_bytes()  # same seed, same model


def test_gameai_train_until_unbeatable_from_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "hexapawn.gmodel"

    def gameai(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gameai", *args], capture_output=True,
                              text=True, timeout=300, cwd=tmp_path)

    run = gameai("train", "--game", "hexapawn", "--algorithm", "td", "--until-unbeatable",
                 "--seed", "1", "--out", str(out))
    assert run.returncode == 0, run.stderr
    assert "td on hexapawn" in run.stdout and "stopped: unbeatable" in run.stdout
    model = load_model(out.read_bytes())
    assert model.game is GAME and unbeatable(model.info.evaluation)
    shown = gameai("evaluate", str(out))
    assert shown.returncode == 0, shown.stderr
    assert "as O 0 (unbeatable; the game is won by O)" in shown.stdout
