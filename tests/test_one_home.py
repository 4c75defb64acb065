"""Shared helpers have one home each: a function defined once in the code, and no module
(of the code or the tests) that only re-exports another's names."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from gameai.games import get_game
from gameai.games.mnk.board import Board
from gameai.games.mnk.positions import live_boards
from gameai.trainer.learners.schedules import annealed

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("gameai", "tests")


def modules() -> list[Path]:
    return [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))
            if "gen" not in p.relative_to(ROOT).parts]


def test_each_shared_helper_is_defined_once() -> None:
    homes: defaultdict[str, list[str]] = defaultdict(list)
    for path in modules():
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef):
                homes[node.name].append(str(path.relative_to(ROOT)))
    assert homes["live_boards"] == ["gameai/games/mnk/positions.py"]
    assert homes["annealed"] == ["gameai/trainer/learners/schedules.py"]


def test_no_module_only_re_exports() -> None:
    """A module whose body is imports and ``__all__`` (a docstring aside) is an alias of
    another: import the other."""
    offenders = []
    for path in modules():
        if path.name == "__init__.py":
            continue
        body = ast.parse(path.read_text()).body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        names = [n for n in body if isinstance(n, ast.Import | ast.ImportFrom)]
        rest = [n for n in body if n not in names and not (
            isinstance(n, ast.Assign) and [getattr(t, "id", "") for t in n.targets] == ["__all__"])]
        if names and not rest:
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_live_boards_are_every_unfinished_canonical_position() -> None:
    game = get_game("tictactoe")
    boards = live_boards(game)
    assert len(boards) == len(set(boards)) == 627  # 765 canonical positions, 138 finished
    assert boards[0] == "---|---|---"
    for text in boards:
        assert not Board.parse(game, text).is_over()
    assert live_boards(game, limit=10) == boards[:10]


def test_annealed_halves_the_distance_every_halflife() -> None:
    assert annealed(1.0, 0.0, 100, 0) == 1.0
    assert abs(annealed(1.0, 0.2, 100, 100) - 0.6) < 1e-12
    assert abs(annealed(1.0, 0.2, 100, 10**9) - 0.2) < 1e-12
