"""The gRPC edge: servicers that translate protobuf to core calls and map errors once.

Also registers ``grpc.health.v1.Health`` (the overall status "" and each service follow
readiness) and server reflection.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import DecodeError
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from gameai.games import GameError
from gameai.models.levels import DEFAULT_LEVEL
from gameai.service import core
from gameai.service.calibration import level_entries, measured_how
from gameai.service.errors import ServiceError, Status, classify
from gameai.service.gen.gameai.v1 import models_pb2, models_pb2_grpc, move_pb2, move_pb2_grpc
from gameai.service.grpc_render import (
    LEVELS,
    LINE_ENDS,
    OUTCOMES,
    PRIORITIES,
    SIDES,
    move_pb,
    move_value_pb,
    review_pb,
    search_pb,
    text_or_enum,
    top_pb,
    update_pb,
)
from gameai.service.review import review
from gameai.service.runtime import Runtime
from gameai.service.stream import Analysis, open_analysis, run_stream
from gameai.store import StoreError

T = TypeVar("T")
SERVICE_NAMES = (
    move_pb2.DESCRIPTOR.services_by_name["MoveService"].full_name,
    models_pb2.DESCRIPTOR.services_by_name["ModelService"].full_name,
)
_HANDLED = (ServiceError, GameError, StoreError)


class _Edge:
    """Counting, timing and error mapping shared by the servicers."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.registry = runtime.registry
        self.metrics = runtime.metrics
        self.games = set(runtime.registry.games)
        self.inflight = runtime.metrics.inflight.labels("grpc")

    async def call(self, method: str, game: str, context: grpc.aio.ServicerContext,
                   work: Callable[[], tuple[T, int | None]], *, blocking: bool = False,
                   batch: bool = False, interactive: bool = False) -> T:
        """Run ``work`` (in a thread when it talks to the store; in the background lane,
        see :mod:`gameai.service.lanes`, for batches; in the interactive lane for long
        interactive work), count it, map errors."""
        started = time.perf_counter()
        self.inflight.inc()
        code, version = "OK", None
        try:
            if batch:
                result, version = await self.runtime.run_batch(work)
            elif interactive:
                result, version = await self.runtime.run_interactive(work)
            else:
                result, version = await asyncio.to_thread(work) if blocking else work()
            return result
        except _HANDLED as e:
            status = classify(e)
            if status is None:
                code = "INTERNAL"
                raise
            code = status.code_name
            await self.abort(context, status)
            raise  # abort raises; this line only satisfies the type checker
        except BaseException as e:
            if code == "OK" and not isinstance(e, grpc.aio.AbortError):
                code = "INTERNAL"
            raise
        finally:
            self.inflight.dec()
            self.metrics.observe("grpc", method, game if game in self.games else "", version,
                                 code, time.perf_counter() - started)

    async def abort(self, context: grpc.aio.ServicerContext, status: Status) -> None:
        """End the call with ``status`` (raises ``AbortError``)."""
        context.set_trailing_metadata(status.metadata())
        await context.abort(status.grpc, status.message)

    async def stream(self, method: str, game: str, context: grpc.aio.ServicerContext,
                     open_job: Callable[[], Analysis]) -> AsyncIterator[Any]:
        """A streamed analysis: the request checked first (errors as statuses), then one
        message per update; a cancelled call stops the work (see
        :func:`gameai.service.stream.run_stream`)."""
        started = time.perf_counter()
        self.inflight.inc()
        code, version = "OK", None
        try:
            try:
                job = open_job()
                version = job.session.version
                self.runtime.lanes.check(job.lane, field="priority")
                async for update in run_stream(job, self.runtime.lanes, self.metrics,
                                               lambda: self.runtime.draining):
                    yield update_pb(update)
            except _HANDLED as e:
                status = classify(e)
                if status is None:
                    code = "INTERNAL"
                    raise
                code = status.code_name
                await self.abort(context, status)
        except asyncio.CancelledError:
            code = "CANCELLED"
            raise
        except BaseException as e:
            if code == "OK" and not isinstance(e, grpc.aio.AbortError):
                code = "INTERNAL"
            raise
        finally:
            self.inflight.dec()
            self.metrics.observe("grpc", method, game if game in self.games else "", version,
                                 code, time.perf_counter() - started)


