"""Games that plug in (issue 23): the ``gameai.games`` entry point finds Hexapawn, a family
installed beside gameai from ``examples/hexapawn`` that nothing in gameai names; a broken
plug-in takes no other game down; the retrograde solver solves Hexapawn through the
interface and its state graph alone."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest

from gameai.games import GameOver, State, get_game, known_games
from gameai.games.registry import GROUP, families, plugin_problems
from gameai.games.retrograde import back_up, move_scores, solve_state

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "hexapawn"
GAME = get_game("hexapawn")


def test_the_installed_entry_point_adds_hexapawn():
    points = {p.name: p.value for p in entry_points(group=GROUP)}
    assert points["hexapawn"] == "gameai_hexapawn.game"
    family = sys.modules["gameai_hexapawn.game"]
    assert families().index(family) >= 2  # after the two built-in families
    assert GAME.name == "hexapawn" and type(GAME).__module__ == "gameai_hexapawn.game"
    assert "hexapawn" in known_games() and get_game(" Hexapawn ") is GAME
    assert plugin_problems() == {}


def test_nothing_in_gameai_names_hexapawn():
    """The proof that it plugs in from outside: not a line of gameai mentions it."""
    files = [p for p in (ROOT / "gameai").rglob("*")
             if p.is_file() and p.suffix in (".py", ".js", ".html", ".css", ".json", ".proto")]
    assert len(files) > 100
    assert [str(p.relative_to(ROOT)) for p in files
            if "hexapawn" in p.read_text(errors="replace").lower()] == []


def test_the_example_uses_only_gameais_game_interface():
    allowed = {"gameai.games", "gameai.games.interface", "gameai.games.errors",
               "gameai.games.graph", "gameai.games.retrograde"}
    used: set[str] = set()
    for path in (EXAMPLE / "gameai_hexapawn").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                used.add(node.module)
            elif isinstance(node, ast.Import):
                used |= {a.name for a in node.names}
    assert {m for m in used if m.split(".")[0] == "gameai"} <= allowed
    assert "gameai.games.interface" in used


BROKEN = {
    "raising_family.py": "raise RuntimeError('the family is broken')\n",
    "shapeless_family.py": "NAMES = ('shapeless',)\n",
    "flaky_family.py": """\
        NAMES = ("flaky",)
        PATTERNS = ""

        def find(key):
            if key == "flaky-crash":
                raise KeyError(key)
            return "not a game" if key == "flaky-thing" else None
        """,
}
PROBE = """\
import json
from gameai.games import UnknownGame, get_game
from gameai.games.registry import plugin_problems
out = {"games": [get_game(n).name for n in ("tictactoe", "three-mens-morris", "hexapawn")]}
for name in ("flaky-crash", "flaky-thing", "chess"):
    try:
        get_game(name)
    except UnknownGame as e:
        out[name] = str(e)
out["problems"] = plugin_problems()
print(json.dumps(out))
"""


def test_broken_plug_ins_take_no_game_down(tmp_path: Path):
    """A distribution with four broken entry points, found by importlib as any installed
    one is: every other game still works, and each problem is named."""
    dist = tmp_path / "broken_games-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-games\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[gameai.games]\nmissing = no_such_module_anywhere\nraising = raising_family\n"
        "shapeless = shapeless_family\nflaky = flaky_family\n")
    for name, text in BROKEN.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path),
                                                         "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["games"] == ["tictactoe", "three-mens-morris", "hexapawn"]
    problems = out["problems"]
    assert set(problems) == {"missing", "raising", "shapeless", "flaky"}
    assert problems["missing"].startswith("ModuleNotFoundError: No module named "
                                          "'no_such_module_anywhere'")
    assert problems["raising"] == "RuntimeError: the family is broken"
    assert problems["shapeless"] == "TypeError: shapeless_family has no PATTERNS, find"
    assert problems["flaky"] == "find('flaky-thing') returned a str, not a Game"
    for name in ("flaky-crash", "flaky-thing", "chess"):  # unknown, never a crash
        assert out[name].startswith(f"unknown game {name!r}: known games are tictactoe")
        assert "hexapawn" in out[name] and "flaky" in out[name]
    assert "game family 'raising' (raising_family) not loaded" in run.stderr


# -- the retrograde solver over the state graph, against a plain-Python negamax -------------


@cache
def negamax(state: State) -> int:
    """The exact score of ``state`` from the side to move (a win in t plies ``big - t``),
    by plain recursion over the rules: no graph, no symmetry."""
    if state.is_over():
        return -GAME.big if state.winner() is not None else 0
    return max(int(back_up(np.array([negamax(state.play(a))]))[0])
               for a in state.legal_actions())


def test_the_second_player_wins():
    report = GAME.analyze()
    assert report["value"] == "o_wins" and report["drawn"] == 0
    assert (report["positions"], report["canonical_positions"]) == (135, 71)
    solution = GAME.solve(GAME.initial())
    assert (solution.outcome, solution.distance, solution.value) == ("loss", 6, -1)
    # X's longest defence: up the middle (8-5); each side step loses in 4
    assert [(m.from_index, m.row * 3 + m.col, m.outcome, m.distance, m.optimal)
            for m in solution.moves] == [(7, 4, "loss", 6, True), (6, 3, "loss", 4, False),
                                         (8, 5, "loss", 4, False)]
    assert solve_state(GAME.initial()) == solution


def test_every_move_score_matches_plain_negamax():
    graph = GAME.state_graph()
    keys, scores, legal = move_scores(GAME)
    assert len(keys) == int((graph.end == 0).sum()) == 37
    for key, row, ok in zip(keys.tolist(), scores, legal, strict=True):
        state = next(s for s in _reachable() if s.canonical() == (key, 0))
        for action in range(GAME.num_actions):
            assert bool(ok[action]) == (action in state.legal_actions())
            if ok[action]:
                child = negamax(state.play(action))
                assert row[action] == back_up(np.array([child]))[0], (str(state), action)


def test_solving_a_finished_position_is_refused():
    with pytest.raises(GameOver, match="O has won"):
        GAME.solve(GAME.parse_moves("8-5 1-5 7-4 5-8"))


@cache
def _reachable() -> tuple[State, ...]:
    seen: dict[int, State] = {}
    todo = [GAME.initial()]
    while todo:
        state = todo.pop()
        if state.key not in seen:
            seen[state.key] = state
            todo += [state.play(a) for a in state.legal_actions()]
    return tuple(seen.values())
