"""constraints.txt pins every package the image runs, within what pyproject.toml allows,
at the versions CI installed (scripts/install uses the same file)."""

from __future__ import annotations

import importlib.metadata as md
import re
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.deploy.conftest import ROOT


def pins() -> dict[str, Version]:
    found = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            m = re.fullmatch(r"([A-Za-z0-9_.-]+)==([A-Za-z0-9_.+!-]+)", line)
            assert m, f"not an exact pin: {line!r}"
            found[canonicalize_name(m[1])] = Version(m[2])
    return found


def runtime_requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in project["dependencies"]]


def runtime_closure() -> set[str]:
    """Every distribution the installed runtime dependencies pull in (no extras)."""
    seen: set[str] = set()
    todo = runtime_requirements()
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in seen or (req.marker and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        for text in md.requires(req.name) or []:
            todo.append(Requirement(text))
    return seen


def test_every_runtime_dependency_is_pinned() -> None:
    missing = runtime_closure() - set(pins())
    assert not missing, f"unpinned: {sorted(missing)}: run bash deploy/update-constraints.sh"


def test_pins_satisfy_pyproject() -> None:
    pinned = pins()
    for req in runtime_requirements():
        version = pinned[canonicalize_name(req.name)]
        assert req.specifier.contains(version, prereleases=True), f"{req} vs {version}"


def test_build_tools_are_pinned() -> None:
    assert {"grpcio-tools", "setuptools", "wheel"} <= set(pins())


def test_ci_runs_the_pinned_versions() -> None:
    for name in runtime_closure():
        assert Version(md.version(name)) == pins()[name], \
            f"{name}: installed {md.version(name)}, pinned {pins()[name]}"
    assert "-c constraints.txt" in (ROOT / "scripts" / "install").read_text()
