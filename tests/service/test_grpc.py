"""The gRPC API against a real server and a real Redis: answers, every error, health,
reflection."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from gameai.service.gen.gameai.v1 import models_pb2, models_pb2_grpc, move_pb2, move_pb2_grpc
from tests.service.cases import ERROR_CASES, Case
from tests.service.conftest import RunningServer

REQUESTS = {"BestMove": move_pb2.BestMoveRequest, "Evaluate": move_pb2.EvaluateRequest,
            "EvaluateBatch": move_pb2.EvaluateBatchRequest, "Analyze": move_pb2.AnalyzeRequest,
            "Review": move_pb2.ReviewRequest, "AnalyzeStream": move_pb2.AnalyzeStreamRequest}
STREAMING = {"AnalyzeStream"}


@pytest.fixture(scope="module")
def channel(limited_server: RunningServer):
    with grpc.insecure_channel(limited_server.grpc) as channel:
        yield channel


@pytest.fixture(scope="module")
def moves(channel: grpc.Channel) -> move_pb2_grpc.MoveServiceStub:
    return move_pb2_grpc.MoveServiceStub(channel)


def test_best_move_answers_with_the_version(moves) -> None:
    r = moves.BestMove(move_pb2.BestMoveRequest(game="tictactoe", board="XX-|OO-|---",
                                                client_id="c1"))
    assert (r.game, r.model_version) == ("tictactoe", 1)
    assert (r.move.row, r.move.col, r.move.index) == (0, 2, 2) and r.value > 0.5


def test_evaluate_matches_rest_semantics(moves) -> None:
    r = moves.Evaluate(move_pb2.EvaluateRequest(game="tictactoe", board="XX-|OO-|---"))
    assert r.to_move == "X" and r.model_version == 1
    assert r.moves[0].index == 2
    assert {m.index for m in r.moves} == {2, 5, 6, 7, 8}
    assert r.value == r.moves[0].value


def test_batch(moves) -> None:
    r = moves.EvaluateBatch(move_pb2.EvaluateBatchRequest(
        game="tictactoe", boards=["XX-|OO-|---", "X--|-O-|---"], include_move_values=True))
    assert r.model_version == 1 and r.cells == 9 and list(r.to_move) == ["X", "X"]
    assert list(r.move_index) == [2, 1] and list(r.move_row) == [0, 0]
    assert list(r.move_col) == [2, 1] and r.value[0] > 0.5
    values = list(r.move_values)[9:]  # the second board's cells
    assert len(values) == 9 and values[0] != values[0] and values[4] != values[4]  # NaN
    assert values[1] == pytest.approx(r.value[1])


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: c.name)
def test_errors_follow_the_table(moves, case: Case) -> None:
    request = REQUESTS[case.method](game=case.game, **case.body)
    with pytest.raises(grpc.RpcError) as caught:
        answer = getattr(moves, case.method)(request)
        if case.method in STREAMING:
            list(answer)  # a stream's error comes as it is read
    error = caught.value
    assert error.code().name == case.grpc
    assert error.details().startswith(f"{case.field}: ")
    assert ("gameai-field", case.field) in tuple(error.trailing_metadata())


def test_oversized_message_is_resource_exhausted(moves) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        moves.BestMove(move_pb2.BestMoveRequest(game="tictactoe", board="-" * 5000))
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_model_service(channel: grpc.Channel) -> None:
    stub = models_pb2_grpc.ModelServiceStub(channel)
    games = stub.ListGames(models_pb2.ListGamesRequest()).games
    assert [g.name for g in games] == ["tictactoe"] and games[0].aliases["production"] == 1
    assert games[0].ready and (games[0].rows, games[0].cols, games[0].k) == (3, 3, 3)
    listing = stub.ListModels(models_pb2.ListModelsRequest(game="tictactoe"))
    assert [v.version for v in listing.versions] == [1]
    assert list(listing.versions[0].aliases) == ["production"]
    one = stub.GetModel(models_pb2.GetModelRequest(game="tictactoe", version="production"))
    assert one.version == 1 and one.kind == "table" and len(one.sha256) == 64
    with pytest.raises(grpc.RpcError) as caught:
        stub.GetModel(models_pb2.GetModelRequest(game="tictactoe", version="12"))
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as caught:
        stub.ListModels(models_pb2.ListModelsRequest(game="nope"))
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


def test_health_is_serving(channel: grpc.Channel) -> None:
    stub = health_pb2_grpc.HealthStub(channel)
    for service in ("", "gameai.v1.MoveService", "gameai.v1.ModelService"):
        r = stub.Check(health_pb2.HealthCheckRequest(service=service))
        assert r.status == health_pb2.HealthCheckResponse.SERVING
    with pytest.raises(grpc.RpcError) as caught:
        stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"))
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


def test_reflection_lists_and_describes_the_services(channel: grpc.Channel) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    requests = [reflection_pb2.ServerReflectionRequest(list_services=""),
                reflection_pb2.ServerReflectionRequest(
                    file_containing_symbol="gameai.v1.MoveService")]
    answers = list(stub.ServerReflectionInfo(iter(requests)))
    names = {s.name for s in answers[0].list_services_response.service}
    assert {"gameai.v1.MoveService", "gameai.v1.ModelService", "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection"} <= names
    files = answers[1].file_descriptor_response.file_descriptor_proto
    assert files and b"BestMoveRequest" in files[0]


@pytest.mark.parametrize("raw", [
    bytes([0x0A, 9]) + b"tictactoe" + bytes([0x12, 3]) + b"\xff\xfe\xfd",  # board not UTF-8
    b"\xff\xff\xff\xff\xff",  # not a protobuf message at all
], ids=["bad-utf8", "garbage"])
def test_malformed_messages_are_invalid_argument(channel: grpc.Channel, raw: bytes) -> None:
    call = channel.unary_unary("/gameai.v1.MoveService/BestMove",
                               request_serializer=lambda b: b, response_deserializer=lambda b: b)
    with pytest.raises(grpc.RpcError) as caught:
        call(raw, timeout=5)
    error = caught.value
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert error.details().startswith("body: not a valid gameai.v1.BestMoveRequest")
    assert dict(error.trailing_metadata())["gameai-field"] == "body"


def test_closed_sets_as_enums_answer_as_their_text_twins(moves) -> None:
    casual = moves.BestMove(move_pb2.BestMoveRequest(
        game="tictactoe", board="X--|-O-|---", level_enum=move_pb2.LEVEL_NAME_CASUAL, seed=7))
    assert casual.level == "casual" and casual.level_enum == move_pb2.LEVEL_NAME_CASUAL
    same = moves.BestMove(move_pb2.BestMoveRequest(
        game="tictactoe", board="X--|-O-|---", level="casual", seed=7))
    assert same.move == casual.move and same.level_enum == move_pb2.LEVEL_NAME_CASUAL
    best = moves.BestMove(move_pb2.BestMoveRequest(game="tictactoe", board="X--|-O-|---"))
    assert best.level == "best" and best.level_enum == move_pb2.LEVEL_NAME_BEST
    e = moves.Evaluate(move_pb2.EvaluateRequest(game="tictactoe", board="X--|-O-|---",
                                                to_move_enum=move_pb2.SIDE_X))
    assert e.to_move == "X" and e.to_move_enum == move_pb2.SIDE_X
    a = moves.Analyze(move_pb2.AnalyzeRequest(game="tictactoe", board="XO-|-X-|---"))
    assert a.outcome == "loss" and a.outcome_enum == move_pb2.OUTCOME_LOSS
    assert a.line_end_enum == move_pb2.LINE_END_X_WINS and a.to_move_enum == move_pb2.SIDE_O
    assert all(m.outcome_enum == move_pb2.OUTCOME_LOSS for m in a.moves)
    for request, field in ((move_pb2.BestMoveRequest(game="tictactoe", board="X--|-O-|---",
                                                     level="best",
                                                     level_enum=move_pb2.LEVEL_NAME_CASUAL),
                            "level"),
                           (move_pb2.BestMoveRequest(game="tictactoe", board="X--|-O-|---",
                                                     to_move="X",
                                                     to_move_enum=move_pb2.SIDE_O), "to_move")):
        with pytest.raises(grpc.RpcError) as caught:
            moves.BestMove(request)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert caught.value.details().startswith(f"{field}: ")
        assert ("gameai-field", field) in caught.value.trailing_metadata()
