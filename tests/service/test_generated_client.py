"""A client generated from the live ``/openapi.json`` by a standard generator
(openapi-python-client, the dev extra) plays a game: the schema names every request and
answer type, and the closed sets (levels, sides, outcomes, error codes) as enums."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import httpx

from gameai.games import get_game
from gameai.models.levels import LEVELS
from tests.service.conftest import RunningServer

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
PACKAGE = "gameai_generated_client"


def generate(server: RunningServer, where: Path) -> None:
    (where / "openapi.json").write_text(json.dumps(
        httpx.get(f"{server.http}/openapi.json").json()))
    (where / "config.yaml").write_text(f"post_hooks: []\npackage_name_override: {PACKAGE}\n")
    done = subprocess.run([str(GENERATOR), "generate", "--path", "openapi.json",
                           "--output-path", PACKAGE, "--meta", "none", "--config",
                           "config.yaml"], cwd=where, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "will not be generated" not in done.stdout + done.stderr, done.stdout


def test_a_generated_client_plays_a_game(server: RunningServer, tmp_path: Path) -> None:
    generate(server, tmp_path)
    sys.path.insert(0, str(tmp_path))
    try:
        client_module = importlib.import_module(PACKAGE)
        best_move = importlib.import_module(
            f"{PACKAGE}.api.moves.best_move_v1_games_game_best_move_post")
        models = importlib.import_module(f"{PACKAGE}.models")
        assert [level.value for level in models.LevelName] == sorted(LEVELS)
        assert {side.value for side in models.Side} == {"X", "O"}
        client = client_module.Client(base_url=server.http)
        game = get_game("tictactoe")
        state = game.initial()
        while not state.is_over():  # the model plays both sides at its best: a draw
            answer = best_move.sync(game="tictactoe", client=client, body=models.BestMoveRequest(
                board=str(state), level=models.LevelName.BEST))
            assert isinstance(answer, models.BestMoveOut), answer
            assert answer.level == models.LevelName.BEST and answer.model_version == 1
            state = state.play(answer.move.index)
        assert state.winner() is None
        error = best_move.sync(game="tictactoe", client=client,
                               body=models.BestMoveRequest(board="XXX|OO-|---"))
        assert isinstance(error, models.ErrorOut)
        assert error.error.code == models.ErrorCode.FAILED_PRECONDITION
        assert error.error.field == "board"
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.split(".")[0] == PACKAGE]:
            del sys.modules[name]
