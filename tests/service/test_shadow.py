"""Shadow tests of a candidate on a real server: a share of production's best-move queries
mirrored to the shadow version off the request path, the answers unchanged, agreement and
optimality counted in the metrics and the store, shown in the listings; a full queue
drops and counts."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import pytest

from gameai.games import get_game
from gameai.games.mnk.positions import live_boards
from gameai.models import TableModel
from gameai.service.gen.gameai.v1 import models_pb2, models_pb2_grpc
from gameai.service.metrics import Metrics
from gameai.service.registry import Registry
from gameai.service.shadow import Shadow
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import RunningServer, new_store, settings, weak_model
from tests.service.test_rollout import wait_until

BOARDS = live_boards(get_game("tictactoe"))[:40]


@pytest.fixture(scope="module")
def shadowed(redis_server: RedisServer, perfect: TableModel
             ) -> Iterator[tuple[RunningServer, ModelStore]]:
    """Production: the perfect model (version 1); shadow: a model that knows nothing and
    plays the first free cell (version 2), at 100%."""
    store: ModelStore = new_store(redis_server.url)
    store.publish(perfect.to_bytes(), by="tests")
    store.publish(weak_model().to_bytes(), by="tests")
    store.set_alias(game="tictactoe", alias="production", version=1, by="tests")
    store.set_shadow(game="tictactoe", version=2, share=100, by="tests")
    running = RunningServer(settings(store), store)
    wait_until(lambda: running.registry.served("tictactoe").shadow_share == 100)
    yield running, store
    running.stop()
    store.close()


def sample(server: RunningServer, name: str, **labels: str) -> float:
    return server.metrics.registry.get_sample_value(name, labels) or 0.0


def best_moves(server: RunningServer, boards: list[str], **extra: str) -> list[int]:
    with httpx.Client(base_url=server.http, timeout=10) as http:
        return [http.post("/v1/games/tictactoe/best-move",
                          json={"board": b, **extra}).json()["move"]["index"] for b in boards]


def test_shadowed_queries_are_compared_and_never_change_the_answer(shadowed) -> None:
    server, store = shadowed
    shadow = server.server.shadow
    before = shadow.processed
    answers = best_moves(server, BOARDS)
    assert answers == best_moves(server, BOARDS, model="1")  # production's own answers
    wait_until(lambda: shadow.processed >= before + len(BOARDS))
    labels = {"game": "tictactoe", "version": "2"}
    compared = sample(server, "gameai_shadow_compared_total", **labels)
    agreed = sample(server, "gameai_shadow_agreed_total", **labels)
    assert compared == len(BOARDS)  # the explicit "1" queries were not production's track
    assert 0 < agreed < compared  # the empty model plays the first free cell
    assert sample(server, "gameai_shadow_proved_total", **labels) == compared
    assert sample(server, "gameai_shadow_optimal_total", **labels,
                  model="production") == compared
    assert sample(server, "gameai_shadow_optimal_total", **labels, model="shadow") < compared
    assert sample(server, "gameai_shadow_share", game="tictactoe") == 100

    def stored() -> bool:
        reports = store.shadow_reports(game="tictactoe", version=2)
        return bool(reports) and reports[0].compared == compared
    wait_until(stored)
    (report,) = store.shadow_reports(game="tictactoe", version=2)
    assert (report.production, report.agreed, report.production_optimal) == (
        1, agreed, compared)
    listing = httpx.get(f"{server.http}/v1/games/tictactoe/models").json()
    assert listing["shadow"]["version"] == 2 and listing["shadow"]["share"] == 100
    assert listing["shadow"]["compared"] == compared
    assert listing["shadow"]["summary"].startswith(f"version 2 against production 1: "
                                                   f"{int(compared)} queries compared")
    with grpc.insecure_channel(server.grpc) as channel:
        reply = models_pb2_grpc.ModelServiceStub(channel).ListModels(
            models_pb2.ListModelsRequest(game="tictactoe"))
    assert (reply.shadow.version, reply.shadow.share, reply.shadow.compared) == (
        2, 100, compared)
    games = httpx.get(f"{server.http}/v1/games").json()["games"]
    assert games[0]["shadow_share"] == 100


def test_a_share_mirrors_exactly_that_share(shadowed) -> None:
    server, store = shadowed
    store.set_shadow(game="tictactoe", version=None, share=25, by="tests")
    wait_until(lambda: server.registry.served("tictactoe").shadow_share == 25)
    shadow = server.server.shadow
    before = shadow.processed
    best_moves(server, BOARDS)
    wait_until(lambda: shadow.processed >= before + len(BOARDS) // 4)
    assert shadow.processed == before + len(BOARDS) // 4
    store.set_shadow(game="tictactoe", version=None, share=100, by="tests")
    wait_until(lambda: server.registry.served("tictactoe").shadow_share == 100)


def test_a_full_queue_drops_and_counts(shadowed) -> None:
    _server, store = shadowed
    metrics = Metrics()
    registry = Registry(store, ("tictactoe",), metrics)
    registry.store_up = True
    registry.refresh()
    shadow = Shadow(registry, metrics, queue_size=1)  # no worker thread: steps by hand
    session = registry.served("tictactoe").models[1]
    for board in BOARDS[:3]:
        shadow.offer("tictactoe", session, board, "", None)
    assert shadow.work() == 1  # the one buffered; the other two were dropped
    assert metrics.registry.get_sample_value("gameai_shadow_dropped_total",
                                             {"game": "tictactoe"}) == 2
    assert metrics.registry.get_sample_value("gameai_shadow_compared_total",
                                             {"game": "tictactoe", "version": "2"}) == 1
    before = sum(r.dropped for r in store.shadow_reports(game="tictactoe", version=2))
    shadow.flush()
    after = sum(r.dropped for r in store.shadow_reports(game="tictactoe", version=2))
    assert after == before + 2
    other = registry.served("tictactoe").models[2]
    shadow.offer("tictactoe", other, BOARDS[0], "", None)  # not production's answer
    assert shadow.work() == 0
