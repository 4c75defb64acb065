"""The Dockerfile, checked without a Docker engine: hadolint, the structure the issue asks
for, and that every file it copies exists and passes .dockerignore."""

from __future__ import annotations

import ast
import fnmatch
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deploy.conftest import ROOT, tool

DOCKERFILE = ROOT / "Dockerfile"


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, with continuation lines joined."""
    joined = re.sub(r"\\\n", " ", text)
    result = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            result.append((word.upper(), rest.strip()))
    return result


def stages() -> list[list[tuple[str, str]]]:
    found: list[list[tuple[str, str]]] = []
    for ins in instructions(DOCKERFILE.read_text()):
        if ins[0] == "FROM":
            found.append([])
        if found:
            found[-1].append(ins)
    return found


def hadolint(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([tool("hadolint"), "--failure-threshold", "style", "--no-color",
                           str(path)], capture_output=True, text=True, timeout=60)


def test_hadolint_is_clean() -> None:
    result = hadolint(DOCKERFILE)
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_would_catch_a_careless_image(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python\nRUN pip install numpy\nRUN cd /tmp && ls\n")
    result = hadolint(bad)
    assert result.returncode != 0
    assert "DL3006" in result.stdout and "DL3013" in result.stdout


def test_multi_stage_from_a_slim_python_311() -> None:
    text = DOCKERFILE.read_text()
    assert re.search(r"^ARG PYTHON_IMAGE=python:3\.11-slim", text, re.M)
    build, runtime = stages()
    assert build[0] == ("FROM", "${PYTHON_IMAGE} AS build")
    assert runtime[0] == ("FROM", "${PYTHON_IMAGE} AS runtime")
    copied_from_build = [a for i, a in runtime if i == "COPY" and a.startswith("--from=build")]
    assert copied_from_build == ["--from=build /opt/gameai /opt/gameai"]


def test_dependencies_come_from_the_pinned_constraints() -> None:
    build = dict(stages()[0][1:3])
    assert "PIP_CONSTRAINT=/src/constraints.txt" in build["ENV"]
    text = DOCKERFILE.read_text()
    assert "COPY constraints.txt pyproject.toml ./" in text
    assert "pip install --no-cache-dir -r /tmp/requirements.txt" in text


def test_grpc_code_is_generated_at_build_with_the_service_codegen() -> None:
    text = DOCKERFILE.read_text()
    assert "rm -rf gameai/service/gen" in text and "python -m gameai.service.protogen" in text
    assert (ROOT / "gameai" / "service" / "protogen.py").exists()
    assert "import gameai.service.gen.gameai.v1.move_pb2_grpc" in text
    assert (ROOT / "gameai" / "service" / "gen" / "gameai" / "v1" / "move_pb2_grpc.py").exists()


def test_runtime_is_locked_down_and_self_describing() -> None:
    runtime = stages()[1]
    args = {i: a for i, a in runtime}  # the last of each kind
    assert args["USER"] == "10001:10001"
    assert args["STOPSIGNAL"] == "SIGTERM"
    assert args["ENTRYPOINT"] == '["gameai"]' and args["CMD"] == '["serve"]'
    assert args["HEALTHCHECK"].endswith('CMD ["gameai-healthcheck"]')
    env = " ".join(a for i, a in runtime if i == "ENV")
    assert "NUMBA_CACHE_DIR=/tmp/" in env and "GAMEAI_CACHE_DIR=/tmp/" in env
    assert "GAMEAI_HOST=0.0.0.0" in env
    labels = " ".join(a for i, a in runtime if i == "LABEL")
    for key in ("title", "description", "version", "revision", "created", "licenses"):
        assert f"org.opencontainers.image.{key}=" in labels
    assert set(args["EXPOSE"].split()) == {"8000", "50051", "9100"}


def dockerignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last matching pattern wins; a pattern matches a path or a parent."""
    parts = path.split("/")
    candidates = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    ignored = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").rstrip("/")
        if pattern.startswith("**/"):
            hit = any(fnmatch.fnmatch(c.split("/")[-1], pattern[3:]) for c in candidates)
        else:
            hit = any(fnmatch.fnmatch(c, pattern) and c.count("/") == pattern.count("/")
                      for c in candidates)
        if hit:
            ignored = not negate
    return ignored


def test_every_copied_file_exists_and_reaches_the_build_context() -> None:
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    sources = []
    for ins, args in instructions(DOCKERFILE.read_text()):
        if ins == "COPY" and "--from=" not in args:
            words = [w for w in shlex.split(args) if not w.startswith("--")]
            sources += words[:-1]
    assert "gameai" in sources and "deploy/docker/healthcheck.py" in sources
    for source in sources:
        path = ROOT / source
        assert path.exists(), source
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()
                                                and "__pycache__" not in p.parts]
        for f in files:
            rel = f.relative_to(ROOT).as_posix()
            assert not dockerignored(rel, patterns), f"{rel} is copied but .dockerignore'd"
    assert dockerignored(".venv/bin/python", patterns)
    assert dockerignored("gameai/__pycache__/x.pyc", patterns)
    assert dockerignored("deploy/secrets/redis_password", patterns)


@pytest.mark.parametrize("script", ["deploy/docker/healthcheck.py", "deploy/grafana/dashboards.py"])
def test_deploy_scripts_use_only_the_standard_library(script: str) -> None:
    tree = ast.parse((ROOT / script).read_text())
    modules = {alias.name.split(".")[0] for node in ast.walk(tree)
               if isinstance(node, ast.Import) for alias in node.names}
    modules |= {node.module.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module}
    assert modules and modules <= set(sys.stdlib_module_names)
