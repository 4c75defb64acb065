"""Whole-game review over REST and gRPC: each ply's values, best move and judgment, the
solver's exact verdicts (a thrown-away win, a walk into a loss), the notation of Connect
Four and morris, actions for any game, and the precise errors."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import httpx
import pytest
from google.protobuf import json_format

from gameai.games import get_game
from gameai.models.oracle import solver_model
from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc
from gameai.service.review import THRESHOLDS, judge
from gameai.store import ModelStore, RedisServer
from tests.service.conftest import RunningServer, new_store, random_ntuple, settings
from tests.service.test_rollout import wait_until

# X 0, O 3 (not the centre: walks into a loss), X 1 (threatens 2), O 4 (does not block),
# X 8 (does not win at 2 and leaves O's 3-4-5: throws the win away), O 5 wins.
BLUNDERS = [0, 3, 1, 4, 8, 5]
MORRIS_DRAW = "1 2 4 5 9 7 9-6 5-8 6-9 8-5 9-6 5-8 6-9 8-5"


@pytest.fixture(scope="module")
def review_server(redis_server: RedisServer) -> Iterator[RunningServer]:
    """tictactoe and three-mens-morris by their solvers' models, connect-four by an n-tuple
    network that searches (random weights: its values are arbitrary, its search real)."""
    store: ModelStore = new_store(redis_server.url)
    for name, model in (("tictactoe", solver_model(get_game("tictactoe"))),
                        ("three-mens-morris", solver_model(get_game("three-mens-morris"))),
                        ("connect-four", random_ntuple("connect-four"))):
        record = store.publish(model.to_bytes(), by="tests")
        store.set_alias(game=name, alias="production", version=record.version, by="tests")
    running = RunningServer(settings(store, games=("tictactoe", "three-mens-morris",
                                                   "connect-four")), store)
    # the network's search compiles as it loads: a while on a busy machine
    wait_until(lambda: httpx.get(f"{running.http}/readyz").status_code == 200, timeout=120)
    yield running
    running.stop()
    store.close()


def post(server: RunningServer, game: str, body: dict[str, object]) -> httpx.Response:
    return httpx.post(f"{server.http}/v1/games/{game}/review", json=body, timeout=60)


def grpc_review(server: RunningServer, **fields: object) -> dict[str, object]:
    with grpc.insecure_channel(server.grpc) as channel:
        reply = move_pb2_grpc.MoveServiceStub(channel).Review(
            move_pb2.ReviewRequest(**fields), timeout=60)
    return json_format.MessageToDict(reply, preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True)


def test_judgments_follow_the_documented_thresholds() -> None:
    assert [judge(x) for x in (0.0, 1e-7, 0.05, 0.1, 0.19, 0.2, 0.29, 0.3, 2.0)] == [
        "best", "best", "good", "inaccuracy", "inaccuracy", "mistake", "mistake", "blunder",
        "blunder"]
    assert [t for t, _ in THRESHOLDS] == sorted((t for t, _ in THRESHOLDS), reverse=True)


def test_the_solver_names_a_thrown_away_win_and_a_walk_into_a_loss(review_server) -> None:
    # a budget for the first solve of the session, which builds the game's table
    r = post(review_server, "tictactoe", {"actions": BLUNDERS, "solve_ms": 20_000})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["result"] == "O wins" and body["proved"] == 6 and body["model_version"] == 1
    plies = body["plies"]
    assert [p["side"] for p in plies] == ["X", "O"] * 3
    assert [p["move"]["index"] for p in plies] == BLUNDERS
    walks, lost, throws, wins = plies[1], plies[3], plies[4], plies[5]
    assert walks["judgment"] == "walks_into_loss"
    assert (walks["exact"]["before"], walks["exact"]["after"]) == ("draw", "loss")
    assert walks["best"]["index"] == 4  # the centre
    assert (lost["exact"]["before"], lost["exact"]["after"]) == ("loss", "loss")
    assert lost["judgment"] == judge(lost["loss"]) != "best"  # lost already: by value
    assert throws["judgment"] == "throws_away_win" and throws["best"]["index"] == 2
    assert throws["exact"] == {"before": "win", "distance_before": 1, "after": "loss",
                               "distance_after": 2, "optimal": False}
    assert throws["loss"] == pytest.approx(throws["value_before"] - throws["value_after"])
    assert wins["judgment"] == "best" and wins["exact"]["optimal"]
    for p in plies:
        assert p["value_before"] >= p["value_after"] and p["loss"] >= 0
        assert p["move"]["value"] == p["value_after"]
    x, o = body["sides"]
    assert (x["side"], x["moves"], x["throws_away_win"]) == ("X", 3, 1)
    assert (o["side"], o["moves"], o["walks_into_loss"]) == ("O", 3, 1)


def test_without_the_solver_the_values_judge(review_server) -> None:
    body = post(review_server, "tictactoe", {"actions": BLUNDERS, "solve_ms": 0}).json()
    assert body["proved"] == 0 and body["solve_ms"] == 0
    throws = body["plies"][4]
    assert "exact" not in throws and throws["judgment"] == "blunder"  # 0.9 -> -0.8


def test_grpc_answers_the_same_review(review_server) -> None:
    rest = post(review_server, "tictactoe", {"actions": BLUNDERS, "solve_ms": 20_000}).json()
    reply = grpc_review(review_server, game="tictactoe", actions=BLUNDERS, solve_ms=20_000)
    assert reply["result"] == "LINE_END_O_WINS" and reply["proved"] == 6
    for shown, sent in zip(rest["plies"], reply["plies"], strict=True):
        assert sent["judgment"] == "JUDGMENT_" + shown["judgment"].upper()
        assert sent["move"]["index"] == shown["move"]["index"]
        assert sent["loss"] == shown["loss"]
        assert sent["outcome_before"] == "OUTCOME_" + shown["exact"]["before"].upper()
    assert [s["side"] for s in reply["sides"]] == ["SIDE_X", "SIDE_O"]


def test_connect_four_moves_are_reviewed_at_the_search_depth(review_server) -> None:
    moves = "4455661"  # X has three in the bottom row; O let it be
    body = post(review_server, "connect-four", {"moves": moves}).json()
    assert body["depth"] == 3 and body["result"] == "continues"
    assert [p["move"]["col"] + 1 for p in body["plies"]] == [int(c) for c in moves]
    assert sum(s["moves"] for s in body["sides"]) == len(moves)
    for p in body["plies"]:
        assert p["loss"] == pytest.approx(max(0.0, p["value_before"] - p["value_after"]),
                                          abs=1e-6)
    shallow = post(review_server, "connect-four", {"moves": moves, "depth": 1,
                                                   "solve_ms": 0}).json()
    assert shallow["depth"] == 1 and shallow["proved"] == 0


def test_a_morris_game_drawn_by_repetition_is_reviewed_to_its_end(review_server) -> None:
    body = post(review_server, "three-mens-morris", {"moves": MORRIS_DRAW}).json()
    assert body["result"] == "draw by repetition" and len(body["plies"]) == 14
    assert body["plies"][6]["move"]["from"] == {"row": 2, "col": 2, "index": 8}


@pytest.mark.parametrize(("game", "body", "status", "field", "message"), [
    ("tictactoe", {}, 422, "moves", "moves: is required (or actions"),
    ("tictactoe", {"moves": "123", "actions": [1]}, 422, "moves", "moves: give either"),
    ("tictactoe", {"moves": "123"}, 422, "moves", "moves: tictactoe takes a board"),
    ("tictactoe", {"actions": [4, 4]}, 422, "actions[1]",
     "actions[1]: move 2 (4): cell 4 (row 1, column 1) is already taken"),
    ("tictactoe", {"actions": [0, 3, 1, 4, 2, 5]}, 422, "actions[5]",
     "actions[5]: move 6 (5): the game was already over: X wins at move 5"),
    ("tictactoe", {"actions": "048"}, 422, "actions", "actions: must be a list"),
    ("tictactoe", {"actions": [0, "1"]}, 422, "actions[1]", "actions[1]: must be an action"),
    ("tictactoe", {"actions": [0], "solve_ms": -1}, 422, "solve_ms", "solve_ms: must be"),
    ("tictactoe", {"actions": [0], "depth": 2}, 422, "depth", "depth: version 1 is a table"),
    ("connect-four", {"moves": "4448"}, 422, "moves", "moves: move 4 (8): column 8 is out"),
    ("tictactoe", {"actions": [0] * 201}, 413, "actions", "actions: 201 moves; at most 200"),
    ("chess", {"moves": "1"}, 404, "game", "game: "),
])
def test_errors_are_precise_on_both_transports(review_server, game, body, status, field,
                                               message) -> None:
    r = post(review_server, game, body)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["field"] == field and error["message"].startswith(message), error
    if not all(isinstance(v, int | str) or (isinstance(v, list) and all(
            isinstance(x, int) for x in v)) for v in body.values()):
        return  # a mistyped field cannot be sent as protobuf
    if isinstance(body.get("actions"), str):
        return
    with pytest.raises(grpc.RpcError) as caught:
        grpc_review(review_server, game=game, **body)
    code = {422: "INVALID_ARGUMENT", 413: "RESOURCE_EXHAUSTED", 404: "NOT_FOUND"}[status]
    assert caught.value.code().name == code
    assert caught.value.details().startswith(message)
    assert ("gameai-field", field) in caught.value.trailing_metadata()


def test_the_answer_is_the_documented_review(review_server) -> None:
    from gameai.service.rest.schema import ReviewOut

    for game, body in (("tictactoe", {"actions": BLUNDERS, "solve_ms": 20_000}),
                       ("three-mens-morris", {"moves": MORRIS_DRAW}),
                       ("connect-four", {"moves": "4455661"})):
        review = ReviewOut.model_validate(post(review_server, game, body).json())
        assert sum(s.moves for s in review.sides) == len(review.plies)
