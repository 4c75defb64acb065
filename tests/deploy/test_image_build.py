"""The Dockerfile's build stage, done without Docker: from exactly the files the build
context gets, regenerate the gRPC code, build the wheel and install it apart from the
source tree, then check the installed package has what the containers run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deploy.conftest import ROOT
from tests.deploy.test_dockerfile import DOCKERFILE, dockerignored, instructions


def build_context(target: Path) -> None:
    """Copy what ``docker build`` would send: the tree, filtered by .dockerignore."""
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    for directory, dirs, files in os.walk(ROOT):
        rel_dir = Path(directory).relative_to(ROOT)
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # .git, .venv, caches
        for name in files:
            rel = (rel_dir / name).as_posix()
            if not dockerignored(rel, patterns):
                (target / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, target / rel)


@pytest.mark.slow
def test_build_stage_yields_a_complete_package(tmp_path: Path) -> None:
    assert any(i == "RUN" and "python -m service.protogen" in a
               for i, a in instructions(DOCKERFILE.read_text()))
    src = tmp_path / "src"
    build_context(src)
    assert not (src / "tests").exists() and not (src / "docs").exists()
    shutil.rmtree(src / "service" / "gen", ignore_errors=True)

    def run(*args: str, cwd: Path = src) -> None:
        result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]

    run(sys.executable, "-m", "service.protogen")
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
        "--wheel-dir", str(tmp_path / "wheels"), ".")
    (wheel,) = (tmp_path / "wheels").glob("gameai-*.whl")
    site = tmp_path / "site"
    run(sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
        str(wheel))

    probe = (
        "import gameai, service, service.rest, trainer\n"
        "from service.gen.gameai.v1 import move_pb2_grpc, models_pb2_grpc\n"
        "from gameai.cli import build_parser\n"
        f"assert gameai.__file__.startswith({str(site)!r}), gameai.__file__\n"
        "assert (service.rest.WEB_DIR / 'index.html').is_file(), 'no web board'\n"
        "commands = build_parser()._subparsers._group_actions[0].choices\n"
        "assert {'serve', 'trainer', 'models', 'up'} <= set(commands), sorted(commands)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
