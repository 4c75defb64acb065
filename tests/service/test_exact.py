"""Exact play at level best (:mod:`gameai.service.exact`), with real servers over one real
store: a position the solver proves within the game's budget is answered with the proved
move and ``exact: true`` on both transports, the proof is written to the store's shared
table, a second server reads it from there (a hit, no solve), the table stays within its
bound, and an early position the budget cannot prove gets the network's move with
``exact: false``."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import pytest

from gameai.games import get_game
from gameai.service.analysis import SOLUTIONS
from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import RunningServer, empty_model, new_store
from tests.service.test_rollout import wait_until

GAME = "connect-four"
C4 = get_game(GAME)
DRAWN = "111561466663112343747547223422774655235375"  # a drawn 42-ply game
LATE = DRAWN[:28]  # O loses in 14 plies whatever it does but in column 5 (then in 14, too)
EARLY = "4453"


@pytest.fixture
def c4_store(redis_server: RedisServer) -> Iterator[ModelStore]:
    """A store whose Connect Four production knows nothing: it plays the first legal
    column, so a proved move is told apart from the network's."""
    store = new_store(redis_server.url)
    record = store.publish(empty_model(GAME).to_bytes(), by="tests")
    store.set_alias(game=GAME, alias="production", version=record.version, by="tests")
    SOLUTIONS.forget()  # each server of a test starts as a fresh process would
    yield store
    store.close()
    SOLUTIONS.forget()


