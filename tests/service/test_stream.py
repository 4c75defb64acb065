"""Streamed analysis over Server-Sent Events and gRPC server streaming: the model's values
depth by depth, the solver's proofs slice by slice, a last update saying why it stopped;
the same errors as every route; a client that goes away stops the work on the server."""

from __future__ import annotations

import time
from collections.abc import Iterator

import grpc
import httpx
import pytest

from gameai.games import get_game
from gameai.games.mnk.search import searcher
from gameai.models.oracle import solver_model
from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.service.rest.engine import sse_lines
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import RunningServer, new_store, random_ntuple, settings
from tests.service.test_rollout import wait_until

C4 = get_game("connect-four")


@pytest.fixture(scope="module")
def stream_server(redis_server: RedisServer) -> Iterator[RunningServer]:
    store: ModelStore = new_store(redis_server.url)
    for name, model in (("tictactoe", solver_model(get_game("tictactoe"))),
                        ("connect-four", random_ntuple("connect-four"))):
        record = store.publish(model.to_bytes(), by="tests")
        store.set_alias(game=name, alias="production", version=record.version, by="tests")
    running = RunningServer(settings(store, games=("tictactoe", "connect-four")), store)
    wait_until(lambda: httpx.get(f"{running.http}/readyz").status_code == 200, timeout=120)
    yield running
    running.stop()
    store.close()


def stream(server: RunningServer, game: str, body: dict[str, object]) -> list[tuple[str, dict]]:
    r = httpx.post(f"{server.http}/v1/games/{game}/analyze/stream", json=body, timeout=60)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    return sse_lines(r.text)


def count(server: RunningServer, name: str, **labels: str) -> float:
    return server.metrics.registry.get_sample_value(name, labels) or 0.0


def test_a_solved_game_streams_the_model_then_the_proof(stream_server) -> None:
    events = stream(stream_server, "tictactoe", {"board": "XO-|-X-|---"})
    assert [e for e, _ in events] == ["model", "solver", "done"]
    model, solver, done = (data for _, data in events)
    assert "depth" not in model and not model["proved"]  # a table does not search
    assert model["moves"][0]["index"] == model["best"]["index"] == 8
    assert solver["proved"] and solver["outcome"] == "loss" and solver["distance"] == 4
    assert all(m["exact"] and m["at_least"] == m["at_most"] == "loss" for m in solver["moves"])
    assert solver["best"] == {"row": 2, "col": 2, "index": 8, "value": -0.6,
                              "at_least": "loss", "at_most": "loss", "exact": True,
                              "distance": 4}
    assert done["reason"] == "proved" and done["best"] == solver["best"]


def test_a_search_streams_each_depth_then_slices_of_the_solver(stream_server) -> None:
    events = stream(stream_server, "connect-four", {"moves": "", "depth": 3,
                                                    "time_ms": 400})
    phases = [e for e, _ in events]
    assert phases[:3] == ["model"] * 3 and phases[-1] == "done"
    assert [d["depth"] for _, d in events[:3]] == [1, 2, 3]
    solver = [d for e, d in events if e == "solver"]
    assert solver and all(not d["proved"] for d in solver)
    nodes = [d["nodes"] for d in solver]
    assert nodes == sorted(nodes) and nodes[0] > 0
    done = events[-1][1]
    assert done["reason"] == "budget spent" and not done["proved"]
    assert done["elapsed_ms"] >= 400 and done["board"] == "|".join(["-------"] * 6)


def test_grpc_streams_the_same_updates(stream_server) -> None:
    with grpc.insecure_channel(stream_server.grpc) as channel:
        updates = list(move_pb2_grpc.MoveServiceStub(channel).AnalyzeStream(
            move_pb2.AnalyzeStreamRequest(game="tictactoe", board="XO-|-X-|---"), timeout=30))
    assert [u.phase for u in updates] == [move_pb2.PHASE_MODEL, move_pb2.PHASE_SOLVER,
                                          move_pb2.PHASE_DONE]
    done = updates[-1]
    assert done.proved and done.outcome == move_pb2.OUTCOME_LOSS and done.distance == 4
    assert done.best.move.index == 8 and done.best.exact and done.reason == "proved"
    assert done.to_move == move_pb2.SIDE_O


