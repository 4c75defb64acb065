"""Issue 28 item 2: every shipped Kubernetes overlay and component gets ready from an empty
store. Each is rendered with ``kubectl kustomize`` (tests/deploy/test_k8s.py) and its
servers and trainers are run here as processes with the rendered arguments and settings;
only what cannot be the same on one machine is changed: the store is a private
redis-server (its URL in the file ``GAMEAI_STORE_URL_FILE`` names), every port a free
loopback one, and the Ray trainer joins a real one-node Ray cluster started here instead of
KubeRay's. The test passes when every server's ``/readyz`` says 200 and names a production
version for each game it serves; the Connect Four trainer gets there by publishing the
bundled starting model (``--resume`` on an empty store), the tic-tac-toe trainer by
learning."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from gameai.store.embedded import RedisServer, free_port
from tests.deploy.test_k8s import SHIPPED, Role, render_shipped, roles

READY_SECONDS = 240  # the tic-tac-toe trainer learns its first version: seconds, at load


def on_this_machine(role: Role, *, url_file: Path, cache: str, ray: str | None
                    ) -> tuple[list[str], dict[str, str], dict[str, int]]:
    """The role's command and environment as run here, and the ports it listens on."""
    args = list(role.args)
    if "--host" in args:
        args[args.index("--host") + 1] = "127.0.0.1"
    if "--cluster" in args:
        assert ray is not None, f"{role.name} needs a Ray cluster"
        args[args.index("--cluster") + 1] = ray
    env = {**os.environ, **role.env, "GAMEAI_STORE_URL_FILE": str(url_file),
           "GAMEAI_HOST": "127.0.0.1", "GAMEAI_CACHE_DIR": cache, "HOME": cache}
    env.pop("GAMEAI_STORE_URL", None)
    ports = ({"http": free_port(), "grpc": free_port()} if args[0] == "serve"
             else {"metrics": free_port()})
    if args[0] == "serve":
        env |= {"GAMEAI_HTTP_PORT": str(ports["http"]), "GAMEAI_GRPC_PORT": str(ports["grpc"]),
                "GAMEAI_WORKERS": "1"}  # one process a server here: two cores for all
    else:
        env["GAMEAI_METRICS_PORT"] = str(ports["metrics"])
    return [sys.executable, "-m", "gameai", *args], env, ports


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real one-node Ray cluster for the ray-trainer component's trainer."""
    pytest.importorskip("ray", reason="the Ray backend is the extra gameai[ray]")
    from tests.trainer.raycluster import loopback_cluster

    with loopback_cluster(workers=0, cpus=1, connect=False) as cluster:
        yield cluster.address


@pytest.mark.parametrize("case", sorted(SHIPPED))
def test_every_overlay_gets_ready_from_an_empty_store_as_processes(
        case: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    docs = render_shipped(case, tmp_path)
    found = roles(docs)
    servers = [r for r in found if r.args[0] == "serve"]
    assert servers and any(r.args[0] == "trainer" for r in found), [r.name for r in found]
    ray = (request.getfixturevalue("ray_head")
           if any("--cluster" in r.args for r in found) else None)
    cache = str(tmp_path / "cache")
    with RedisServer(tmp_path / "redis", tcp=True, persist=False) as redis_server:
        url_file = tmp_path / "store-url"
        url_file.write_text(redis_server.url + "\n")
        children: list[tuple[Role, subprocess.Popen[bytes], dict[str, int], Path]] = []
        try:
            for i, role in enumerate(found):
                argv, env, ports = on_this_machine(role, url_file=url_file, cache=cache,
                                                   ray=ray)
                log = tmp_path / f"{i}-{role.args[0]}.log"
                with log.open("wb") as out:
                    child = subprocess.Popen(argv, env=env, stdout=out,
                                             stderr=subprocess.STDOUT)
                children.append((role, child, ports, log))
            for role, _, ports, _ in children:
                if role.args[0] == "serve":
                    body = _ready(ports["http"], children)
                    served = role.env.get("GAMEAI_GAMES", "tictactoe").split(",")
                    assert sorted(body["games"]) == sorted(served), body
                    assert all(body["games"][g]["ready"] and body["games"][g]["aliases"]
                               .get("production") for g in served), body
        finally:
            for _, child, _, _ in children:
                child.send_signal(signal.SIGTERM)
            for _, child, _, _ in children:
                try:
                    child.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
    shutil.rmtree(tmp_path / "cache", ignore_errors=True)


def _ready(port: int, children: list[tuple[Role, subprocess.Popen[bytes], dict[str, int],
                                           Path]]) -> dict[str, Any]:
    """Poll the server's /readyz until 200; fail with the children's logs if one dies or
    the deadline passes."""
    deadline = time.monotonic() + READY_SECONDS
    last: Any = None
    while time.monotonic() < deadline:
        for role, child, _, log in children:
            if child.poll() is not None:
                pytest.fail(f"{role.name} exited {child.returncode}:\n"
                            f"{log.read_text(errors='replace')[-3000:]}")
        try:
            answer = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
            last = answer.json()
            if answer.status_code == 200:
                return dict(last)
        except (httpx.HTTPError, ValueError) as e:
            last = repr(e)
        time.sleep(0.5)
    logs = "\n".join(f"--- {r.name}\n{log.read_text(errors='replace')[-2000:]}"
                     for r, _, _, log in children)
    pytest.fail(f"not ready in {READY_SECONDS} s; last /readyz: {last}\n{logs}")