class MoveServicer(move_pb2_grpc.MoveServiceServicer):
    def __init__(self, edge: _Edge) -> None:
        self.edge = edge

    async def BestMove(self, request: Any, context: Any) -> Any:
        def work() -> tuple[Any, int]:
            a = core.best_move(self.edge.registry, **_position(request),
                               level=text_or_enum(request, "level", LEVELS),
                               seed=request.seed if request.HasField("seed") else None,
                               top=_given(request, "top"),
                               solve_ms=_given(request, "solve_ms"),
                               max_solve_ms=self.edge.runtime.settings.max_solve_ms,
                               **self._depth(request))
            response = move_pb2.BestMoveResponse(
                game=a.game, model_version=a.version, value=a.value, level=a.level,
                move=move_pb(a.move), level_enum=LEVELS[a.level], exact=a.exact)
            return _with_top_and_search(response, a), a.version
        return await self.edge.call("BestMove", request.game, context, work,
                                    interactive=_long(request) or request.HasField("solve_ms"))

    async def Evaluate(self, request: Any, context: Any) -> Any:
        def work() -> tuple[Any, int]:
            a = core.evaluate(self.edge.registry, **_position(request),
                              top=_given(request, "top"), **self._depth(request))
            e = a.evaluation
            moves = [_move_value(m) for m in e.moves]
            response = move_pb2.EvaluateResponse(game=a.game, model_version=a.version,
                                                 to_move=e.to_move, value=e.value, moves=moves,
                                                 board=a.board or "",
                                                 to_move_enum=SIDES[e.to_move])
            return _with_top_and_search(response, a), a.version
        return await self.edge.call("Evaluate", request.game, context, work,
                                    interactive=_long(request))

    def _depth(self, request: Any) -> dict[str, Any]:
        """The search's depth (unset: the game's default), node and time budgets asked for,
        and this server's limits."""
        s = self.edge.runtime.settings
        return {"depth": _given(request, "depth"), "nodes": _given(request, "nodes"),
                "time_ms": _given(request, "time_ms"), "max_depth": s.max_depth,
                "max_nodes": s.max_nodes, "max_time_ms": s.max_time_ms}

    async def Analyze(self, request: Any, context: Any) -> Any:
        def work() -> tuple[Any, int]:
            a = core.analyze(self.edge.registry, **_position(request), **self._depth(request))
            h = a.analysis
            moves = [_move_value(hint.move, outcome=hint.outcome or "",
                                 **({} if hint.distance is None
                                    else {"distance": hint.distance}))
                     for hint in h.moves]
            response = move_pb2.AnalyzeResponse(
                game=a.game, model_version=a.version, to_move=h.evaluation.to_move,
                value=h.evaluation.value, moves=moves, board=a.board or "",
                outcome=h.outcome or "", unsolved=h.unsolved,
                line=[_move_value(step.move) for step in h.line], line_end=h.line_end,
                to_move_enum=SIDES[h.evaluation.to_move], line_end_enum=LINE_ENDS[h.line_end])
            if h.distance is not None:
                response.distance = h.distance
            if h.outcome:
                response.outcome_enum = OUTCOMES[h.outcome]
            if a.depth is not None:
                response.depth = a.depth
            if a.search is not None:
                response.search.CopyFrom(search_pb(a.search))
            return response, a.version
        return await self.edge.call("Analyze", request.game, context, work, interactive=True)

    async def Review(self, request: Any, context: Any) -> Any:
        settings = self.edge.runtime.settings

        def work() -> tuple[Any, int]:
            a = review(self.edge.registry, game=request.game,
                       moves=request.moves if request.HasField("moves") else None,
                       actions=list(request.actions) if request.actions else None,
                       model=request.model, client_id=request.client_id,
                       depth=request.depth if request.HasField("depth") else None,
                       solve_ms=request.solve_ms if request.HasField("solve_ms") else None,
                       nodes=_given(request, "nodes"), time_ms=_given(request, "time_ms"),
                       max_depth=settings.max_depth, max_solve_ms=settings.max_solve_ms,
                       max_nodes=settings.max_nodes, max_time_ms=settings.max_time_ms)
            return review_pb(a), a.version
        return await self.edge.call("Review", request.game, context, work, interactive=True)

    async def AnalyzeStream(self, request: Any, context: Any) -> AsyncIterator[Any]:
        settings = self.edge.runtime.settings

        def open_job() -> Analysis:
            return open_analysis(
                self.edge.registry, **_position(request),
                depth=request.depth if request.HasField("depth") else None,
                time_ms=request.time_ms if request.HasField("time_ms") else None,
                nodes=_given(request, "nodes"), max_nodes=settings.max_nodes,
                priority=PRIORITIES.get(request.priority, request.priority),
                max_depth=settings.max_depth, max_time_ms=settings.max_solve_ms)
        async for message in self.edge.stream("AnalyzeStream", request.game, context,
                                               open_job):
            yield message

    async def ListLevels(self, request: Any, context: Any) -> Any:
        def work() -> tuple[Any, None]:
            a = core.list_levels(self.edge.registry, game=request.game)
            levels = [move_pb2.Level(
                name=e["name"], blunder=e["blunder"], temperature=e["temperature"],
                takes_wins=e["takes_wins"], description=e["description"],
                summary=e.get("summary", ""), name_enum=LEVELS[e["name"]],
                calibration_json=json.dumps(e["calibration"]) if "calibration" in e else "")
                for e in level_entries(a.levels, a.calibration, a.calibration_applies)]
            how = measured_how(a.calibration)
            return move_pb2.ListLevelsResponse(
                game=a.game, levels=levels, default_level=DEFAULT_LEVEL,
                calibration_json=json.dumps(how) if how else "",
                calibration_applies=a.calibration_applies,
                served_version=a.served_version or 0,
                served_strength=a.served_strength or "",
                default_level_enum=LEVELS[DEFAULT_LEVEL]), None
        return await self.edge.call("ListLevels", request.game, context, work)

    async def EvaluateBatch(self, request: Any, context: Any) -> Any:
        settings = self.edge.runtime.settings

        def work() -> tuple[Any, int]:
            a = core.evaluate_batch(self.edge.registry, game=request.game,
                                    boards=request.boards, model=request.model,
                                    client_id=request.client_id, max_batch=settings.max_batch,
                                    include_move_values=request.include_move_values,
                                    to_move=text_or_enum(request, "to_move", SIDES),
                                    **self._depth(request))
            cols = a.game.cols
            best = a.best_to if a.moves_pieces else a.best
            response = move_pb2.EvaluateBatchResponse(
                game=a.game.name, model_version=a.version, to_move=a.to_move,
                value=a.values.tolist(), move_row=(best // cols).tolist(),
                move_col=(best % cols).tolist(), move_index=best.tolist(), cells=a.game.cells,
                to_move_enum=[SIDES[side] for side in a.to_move])
            if a.depth is not None:
                response.depth = a.depth
            if a.search is not None:
                response.search.CopyFrom(search_pb(a.search))
            if a.moves_pieces:
                response.move_from_index.extend(a.best_from.tolist())
                response.actions = a.game.num_actions
            if a.move_values is not None:
                response.move_values.extend(a.move_values.ravel().tolist())
            return response, a.version
        return await self.edge.call("EvaluateBatch", request.game, context, work, batch=True)


def _given(request: Any, field: str) -> Any:
    """An optional field's value, None when unset (so 0 is a value, checked as such)."""
    return getattr(request, field) if request.HasField(field) else None


def _long(request: Any) -> bool:
    """Whether a query may take long (top moves with their lines and the solver, a budget):
    it then runs in the interactive lane, off the event loop."""
    return any(request.HasField(f) for f in ("top", "nodes", "time_ms"))


def _position(request: Any) -> dict[str, Any]:
    """The core's keyword arguments for a one-position request's common fields."""
    return {"game": request.game, "board": request.board, "model": request.model,
            "client_id": request.client_id, "to_move": text_or_enum(request, "to_move", SIDES),
            "moves": request.moves if request.HasField("moves") else None}


_move_value = move_value_pb


class ModelServicer(models_pb2_grpc.ModelServiceServicer):
    def __init__(self, edge: _Edge) -> None:
        self.edge = edge

    async def ListGames(self, request: Any, context: Any) -> Any:
        def work() -> tuple[Any, None]:
            games = [models_pb2.GameInfo(
                name=s.game.name, rows=s.game.rows, cols=s.game.cols, k=s.game.k,
                gravity=s.game.gravity, aliases=s.aliases, canary_weight=s.canary_weight,
                loaded_versions=s.loaded_versions, ready=s.ready,
                shadow_share=s.shadow_share)
                for s in core.list_games(self.edge.registry)]
            return models_pb2.ListGamesResponse(games=games), None
        return await self.edge.call("ListGames", "", context, work)

    async def ListModels(self, request: Any, context: Any) -> Any:
        def work() -> tuple[Any, None]:
            listing = core.list_models(self.edge.registry, game=request.game)
            response = models_pb2.ListModelsResponse(
                game=listing.game, aliases=listing.aliases, canary_weight=listing.canary_weight,
                versions=[_version_pb(v) for v in listing.versions])
            shadow = listing.shadow_json()
            if shadow is not None:
                response.shadow.CopyFrom(models_pb2.ShadowTest(
                    **{k: v for k, v in shadow.items() if k in _SHADOW_FIELDS and v is not None}))
            return response, None
        return await self.edge.call("ListModels", request.game, context, work, blocking=True)

    async def GetModel(self, request: Any, context: Any) -> Any:
        def work() -> tuple[Any, int]:
            summary = core.get_model(self.edge.registry, game=request.game,
                                     version=request.version)
            return _version_pb(summary), summary.version
        return await self.edge.call("GetModel", request.game, context, work, blocking=True)


_SHADOW_FIELDS = {f.name for f in models_pb2.ShadowTest.DESCRIPTOR.fields}


def _version_pb(summary: core.ModelSummary) -> Any:
    data = summary.to_json()
    return models_pb2.ModelVersion(
        game=summary.game, version=summary.version, sha256=data.get("sha256", ""),
        size=data.get("size", 0), kind=data.get("kind", ""),
        algorithm=data.get("algorithm", ""), games_played=data.get("games_played") or 0,
        created_at=data.get("created_at") or "", published_at=data.get("published_at", ""),
        published_by=data.get("published_by", ""),
        parent_version=data.get("parent_version") or 0, aliases=summary.aliases,
        evaluation_json=json.dumps(data.get("evaluation", {}), default=_finite),
        params_json=json.dumps(data.get("params", {}), default=str), loaded=summary.loaded)


def _finite(value: object) -> object:
    return str(value) if not isinstance(value, float) or math.isfinite(value) else None


def build_server(runtime: Runtime, *, host: str, port: int,
                 ) -> tuple[grpc.aio.Server, int, DrainingHealth]:
    """The gRPC server with both services, health and reflection, bound (not started).

    Returns:
        The server, the port it bound (useful with port 0) and its health servicer.
    """
    options = [
        # a message over the limit is refused by the transport before it is read into
        # memory (RESOURCE_EXHAUSTED, grpc's own message, no gameai-field: docs/api.md);
        # receiving it to attach the field cost the hostile suite's 16 clients +104 MiB
        ("grpc.max_receive_message_length", runtime.settings.max_body_bytes),
        ("grpc.so_reuseport", 1 if runtime.settings.workers > 1 else 0),
    ]
    server = grpc.aio.server(options=options)
    edge = _Edge(runtime)
    _add_service(server, move_pb2.DESCRIPTOR.services_by_name["MoveService"],
                 MoveServicer(edge), edge)
    _add_service(server, models_pb2.DESCRIPTOR.services_by_name["ModelService"],
                 ModelServicer(edge), edge)
    health_servicer = DrainingHealth()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME), server)
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"cannot bind gRPC to {host}:{port}")
    return server, bound, health_servicer