@pytest.mark.parametrize(("body", "status", "field"), [
    ({"board": "XO-|-X-|---", "time_ms": -1}, 422, "time_ms"),
    ({"board": "XO-|-X-|---", "priority": "urgent"}, 422, "priority"),
    ({"board": "XXX|OO-|---"}, 409, "board"),
    ({"board": "XO-|-X-|---", "model": "beta"}, 404, "model"),
])
def test_errors_before_the_first_event_on_both_transports(stream_server, body, status,
                                                          field) -> None:
    r = httpx.post(f"{stream_server.http}/v1/games/tictactoe/analyze/stream", json=body)
    assert r.status_code == status and r.json()["error"]["field"] == field, r.text
    request = move_pb2.AnalyzeStreamRequest(game="tictactoe", **{
        k: v for k, v in body.items() if k != "priority"})
    if "priority" in body:
        request.priority = 7  # no such priority
    with grpc.insecure_channel(stream_server.grpc) as channel, \
            pytest.raises(grpc.RpcError) as caught:
        list(move_pb2_grpc.MoveServiceStub(channel).AnalyzeStream(request, timeout=10))
    assert caught.value.code().name == {422: "INVALID_ARGUMENT", 409: "FAILED_PRECONDITION",
                                        404: "NOT_FOUND"}[status]
    assert ("gameai-field", field) in caught.value.trailing_metadata()


def _stops_searching(server: RunningServer, ended: float) -> None:
    """The shared search stops within a slice of the client's going, and stays stopped."""
    search = searcher(C4)
    wait_until(lambda: count(server, "gameai_streams_total", lane="interactive",
                             end="cancelled") >= ended, timeout=5)
    time.sleep(0.5)  # a slice running as the client went ends by itself
    before = search.nodes
    time.sleep(1.0)
    assert search.nodes == before


def test_a_cancelled_grpc_stream_stops_the_work(stream_server) -> None:
    ended = count(stream_server, "gameai_streams_total", lane="interactive", end="cancelled")
    with grpc.insecure_channel(stream_server.grpc) as channel:
        call = move_pb2_grpc.MoveServiceStub(channel).AnalyzeStream(
            move_pb2.AnalyzeStreamRequest(game="connect-four", moves="4", time_ms=20_000))
        for update in call:
            if update.phase == move_pb2.PHASE_SOLVER:
                break
        call.cancel()
    _stops_searching(stream_server, ended + 1)


def test_a_client_that_goes_away_stops_the_sse_stream(stream_server) -> None:
    ended = count(stream_server, "gameai_streams_total", lane="interactive", end="cancelled")
    with httpx.stream("POST", f"{stream_server.http}/v1/games/connect-four/analyze/stream",
                      json={"moves": "44", "time_ms": 20_000}, timeout=30) as r:
        for line in r.iter_lines():
            if line == "event: solver":
                break
    _stops_searching(stream_server, ended + 1)


def test_background_streams_are_measured_in_their_lane(stream_server) -> None:
    before = count(stream_server, "gameai_lane_wait_seconds_count", lane="background")
    events = stream(stream_server, "tictactoe", {"board": "X--|-O-|---",
                                                 "priority": "background"})
    assert events[-1][0] == "done"
    assert count(stream_server, "gameai_lane_wait_seconds_count",
                 lane="background") == before + len(events)
    assert count(stream_server, "gameai_streams_total", lane="background", end="done") >= 1


def test_a_draining_server_ends_its_streams_with_a_last_update(stream_server) -> None:
    runtime = stream_server.server.runtime
    events: list[str] = []
    started = time.monotonic()
    try:
        with httpx.stream("POST", f"{stream_server.http}/v1/games/connect-four/analyze/stream",
                          json={"moves": "444", "time_ms": 20_000}, timeout=30) as r:
            for line in r.iter_lines():
                if line.startswith("event: "):
                    events.append(line[7:])
                    if line == "event: solver":
                        runtime.draining = True
                elif line.startswith("data: ") and events[-1] == "done":
                    assert '"reason":"the server is shutting down"' in line
    finally:
        runtime.draining = False
    assert events[-1] == "done" and time.monotonic() - started < 10


def test_every_event_is_the_documented_update(stream_server) -> None:
    from gameai.service.rest.schema import StreamUpdate

    events = stream(stream_server, "connect-four", {"moves": "44", "depth": 2, "time_ms": 200})
    events += stream(stream_server, "tictactoe", {"board": "XO-|-X-|---"})
    for name, data in events:
        update = StreamUpdate.model_validate(data)
        assert update.phase.value == name
