"""The command line is the top room: no room imports it, its subcommands are plain imports,
and an optional room that is not installed is absent from ``--help`` (DESIGN.md, rule 12).
The installed image is proven in tests/deploy/test_wheel.py; these check the source tree."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROOMS = ("gameai",)
CLI = ROOT / "gameai" / "cli"
MAIN = ROOT / "gameai" / "__main__.py"  # ``python -m gameai``: the command line's other door


def room_modules() -> list[Path]:
    """Every module of the rooms below the command line (generated gRPC code aside). The
    trainer's worker and the server's composition root are among them, so neither brings
    in a command handler, even lazily."""
    found = []
    for room in ROOMS:
        for path in sorted((ROOT / room).rglob("*.py")):
            generated = "gen" in path.relative_to(ROOT).parts
            if CLI not in path.parents and path != MAIN and not generated:
                found.append(path)
    return found


def imported_names(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of its code (lazy imports included)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_no_room_imports_the_command_line() -> None:
    modules = room_modules()
    assert len(modules) > 50
    offenders = {str(p.relative_to(ROOT)): sorted(n for n in imported_names(p)
                                                   if n == "gameai.cli" or
                                                   n.startswith("gameai.cli."))
                 for p in modules}
    assert not {k: v for k, v in offenders.items() if v}


def test_subcommands_are_plain_imports() -> None:
    """No module of the command line finds its subcommands by a string."""
    for path in sorted(CLI.glob("*.py")):
        names = imported_names(path)
        assert "importlib" not in names and "importlib.import_module" not in names, path
        assert "import_module(" not in path.read_text(), path


def test_an_absent_room_is_absent_from_help(tmp_path: Path) -> None:
    """With ``stress`` and ``httpx`` hidden (as in the image), ``gameai --help`` lists no
    ``stress``, and every other command still works: ``bench server`` too, whose client is
    the standard library's (issue 28)."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(  # a None entry: the import system's "absent"
        "import sys\nsys.modules.update({'gameai.stress': None, 'httpx': None})\n")
    env = {**os.environ, "PYTHONPATH": str(hide)}

    def gameai(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gameai", *args], capture_output=True,
                              text=True, timeout=120, env=env, cwd=tmp_path)

    shown = gameai("--help")
    assert shown.returncode == 0, shown.stderr
    assert "stress" not in shown.stdout and "serve" in shown.stdout
    bench = gameai("bench", "--help")
    assert bench.returncode == 0, bench.stderr
    assert " server " in bench.stdout and "selfplay" in bench.stdout
    missing = gameai("stress", "load")
    assert missing.returncode == 2 and "invalid choice: 'stress'" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_a_missing_package_is_named_with_what_to_install(tmp_path: Path) -> None:
    """Issue 28: a command that needs a package this install lacks says which and how to
    install it, never a traceback (``tqdm``, the progress bar, hidden here)."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text("import sys\nsys.modules['tqdm'] = None\n")
    result = subprocess.run(
        [sys.executable, "-m", "gameai", "train", "--game", "tictactoe", "--algorithm", "td",
         "--games", "100"], capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(hide)})
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "gameai train: error: this command needs the Python package 'tqdm', which is not " \
           "installed here: pip install tqdm" in result.stderr


def top_level_imports(path: Path) -> set[str]:
    """The modules ``path`` imports when it is imported itself: its module-level statements
    (inside a top-level ``if`` or ``try`` too), not the bodies of its functions."""
    names: set[str] = set()
    pending = list(ast.parse(path.read_text(), str(path)).body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.If | ast.Try | ast.With):
            pending += [child for child in ast.iter_child_nodes(node)
                        if isinstance(child, ast.stmt)]
            for handler in getattr(node, "handlers", []):
                pending += handler.body
    return names


def _bitbully(names: set[str]) -> bool:
    return any(n.split(".")[0] == "bitbully" for n in names)


def test_no_shipped_module_imports_the_agpl_test_solver() -> None:
    """bitbully (AGPL-3.0) checks our solver in tests. Nothing shipped imports it, except
    the benchmarks (``gameai bench solver --compare``), which measure against it: there
    only inside a function, so that nothing imports it by importing a module, and the
    benchmark says what to install when it is absent."""
    bench = ROOT / "gameai" / "bench"
    shipped = [*room_modules(), *sorted(CLI.rglob("*.py")), MAIN]
    offenders = [str(p.relative_to(ROOT)) for p in shipped
                 if bench not in p.parents and _bitbully(imported_names(p))]
    assert offenders == []
    eager = [str(p.relative_to(ROOT)) for p in sorted(bench.rglob("*.py"))
             if _bitbully(top_level_imports(p))]
    assert eager == []
    assert any(_bitbully(imported_names(p)) for p in bench.rglob("*.py"))  # the rule bites