class DrainingHealth(health.aio.HealthServicer):
    """The standard health service, except that ``Watch`` streams end when the server
    stops (:meth:`close_watches`). Watchers see NOT_SERVING first; an open stream would
    otherwise hold the shutdown for the whole grace period and then be cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self._closing = asyncio.Event()

    async def Watch(self, request: Any, context: Any) -> None:
        watch = asyncio.ensure_future(super().Watch(request, context))
        closing = asyncio.ensure_future(self._closing.wait())
        try:
            await asyncio.wait({watch, closing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watch.cancel()
            closing.cancel()
        if watch.done() and not watch.cancelled() and watch.exception() is not None:
            raise watch.exception()

    def close_watches(self) -> None:
        self._closing.set()


def _add_service(server: grpc.aio.Server, service: ServiceDescriptor, servicer: object,
                 edge: _Edge) -> None:
    """What the generated ``add_*Servicer_to_server`` does, except that requests arrive as
    bytes and are decoded here: a malformed message is then ``INVALID_ARGUMENT`` naming the
    body, where grpc's own deserializer answers ``UNKNOWN`` with a parser exception."""
    handlers = {}
    for method in service.methods:
        response = message_factory.GetMessageClass(method.output_type)
        request = message_factory.GetMessageClass(method.input_type)
        behavior = getattr(servicer, method.name)
        if method.server_streaming:
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                _decoded_stream(behavior, method.name, request, edge),
                response_serializer=response.SerializeToString)
            continue
        handlers[method.name] = grpc.unary_unary_rpc_method_handler(
            _decoded(behavior, method.name, request, edge),
            response_serializer=response.SerializeToString)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(service.full_name, handlers),))
    server.add_registered_method_handlers(service.full_name, handlers)


