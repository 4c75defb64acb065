"""Budgets per query (issue 27, item 2): ``depth``, ``nodes`` and ``time_ms`` on every
route that searches (best-move, evaluate, analyze, evaluate-batch), capped by the server's
limits and echoed with what was used (``search``: depth reached, nodes, time, complete,
exact), on REST and gRPC alike, with the same precise errors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest

from gameai.models import NtupleModel, TableModel
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import RunningServer, new_store, settings
from tests.service.test_ntuple import network
from tests.service.test_rollout import wait_until
from tests.service.test_top import CONNECT_FOUR, grpc_answer, rest

MAX_NODES = 200_000
MAX_TIME_MS = 2_000
MAX_DEPTH = 8
BOARDS = [CONNECT_FOUR, "-------|-------|-------|-------|-------|---X---",
          "-------|-------|-------|-------|----O--|XXX-OOX"]


@pytest.fixture(scope="module")
def connect_four() -> NtupleModel:
    return network("connect-four")


@pytest.fixture(scope="module")
def budget_server(redis_server: RedisServer, perfect: TableModel,
                  connect_four: NtupleModel) -> Iterator[RunningServer]:
    store: ModelStore = new_store(redis_server.url)
    for model in (perfect, connect_four):
        record = store.publish(model.to_bytes(), by="tests")
        store.set_alias(game=model.game.name, alias="production", version=record.version,
                        by="tests")
    running = RunningServer(settings(store, games=("tictactoe", "connect-four"),
                                     max_depth=MAX_DEPTH, max_nodes=MAX_NODES,
                                     max_time_ms=MAX_TIME_MS), store)
    wait_until(lambda: httpx.get(f"{running.http}/readyz").status_code == 200, timeout=60)
    yield running
    running.stop()
    store.close()


def as_ints(search: dict[str, Any]) -> dict[str, Any]:
    """A gRPC search report as the REST API writes it (proto3's JSON writes int64 as text
    and leaves defaults out)."""
    limits = search.get("limits", {})
    return {"depth": search.get("depth"), "nodes": int(search.get("nodes", 0)),
            "complete": search.get("complete", False), "exact": search.get("exact", False),
            "limits": {"depth": limits.get("depth"),
                       "nodes": int(limits["nodes"]) if "nodes" in limits else None,
                       "time_ms": limits.get("time_ms")}}


@pytest.mark.parametrize(("route", "method"), [("best-move", "BestMove"),
                                               ("evaluate", "Evaluate"),
                                               ("analyze", "Analyze")])
def test_a_node_budget_answers_from_the_deepest_depth_it_finished(budget_server, route,
                                                                  method):
    a = rest(budget_server, "connect-four", route, {"board": CONNECT_FOUR, "nodes": 300})
    search = a["search"]
    assert search["limits"] == {"depth": MAX_DEPTH, "nodes": 300, "time_ms": None}
    assert 0 <= search["depth"] < MAX_DEPTH and not search["complete"]
    assert search["nodes"] > 0 and search["time_us"] > 0 and not search["exact"]
    same = rest(budget_server, "connect-four", "evaluate",
                {"board": CONNECT_FOUR, "depth": search["depth"]})
    if route == "best-move":
        assert (a["move"]["index"], a["value"]) == (same["moves"][0]["index"], same["value"])
    else:
        assert [(m["index"], m["value"]) for m in a["moves"]] == [
            (m["index"], m["value"]) for m in same["moves"]]
    g = grpc_answer(budget_server, method, "connect-four", board=CONNECT_FOUR, nodes=300)
    expected = {k: v for k, v in search.items() if k != "time_us"}
    assert as_ints(g["search"]) == expected  # a node budget is deterministic


def test_budgets_above_the_servers_limits_are_capped_and_say_so(budget_server):
    a = rest(budget_server, "connect-four", "best-move",
             {"board": CONNECT_FOUR, "depth": 2, "nodes": 10 ** 12, "time_ms": 10 ** 9})
    assert a["search"]["limits"] == {"depth": 2, "nodes": MAX_NODES, "time_ms": MAX_TIME_MS}
    assert a["search"]["depth"] == 2 and a["search"]["complete"]
    g = grpc_answer(budget_server, "Evaluate", "connect-four", board=CONNECT_FOUR, depth=2,
                    nodes=10 ** 12, time_ms=10 ** 9)
    assert as_ints(g["search"])["limits"] == a["search"]["limits"]


def test_a_time_budget_stops_short_of_a_deep_search(budget_server):
    """1 ms cannot pay for 8 plies of Connect Four: the answer comes from a shallower depth,
    and says so."""
    a = rest(budget_server, "connect-four", "evaluate", {"board": CONNECT_FOUR, "time_ms": 1})
    assert a["search"]["limits"]["time_ms"] == 1
    assert a["search"]["depth"] < MAX_DEPTH and not a["search"]["complete"]
    assert a["depth"] == a["search"]["depth"]  # the values' depth is the one reached


def test_a_model_that_does_not_search_answers_by_its_values_within_any_budget(budget_server):
    plain = rest(budget_server, "tictactoe", "evaluate", {"board": "X--|-O-|---"})
    a = rest(budget_server, "tictactoe", "evaluate",
             {"board": "X--|-O-|---", "nodes": 1, "time_ms": 1})
    assert a["moves"] == plain["moves"]
    assert {k: a["search"][k] for k in ("depth", "nodes", "complete")} == {
        "depth": None, "nodes": 0, "complete": True}
    assert a["search"]["limits"] == {"depth": None, "nodes": 1, "time_ms": 1}


def test_a_batch_budget_is_for_the_whole_batch(budget_server):
    a = rest(budget_server, "connect-four", "evaluate-batch",
             {"boards": BOARDS, "nodes": 2000, "include_move_values": True})
    search = a["search"]
    assert search["limits"] == {"depth": MAX_DEPTH, "nodes": 2000, "time_ms": None}
    assert 0 < search["depth"] < MAX_DEPTH and not search["complete"]
    assert a["depth"] == search["depth"]
    same = rest(budget_server, "connect-four", "evaluate-batch",
                {"boards": BOARDS, "depth": search["depth"], "include_move_values": True})
    assert a["move_values"] == same["move_values"]
    assert same["search"]["complete"] and same["search"]["depth"] == search["depth"]
    g = grpc_answer(budget_server, "EvaluateBatch", "connect-four", boards=BOARDS, nodes=2000)
    assert as_ints(g["search"]) == {k: v for k, v in search.items() if k != "time_us"}
    plain = rest(budget_server, "connect-four", "evaluate-batch", {"boards": BOARDS})
    assert "search" not in plain and "depth" not in plain  # the network's own values


@pytest.mark.parametrize(("field", "value"), [("nodes", 0), ("nodes", -5), ("nodes", "9"),
                                              ("nodes", True), ("time_ms", 0),
                                              ("time_ms", -1), ("time_ms", 1.5)])
@pytest.mark.parametrize(("route", "method"), [("best-move", "BestMove"),
                                               ("evaluate", "Evaluate"),
                                               ("analyze", "Analyze"),
                                               ("evaluate-batch", "EvaluateBatch")])
def test_a_bad_budget_is_named_alike_on_both_transports(budget_server, field, value, route,
                                                        method):
    where = {"boards": [CONNECT_FOUR]} if route == "evaluate-batch" else {"board": CONNECT_FOUR}
    r = httpx.post(f"{budget_server.http}/v1/games/connect-four/{route}",
                   json={**where, field: value})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["field"] == field
    cap = MAX_NODES if field == "nodes" else MAX_TIME_MS
    assert error["message"].startswith(f"{field}: must be a whole number from 1 (at most "
                                       f"{cap:,} apply on this server), got "), error
    if isinstance(value, int) and not isinstance(value, bool):
        with pytest.raises(grpc.RpcError) as caught:
            grpc_answer(budget_server, method, "connect-four", **where, **{field: value})
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert caught.value.details() == error["message"]
        assert ("gameai-field", field) in caught.value.trailing_metadata()


def test_a_review_budget_is_shared_by_the_plies(budget_server):
    """A node budget for a whole review: no more is spent than given (plus the node past
    each ply's share that stopped it), each ply answers from the depth it finished, and a
    ply's values are the full search's at that depth."""
    moves = "4453"
    a = rest(budget_server, "connect-four", "review", {"moves": moves, "nodes": 4000,
                                                       "solve_ms": 0})
    search = a["search"]
    assert search["limits"] == {"depth": MAX_DEPTH, "nodes": 4000, "time_ms": None}
    assert 0 < search["nodes"] <= 4000 + len(moves) and not search["complete"]
    depths = [p["depth"] for p in a["plies"]]
    assert search["depth"] == min(depths) and max(depths) < MAX_DEPTH
    for ply, played in zip(a["plies"], range(len(moves)), strict=True):
        position = {"moves": moves[:played], "depth": ply["depth"]}
        same = rest(budget_server, "connect-four", "evaluate", position)
        assert (ply["best"]["index"], ply["value_before"]) == (same["moves"][0]["index"],
                                                               same["value"])
    g = grpc_answer(budget_server, "Review", "connect-four", moves=moves, nodes=4000,
                    solve_ms=0)
    assert as_ints(g["search"]) == {k: v for k, v in search.items() if k != "time_us"}
    assert [p["depth"] for p in g["plies"]] == depths
    plain = rest(budget_server, "connect-four", "review", {"moves": moves, "solve_ms": 0})
    assert "search" not in plain and all("depth" not in p for p in plain["plies"])


def test_a_streams_node_budget_stops_its_deepening(budget_server):
    """The streamed analysis' model phase under a node budget: depths from 0, each in full,
    until the next would pass the budget; its updates count the model's nodes, and the
    deepest one finished is the full search's at that depth."""
    from gameai.service.rest.engine import sse_lines

    body = {"board": CONNECT_FOUR, "nodes": 1000, "time_ms": 0}
    r = httpx.post(f"{budget_server.http}/v1/games/connect-four/analyze/stream", json=body,
                   timeout=60)
    assert r.status_code == 200, r.text
    model = [data for name, data in sse_lines(r.text) if name == "model"]
    depths = [u["depth"] for u in model]
    assert depths == list(range(len(depths))) and 1 < len(depths) < MAX_DEPTH
    spent = [u["model_nodes"] for u in model]
    assert spent == sorted(spent) and spent[-1] <= 1000
    same = rest(budget_server, "connect-four", "evaluate",
                {"board": CONNECT_FOUR, "depth": depths[-1]})
    assert [m["value"] for m in model[-1]["moves"]] == [m["value"] for m in same["moves"]]
    from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
    with grpc.insecure_channel(budget_server.grpc) as channel:
        updates = list(move_pb2_grpc.MoveServiceStub(channel).AnalyzeStream(
            move_pb2.AnalyzeStreamRequest(game="connect-four", board=CONNECT_FOUR,
                                          nodes=1000, time_ms=0), timeout=60))
    phases = [u for u in updates if u.phase == move_pb2.PHASE_MODEL]
    assert [u.depth for u in phases] == depths
    assert [u.model_nodes for u in phases] == spent
