"""The house's rooms and what each may import (docs/architecture.md, DESIGN.md): imports
run one way, from the command line down to the games, and a game family stands on its own
rules under its ``game.py``. Read from the source, lazy imports included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gameai"

# room -> the rooms of gameai it may import (besides itself)
MAY_IMPORT = {
    "games": set(),
    "models": {"games"},
    "store": {"games", "models", "settings"},
    "trainer": {"games", "models", "store", "settings", "host"},
    "service": {"games", "models", "store", "settings", "host"},
    "stress": {"games", "models", "store", "service", "settings", "host"},
    "bench": {"games", "models", "store", "service", "trainer", "settings", "host"},
    "settings": set(),
    "host": {"games"},
    "cli": {"games", "models", "store", "service", "trainer", "stress", "bench", "settings",
            "host"},
}
FAMILIES = ("mnk", "morris")


def imports_of(path: Path) -> set[str]:
    """Every ``gameai`` module ``path`` imports, at any depth of its code."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return {n for n in names if n == "gameai" or n.startswith("gameai.")}


def room_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def modules(room: str) -> list[Path]:
    base = PACKAGE / room
    found = [base.with_suffix(".py")] if base.with_suffix(".py").exists() else []
    return found + [p for p in sorted(base.rglob("*.py")) if "gen" not in p.parts]


@pytest.mark.parametrize("room", sorted(MAY_IMPORT))
def test_a_room_imports_only_the_rooms_below_it(room: str) -> None:
    allowed = MAY_IMPORT[room] | {room, "", "__main__"}
    offenders = {}
    for path in modules(room):
        bad = sorted(n for n in imports_of(path) if room_of(n) not in allowed
                     and not (room == "service" and n.startswith("gameai.service")))
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert offenders == {}


def test_every_room_is_listed() -> None:
    rooms = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if (p.is_dir() and (p / "__init__.py").exists()) or
             (p.suffix == ".py" and p.stem not in ("__init__", "__main__"))}
    assert rooms == set(MAY_IMPORT)


@pytest.mark.parametrize("family", FAMILIES)
def test_no_family_module_imports_its_own_game(family: str) -> None:
    """A family's rules stand below its ``game.py``, which fronts them: none imports it."""
    top = f"gameai.games.{family}.game"
    offenders = [str(p.relative_to(ROOT)) for p in sorted((PACKAGE / "games" / family).glob("*.py"))
                 if p.name != "game.py" and any(n == top or n.startswith(top + ".")
                                                for n in imports_of(p))]
    assert offenders == []


def test_only_the_registry_knows_every_family() -> None:
    knowers = []
    for path in sorted((PACKAGE / "games").rglob("*.py")):
        families = {f for f in FAMILIES for n in imports_of(path)
                    if n.startswith(f"gameai.games.{f}")}
        own = path.parent.name
        if families - {own}:
            knowers.append(str(path.relative_to(ROOT)))
    assert knowers == ["gameai/games/registry.py"]


def test_nothing_but_the_command_line_imports_the_benchmarks() -> None:
    offenders = [str(p.relative_to(ROOT)) for room in MAY_IMPORT if room not in ("cli", "bench")
                 for p in modules(room)
                 if any(room_of(n) == "bench" for n in imports_of(p))]
    assert offenders == []


def test_the_game_core_does_no_file_or_environment_io() -> None:
    """Pure rules and solvers: the memory limit and the table cache are handed in by the
    process (gameai.host), never read by the core itself."""
    io_modules = {"os", "pathlib", "tempfile", "shutil", "io", "socket", "subprocess"}
    offenders = {}
    for path in modules("games"):
        tree = ast.parse(path.read_text())
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names} & io_modules
            elif isinstance(node, ast.ImportFrom) and node.module:
                found |= {node.module.split(".")[0]} & io_modules
            elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "open":
                found.add("open()")
        if found:
            offenders[str(path.relative_to(ROOT))] = sorted(found)
    assert offenders == {}
