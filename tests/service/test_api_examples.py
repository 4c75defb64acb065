"""docs/api.md's examples, run against a live server: every ``curl`` command with real curl,
the ``grpcurl`` request through the Python client, and every answer the page shows
compared with the live one, so the page cannot drift from what the server says.

The page's store: tictactoe versions 1-5 (the solver's perfect model), production at 3;
three-mens-morris version 1 (its solver's model); connect-four version 1 (a small n-tuple
network of seeded random weights: a model that searches); the admin token in ``$TOKEN``.
An answer is shown as ``#`` lines under its command; they are joined without the ``# ``
and the indentation, and compared as JSON, where the string ``"..."`` stands for any
string (a timestamp) or whole number (a time taken); a stream of Server-Sent Events is
shown as ``event: NAME`` lines, each followed by its data.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format

from gameai.games import get_game
from gameai.models import TableModel
from gameai.models.oracle import solver_model
from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.service.rest.engine import sse_lines
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import (
    ADMIN_TOKEN,
    RunningServer,
    new_store,
    random_ntuple,
    settings,
    variant,
)
from tests.service.test_rollout import wait_until

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
HOST = "localhost:8000"
GRPC_HOST = "localhost:50051"


@dataclass
class Example:
    line: int
    command: str
    shown: str | None  # the answer the page shows, joined; None when it shows none
    lines: tuple[str, ...] = ()  # the same, line by line (a stream of events)

    @property
    def events(self) -> bool:
        return bool(self.lines) and self.lines[0].startswith("event: ")


def examples(text: str) -> list[Example]:
    """Every command of the page's ``sh`` blocks with the answer shown under it."""
    found: list[Example] = []
    block = False
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            block = line.strip() == "```sh" if not block else False
            i += 1
            continue
        if block and line.startswith(("curl ", "grpcurl ")):
            start, command = i + 1, line
            while command.endswith("\\"):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            shown = []
            while i + 1 < len(lines) and lines[i + 1].startswith("#"):
                i += 1
                shown.append(lines[i].lstrip("#").strip())
            found.append(Example(start, command, "".join(shown) or None, tuple(shown)))
        i += 1
    return found


def matches(shown: Any, live: Any) -> bool:
    """``live`` is ``shown``, where a shown ``"..."`` stands for any string (a timestamp)
    or any whole number (milliseconds taken)."""
    if shown == "...":
        return isinstance(live, str) or (isinstance(live, int) and not isinstance(live, bool))
    if isinstance(shown, dict):
        return isinstance(live, dict) and shown.keys() == live.keys() and all(
            matches(shown[k], live[k]) for k in shown)
    if isinstance(shown, list):
        return isinstance(live, list) and len(shown) == len(live) and all(
            matches(a, b) for a, b in zip(shown, live, strict=True))
    return bool(shown == live) and type(shown) is type(live)


@pytest.fixture(scope="module")
def page_server(redis_server: RedisServer, perfect: TableModel) -> Iterator[RunningServer]:
    store: ModelStore = new_store(redis_server.url)
    for number in range(1, 6):
        store.publish(variant(perfect, algorithm="solver", games_played=number), by="docs")
    store.set_alias(game="tictactoe", alias="production", version=3, by="docs")
    morris = store.publish(solver_model(get_game("three-mens-morris")).to_bytes(), by="docs")
    store.set_alias(game="three-mens-morris", alias="production", version=morris.version,
                    by="docs")
    network = store.publish(random_ntuple("connect-four").to_bytes(), by="docs")
    store.set_alias(game="connect-four", alias="production", version=network.version,
                    by="docs")
    running = RunningServer(settings(store, games=("tictactoe", "three-mens-morris",
                                                   "connect-four")), store)
    # warming compiles the network's search, which may outlast the server's own wait
    wait_until(lambda: httpx.get(f"{running.http}/readyz").status_code == 200, timeout=60)
    yield running
    running.stop()
    store.close()


def shown_events(lines: tuple[str, ...]) -> list[list[Any]]:
    """A stream of Server-Sent Events as the page shows it: ``event: NAME`` then its data
    (``data: {...``, continued on the following lines), as ``[name, data]`` pairs."""
    out: list[list[Any]] = []
    for line in lines:
        if line.startswith("event: "):
            out.append([line[7:], ""])
        else:
            out[-1][1] += line.removeprefix("data: ")
    return [[name, json.loads(data)] for name, data in out]


def run_curl(command: str, server: RunningServer) -> str:
    assert HOST in command, command
    command = command.replace(HOST, server.http.removeprefix("http://"))
    done = subprocess.run(["bash", "-c", command + " --silent --show-error --fail-with-body"],
                          capture_output=True, text=True, timeout=30,
                          env={**os.environ, "TOKEN": ADMIN_TOKEN})
    assert done.returncode == 0, f"{command}\n{done.stdout}{done.stderr}"
    return done.stdout


def run_grpcurl(command: str, server: RunningServer) -> str:
    """A ``grpcurl -plaintext -d JSON HOST Service/Method`` request, sent with the Python
    client (grpcurl itself is not part of the install)."""
    words = shlex.split(command)
    assert words[-2] == GRPC_HOST and "-plaintext" in words, command
    body = json.loads(words[words.index("-d") + 1])
    service, method = words[-1].rsplit("/", 1)
    assert service == "gameai.v1.MoveService", command
    request = json_format.ParseDict(body, getattr(move_pb2, f"{method}Request")())
    with grpc.insecure_channel(server.grpc) as channel:
        reply = getattr(move_pb2_grpc.MoveServiceStub(channel), method)(request, timeout=10)
    return json.dumps(json_format.MessageToDict(reply, preserving_proto_field_name=True))


def test_the_page_has_examples() -> None:
    found = examples(DOC.read_text())
    assert sum(e.command.startswith("curl") for e in found) >= 5
    assert sum(e.shown is not None for e in found) >= 4
    assert any(e.events for e in found)  # a stream of Server-Sent Events is checked too


def test_every_example_answers_as_the_page_shows(page_server: RunningServer) -> None:
    for example in examples(DOC.read_text()):
        runner = run_curl if example.command.startswith("curl") else run_grpcurl
        live = runner(example.command, page_server)
        if example.shown is None:
            continue
        where = f"docs/api.md line {example.line}: {example.command}"
        if example.events:
            shown, answer = shown_events(example.lines), [list(e) for e in sse_lines(live)]
        else:
            shown, answer = json.loads(example.shown), json.loads(live)
        assert matches(shown, answer), f"{where}\nthe page shows {example.shown}\nlive: {live}"


def test_the_comparison_catches_a_drifted_answer() -> None:
    assert matches({"at": "...", "to": 4}, {"at": "2026-01-01", "to": 4})
    assert not matches({"to": 4}, {"to": 5})
    assert not matches({"value": 0.9}, {"value": 1.0})
    assert not matches({"value": 0}, {"value": 0.0})  # 0 and 0.0 print differently
    assert not matches([1, 2], [1, 2, 3])
    assert matches({"elapsed_ms": "..."}, {"elapsed_ms": 12})
    assert not matches({"elapsed_ms": "..."}, {"elapsed_ms": 1.5})