def best(server: RunningServer, moves: str) -> dict:
    r = httpx.post(f"{server.http}/v1/games/{GAME}/best-move", json={"moves": moves},
                   timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def ready(server: RunningServer) -> RunningServer:
    """The server once its production is loaded (a network that searches warms for
    seconds on a loaded machine)."""
    wait_until(lambda: httpx.get(f"{server.http}/readyz").status_code == 200, timeout=60)
    return server


def sample(server: RunningServer, name: str, **labels: str) -> float:
    assert server.server.exact.flush()  # proofs are written off the request path
    return server.metrics.registry.get_sample_value(name, {"game": GAME, **labels}) or 0.0


def optimal_columns(moves: str) -> set[int]:
    return {m % C4.cols for m in C4.solve(C4.parse_moves(moves)).optimal_moves}


def test_a_late_position_gets_the_proved_move_on_both_transports(c4_store, start_server):
    server = start_server(c4_store, games=(GAME,), exact_ms=((GAME, 200),))
    network = best(start_server(c4_store, games=(GAME,), exact_ms=()), LATE)
    assert network["exact"] is False
    assert network["move"]["col"] not in optimal_columns(LATE)  # the network errs here
    body = best(server, LATE)
    assert body["exact"] is True and body["level"] == "best"
    assert body["move"]["col"] in optimal_columns(LATE)
    with grpc.insecure_channel(server.grpc) as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        answer = stub.BestMove(move_pb2.BestMoveRequest(game=GAME, moves=LATE))
    assert answer.exact and answer.move.col == body["move"]["col"]
    assert sample(server, "gameai_proved_writes_total", result="written") == 1
    assert sample(server, "gameai_proved_size") == 1
    assert sample(server, "gameai_exact_moves_total", exact="true") == 2
    assert c4_store.proved().get(C4.parse_moves(LATE)) is not None


def test_an_opening_whose_optimal_moves_alone_are_proved_gets_an_exact_move(c4_store,
                                                                          start_server):
    """Four plies in, X wins quickly by either of two columns: the budget proves that much
    (the score and one null-window search a move) though not every move's exact score, so
    the answer is exact, valued a win, and nothing goes to the table (no whole solution);
    asked again, the proof is held."""
    server = start_server(c4_store, games=(GAME,), exact_ms=((GAME, 1000),))
    body = best(server, "4454")
    assert body["exact"] is True and body["value"] == 1.0
    proof = C4.prove_optimal(C4.parse_moves("4454"))  # checked against solve() in tests/games
    assert body["move"]["col"] in {m % C4.cols for m in proof.optimal_moves} == {2, 5}
    assert sample(server, "gameai_proved_writes_total", result="written") == 0
    assert server.server.exact.held(C4.parse_moves("4454")) is not None
    assert best(server, "4454") == body
    assert sample(server, "gameai_exact_moves_total", exact="true") == 2


def test_a_request_gives_the_solver_its_own_budget(c4_store, start_server):
    """``solve_ms`` at level best: the solver's budget for that request, on a server whose
    game has none (REST and gRPC alike); 0 asks for no proof; at another level, or out of
    range, it is refused with its name, never ignored."""
    server = start_server(c4_store, games=(GAME,), exact_ms=())
    assert best(server, LATE)["exact"] is False  # the game has no budget here
    url = f"{server.http}/v1/games/{GAME}/best-move"
    body = httpx.post(url, json={"moves": LATE, "solve_ms": 5000}, timeout=30).json()
    assert body["exact"] is True and body["move"]["col"] in optimal_columns(LATE)
    SOLUTIONS.forget()
    with grpc.insecure_channel(server.grpc) as channel:
        stub = move_pb2_grpc.MoveServiceStub(channel)
        answer = stub.BestMove(move_pb2.BestMoveRequest(game=GAME, moves=DRAWN[:30],
                                                        solve_ms=5000))
        assert answer.exact
        assert not stub.BestMove(move_pb2.BestMoveRequest(game=GAME, moves=DRAWN[:32],
                                                          solve_ms=0)).exact
        with pytest.raises(grpc.RpcError) as refused:
            stub.BestMove(move_pb2.BestMoveRequest(game=GAME, moves=LATE, level="casual",
                                                   solve_ms=100))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "solve_ms" in refused.value.details()
    for wrong, says in (({"level": "casual", "seed": 1}, "applies at level best only"),
                        ({}, "from 0 to 30000")):
        for value in ([100] if wrong else [-1, "100", True, 1.5, 10**6]):
            r = httpx.post(url, json={"moves": LATE, "solve_ms": value, **wrong}, timeout=30)
            assert r.status_code == 422, (value, r.text)
            assert r.json()["error"]["field"] == "solve_ms" and says in r.text, r.text


def test_other_levels_are_never_exact(c4_store, start_server):
    server = start_server(c4_store, games=(GAME,), exact_ms=((GAME, 200),))
    r = httpx.post(f"{server.http}/v1/games/{GAME}/best-move",
                   json={"moves": LATE, "level": "beginner", "seed": 3}, timeout=30)
    assert r.status_code == 200 and r.json()["exact"] is False


def test_a_second_server_reads_the_first_servers_proof(c4_store, redis_server, start_server):
    first = start_server(c4_store, games=(GAME,), exact_ms=((GAME, 200),))
    assert best(first, LATE)["exact"] is True
    assert sample(first, "gameai_proved_misses_total") == 1
    SOLUTIONS.forget()  # the second server is another process: it holds nothing
    other = ModelStore.from_url(redis_server.url, prefix=c4_store.prefix)
    try:
        second = start_server(other, games=(GAME,), exact_ms=((GAME, 200),))
        body = best(second, LATE)
    finally:
        other.close()
    assert body["exact"] is True and body["move"]["col"] in optimal_columns(LATE)
    assert sample(second, "gameai_proved_hits_total") == 1
    assert sample(second, "gameai_proved_writes_total", result="written") == 0  # no solve


def test_hints_read_and_write_the_shared_table(c4_store, start_server):
    server = start_server(c4_store, games=(GAME,), exact_ms=((GAME, 200),))
    late = DRAWN[:30]
    r = httpx.post(f"{server.http}/v1/games/{GAME}/analyze", json={"moves": late},
                   timeout=30)
    assert r.status_code == 200 and r.json()["outcome"] == "win"
    assert sample(server, "gameai_proved_writes_total", result="written") == 1
    SOLUTIONS.forget()
    r = httpx.post(f"{server.http}/v1/games/{GAME}/analyze", json={"moves": late},
                   timeout=30)
    assert r.json()["outcome"] == "win" and sample(server, "gameai_proved_hits_total") == 1


def test_the_table_stays_within_its_bound(c4_store, start_server):
    server = start_server(c4_store, games=(GAME,), exact_ms=((GAME, 200),), proved_max=1)
    assert best(server, DRAWN[:28])["exact"] is True
    assert best(server, DRAWN[:30])["exact"] is True  # proved, played, not kept in the table
    assert sample(server, "gameai_proved_writes_total", result="written") == 1
    assert sample(server, "gameai_proved_writes_total", result="full") == 1
    assert c4_store.proved().size(game=GAME) == 1


def test_an_early_position_under_a_tiny_budget_gets_the_networks_move(c4_store,
                                                                       start_server):
    server = start_server(c4_store, games=(GAME,), exact_ms=((GAME, 1),))
    network = best(start_server(c4_store, games=(GAME,), exact_ms=()), EARLY)
    body = best(server, EARLY)
    assert body["exact"] is False and body["move"] == network["move"]
    assert sample(server, "gameai_exact_moves_total", exact="false") == 1
    assert c4_store.proved().size(game=GAME) == 0


def test_a_game_without_a_budget_never_reads_the_table(c4_store, start_server):
    c4_store.proved().put(C4.parse_moves(LATE), C4.solve(C4.parse_moves(LATE)))
    server = start_server(c4_store, games=(GAME,), exact_ms=())
    assert best(server, LATE)["exact"] is False
    assert sample(server, "gameai_proved_hits_total") == 0


def test_a_network_that_searches_for_its_best_move_alone_plays_the_proved_one(
        redis_server, start_server):
    """An n-tuple network's search at level best values its best move only; where that is
    not optimal, the proved move is still answered (once a 500: no value for it)."""
    from tests.service.conftest import random_ntuple

    erred = "427426425534354554127"  # the network plays column 3; only column 6 is optimal
    store = new_store(redis_server.url)
    try:
        record = store.publish(random_ntuple(GAME).to_bytes(), by="tests")
        store.set_alias(game=GAME, alias="production", version=record.version, by="tests")
        network = best(ready(start_server(store, games=(GAME,), exact_ms=())), erred)
        assert network["move"]["col"] not in optimal_columns(erred)
        body = best(ready(start_server(store, games=(GAME,), exact_ms=((GAME, 200),))),
                    erred)
    finally:
        store.close()
        SOLUTIONS.forget()
    assert body["exact"] is True and body["move"]["col"] in optimal_columns(erred)
    assert "depth" in body


def test_a_stage_the_solver_keeps_failing_is_tried_one_time_in_ten():
    from gameai.service.exact import PROBE_EVERY, TRIES_BEFORE_JUDGING, Stages

    stages, early, late = Stages(), (GAME, 40), (GAME, 10)
    for _ in range(TRIES_BEFORE_JUDGING):
        assert stages.worth_trying(early) and stages.worth_trying(late)
        stages.count(early, proved=False)
        stages.count(late, proved=True)
    asked = [stages.worth_trying(early) for _ in range(3 * PROBE_EVERY)]
    assert sum(asked) == 3  # probes: the rate is measured again
    assert all(stages.worth_trying(late) for _ in range(3 * PROBE_EVERY))


def test_a_requests_own_budget_is_always_tried_and_teaches_the_stages_nothing():
    """``prove(..., learn=False)`` (a request's ``solve_ms``): tried in a stage the game's
    budget has given up on, and its failures are not counted there."""
    from gameai.service.exact import PROBE_EVERY, TRIES_BEFORE_JUDGING, ExactPlay, stage_of
    from gameai.service.metrics import Metrics

    exact = ExactPlay(None, Metrics(), {GAME: 1})
    early = C4.parse_moves("4343")  # not proved in a fraction of a millisecond
    stage = stage_of(early)
    try:
        for _ in range(TRIES_BEFORE_JUDGING + 2):
            assert exact.prove(early, 0.0002, learn=False) is None
        assert all(exact.stages.worth_trying(stage) for _ in range(PROBE_EVERY))  # untaught
        for _ in range(TRIES_BEFORE_JUDGING):
            assert exact.prove(early, 0.0002) is None  # the game's budget: counted
        assert sum(exact.stages.worth_trying(stage) for _ in range(PROBE_EVERY)) == 1
        proof = exact.prove(C4.parse_moves("4454"), 2.0, learn=False)  # ply 4: that stage
        assert proof is not None and proof.value == 1  # the game's budget would skip
    finally:
        exact.close()


def test_a_stage_that_proves_less_than_half_gets_half_the_budget():
    from gameai.service.exact import THIN_BUDGET, TRIES_BEFORE_JUDGING, Stages

    stages, seldom, often = Stages(), (GAME, 9), (GAME, 7)
    assert stages.budget_share(seldom) == 1.0  # not judged yet: the whole budget
    for i in range(TRIES_BEFORE_JUDGING):
        stages.count(seldom, proved=i < 3)  # 30% proved
        stages.count(often, proved=i < 6)  # 60%
    assert stages.budget_share(seldom) == THIN_BUDGET < 1.0
    assert stages.budget_share(often) == 1.0
    for _ in range(2 * TRIES_BEFORE_JUDGING):  # the stage starts proving: all of it again
        stages.count(seldom, proved=True)
    assert stages.budget_share(seldom) == 1.0


def test_a_stage_whose_probes_keep_failing_is_probed_ever_more_seldom():
    from gameai.service.exact import MAX_PROBE_EVERY, PROBE_EVERY, TRIES_BEFORE_JUDGING, Stages

    stages, early = Stages(), (GAME, 40)
    for _ in range(TRIES_BEFORE_JUDGING):
        stages.worth_trying(early)
        stages.count(early, proved=False)

    def next_probe() -> int:
        """Requests until the stage is probed (the probe counted as failing)."""
        for asked in range(1, 10 * MAX_PROBE_EVERY):
            if stages.worth_trying(early):
                return asked
        raise AssertionError("never probed")

    gaps = [next_probe() for _ in range(10)]
    for _ in range(9):
        stages.count(early, proved=False)
        gaps.append(next_probe())
    assert gaps[:10] == [PROBE_EVERY] * 10  # uncounted probes change nothing
    assert gaps[10:] == [min(PROBE_EVERY * 2 ** n, MAX_PROBE_EVERY) for n in range(1, 10)]
    stages.count(early, proved=True)  # a probe that proves brings the probes back
    assert next_probe() == PROBE_EVERY


def test_reviews_and_streams_share_their_proofs(c4_store, start_server):
    """A review's proofs go to the shared table; a streamed analysis on another server
    reads one from there instead of solving it."""
    first = start_server(c4_store, games=(GAME,), exact_ms=((GAME, 200),))
    r = httpx.post(f"{first.http}/v1/games/{GAME}/review",
                   json={"moves": DRAWN, "solve_ms": 2000}, timeout=60)
    assert r.status_code == 200, r.text
    proved = r.json()["proved"]
    assert proved > 0
    assert sample(first, "gameai_proved_writes_total", result="written") == proved
    assert c4_store.proved().size(game=GAME) == proved
    SOLUTIONS.forget()
    second = start_server(c4_store, games=(GAME,), exact_ms=((GAME, 200),))
    with httpx.stream("POST", f"{second.http}/v1/games/{GAME}/analyze/stream",
                      json={"moves": DRAWN[:40], "time_ms": 2000}, timeout=60) as events:
        text = "".join(events.iter_text())
    assert '"proved"' in text
    assert sample(second, "gameai_proved_hits_total") == 1
    assert sample(second, "gameai_proved_writes_total", result="written") == 0


def test_a_miss_costs_no_round_trip_once_the_index_has_read_the_table(c4_store,
                                                                       start_server):
    """Each server keeps an index of the table's keys (read off the request path): once it
    has read them, a position the table does not hold is a miss without asking the store,
    and a position another writer (the book builder) adds is found once it is read."""
    held = C4.parse_moves(DRAWN[:30])
    c4_store.proved().put(held, C4.solve(held))
    server = start_server(c4_store, games=(GAME,), exact_ms=((GAME, 1),))
    assert best(server, EARLY)["exact"] is False  # the first lookup: the index is made
    wait_until(lambda: sample(server, "gameai_proved_indexed") == 1, timeout=10)
    unasked = sample(server, "gameai_proved_unasked_total")  # 0, or 1 if read at once
    assert best(server, "4343")["exact"] is False
    assert sample(server, "gameai_proved_unasked_total") == unasked + 1
    assert sample(server, "gameai_proved_misses_total") == 2
    late = C4.parse_moves(LATE)
    c4_store.proved().put(late, C4.solve(late))  # as the book builder writes
    wait_until(lambda: sample(server, "gameai_proved_indexed") == 2, timeout=10)
    assert best(server, LATE)["exact"] is True
    assert sample(server, "gameai_proved_hits_total") == 1
    assert sample(server, "gameai_proved_writes_total", result="written") == 0  # no solve


def test_a_proved_move_is_valued_by_its_proof(c4_store, start_server):
    """An exact answer's value is the proof's (1 a win for the mover, 0 a draw, -1 a loss),
    whether the proof settles the move alone (no search then) or the network chooses among
    several optimal moves."""
    server = start_server(c4_store, games=(GAME,), exact_ms=((GAME, 200),))
    for moves in (DRAWN[:25], LATE, DRAWN[:37], DRAWN[:39], DRAWN[:26]):
        solution = C4.solve(C4.parse_moves(moves))
        body = best(server, moves)
        assert body["exact"] is True and body["move"]["col"] in optimal_columns(moves)
        assert body["value"] == solution.value, moves  # an optimal move keeps the value
        with grpc.insecure_channel(server.grpc) as channel:
            answer = move_pb2_grpc.MoveServiceStub(channel).BestMove(
                move_pb2.BestMoveRequest(game=GAME, moves=moves))
        assert answer.exact and answer.value == solution.value
        assert answer.move.col == body["move"]["col"]
    assert len(C4.solve(C4.parse_moves(DRAWN[:39])).optimal_moves) == 3  # chosen by the net


def test_what_the_budget_did_not_prove_is_proved_in_the_background(c4_store, redis_server,
                                                                    start_server):
    """A position the request's 1 ms did not prove goes to the background prover (its own
    solver and table, the lowest priority), which writes the proof to the shared table:
    the next request for it is exact, on this server and on another."""
    from gameai.games.mnk.search import forget_shared

    forget_shared()  # the request path's solver starts from an empty table
    middle = DRAWN[:12]
    server = start_server(c4_store, games=(GAME,), exact_ms=((GAME, 1),),
                          exact_background_ms=((GAME, 30_000),))
    assert best(server, middle)["exact"] is False
    assert server.server.exact.prover.wait(60)
    assert sample(server, "gameai_proved_background_total", result="proved") == 1
    assert c4_store.proved().get(C4.parse_moves(middle)) is not None
    body = best(server, middle)
    assert body["exact"] is True and body["move"]["col"] in optimal_columns(middle)
    SOLUTIONS.forget()  # another server holds nothing of its own
    other = ModelStore.from_url(redis_server.url, prefix=c4_store.prefix)
    try:
        second = start_server(other, games=(GAME,), exact_ms=((GAME, 1),))
        assert best(second, middle)["exact"] is True
        assert sample(second, "gameai_proved_hits_total") == 1
    finally:
        other.close()


def test_the_background_queue_is_bounded_and_holds_a_position_once(monkeypatch):
    """At most BACKGROUND_QUEUED positions wait, each once; a new one pushes out the
    oldest (the newest are the likeliest to be met again)."""
    from prometheus_client import CollectorRegistry

    from gameai.service import exact as module
    from gameai.service.metrics import Metrics

    monkeypatch.setattr(module, "BACKGROUND_QUEUED", 1)
    metrics = Metrics(CollectorRegistry())
    play = module.ExactPlay(None, metrics, {GAME: 1}, background={GAME: 2000})

    def dropped() -> float:
        return metrics.registry.get_sample_value(
            "gameai_proved_background_total", {"game": GAME, "result": "dropped"}) or 0.0

    try:
        busy, waiting, third = (C4.parse_moves(m) for m in ("4", "44", "444"))
        play.prover.offer(busy)  # the thread takes it: about 2 s, the opening is not proved
        wait_until(lambda: play.prover.waiting == 0, timeout=10)
        play.prover.offer(busy)  # being proved: not queued again
        play.prover.offer(waiting)
        play.prover.offer(waiting)  # queued already: once
        assert play.prover.waiting == 1 and dropped() == 0
        play.prover.offer(third)  # the queue holds one: the oldest goes
        assert play.prover.waiting == 1 and dropped() == 1
        play.prover.offer(waiting)  # dropped, so queued again, pushing out the third
        assert play.prover.waiting == 1 and dropped() == 2
    finally:
        play.close(0.1)


def test_the_background_prover_waits_while_the_server_is_busy():
    """The prover searches only after BACKGROUND_IDLE_SECONDS without a request: a busy
    server's requests never share their CPU with it."""
    import time

    from prometheus_client import CollectorRegistry

    from gameai.service.exact import BACKGROUND_IDLE_SECONDS, ExactPlay
    from gameai.service.metrics import Metrics

    metrics = Metrics(CollectorRegistry())
    play = ExactPlay(None, metrics, {GAME: 1}, background={GAME: 2000})

    def proved() -> float:
        return metrics.registry.get_sample_value(
            "gameai_proved_background_total", {"game": GAME, "result": "proved"}) or 0.0

    SOLUTIONS.forget()  # a proof this process holds is not proved again
    try:
        play.prover.busy()
        play.prover.offer(C4.parse_moves(DRAWN[:30]))  # proved in microseconds, once idle
        until = time.monotonic() + 0.5
        while time.monotonic() < until:  # requests every 10 ms
            play.prover.busy()
            time.sleep(BACKGROUND_IDLE_SECONDS / 5)
        assert proved() == 0
        assert play.prover.wait(10)
        assert proved() == 1
    finally:
        play.close(0.1)


def test_a_write_that_fails_oddly_costs_that_proof_not_the_writer(redis_server):
    """The store's connection closed under the writer (a server stopping) raises what
    redis-py raises then, not a StoreError: that proof is counted as an error and the
    writer goes on with the next."""
    from prometheus_client import CollectorRegistry

    from gameai.service.exact import ExactPlay
    from gameai.service.metrics import Metrics

    store = new_store(redis_server.url)
    metrics = Metrics(CollectorRegistry())
    play = ExactPlay(store.proved(), metrics, {GAME: 1})
    late, later = C4.parse_moves(LATE), C4.parse_moves(DRAWN[:30])
    original = play.table.put
    calls = []

    def put_once_broken(state, solution):
        calls.append(state)
        if len(calls) == 1:
            raise ValueError("I/O operation on closed file.")
        return original(state, solution)

    play.table.put = put_once_broken  # type: ignore[method-assign]
    try:
        play.offer(late, C4.solve(late))
        play.offer(later, C4.solve(later))
        assert play.flush()
        errors = metrics.registry.get_sample_value(
            "gameai_proved_writes_total", {"game": GAME, "result": "error"})
        assert errors == 1 and len(calls) == 2
        assert store.proved().get(later) is not None  # the next proof was written
    finally:
        play.close()
        store.close()