def _decoded(behavior: Callable[[Any, Any], Any], method: str, request_type: Any,
             edge: _Edge) -> Callable[[bytes, grpc.aio.ServicerContext], Any]:
    async def handle(raw: bytes, context: grpc.aio.ServicerContext) -> Any:
        try:
            request = request_type.FromString(raw)
        except DecodeError as e:
            edge.metrics.observe("grpc", method, "", None, "INVALID_ARGUMENT", 0.0)
            context.set_trailing_metadata((("gameai-field", "body"),))
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"body: not a valid {request_type.DESCRIPTOR.full_name}: {e}")
        return await behavior(request, context)
    return handle


def _decoded_stream(behavior: Callable[[Any, Any], AsyncIterator[Any]], method: str,
                    request_type: Any, edge: _Edge
                    ) -> Callable[[bytes, grpc.aio.ServicerContext], AsyncIterator[Any]]:
    """:func:`_decoded` for a server-streaming method."""
    async def handle(raw: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        try:
            request = request_type.FromString(raw)
        except DecodeError as e:
            edge.metrics.observe("grpc", method, "", None, "INVALID_ARGUMENT", 0.0)
            context.set_trailing_metadata((("gameai-field", "body"),))
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                f"body: not a valid {request_type.DESCRIPTOR.full_name}: {e}")
        async for message in behavior(request, context):
            yield message
    return handle


async def set_health(servicer: health.aio.HealthServicer, *, serving: bool) -> None:
    """The overall status and each service's: SERVING while ready."""
    status = (health_pb2.HealthCheckResponse.SERVING if serving
              else health_pb2.HealthCheckResponse.NOT_SERVING)
    for name in ("", *SERVICE_NAMES):
        await servicer.set(name, status)


def _with_top_and_search(response: Any, answer: Any) -> Any:
    """``response`` with the answer's top moves and search report, where it has them."""
    if answer.top is not None:
        response.top.extend(top_pb(answer.top))
    if answer.search is not None:
        response.search.CopyFrom(search_pb(answer.search))
    return response
