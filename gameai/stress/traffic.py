"""Client traffic from separate processes: gRPC and REST, best-move, evaluate and batch,
several games and versions, as fast as possible or at a set rate, every answer recorded.

:class:`TrafficRun` starts the client processes (``spawn``, so they share nothing with
the caller but the loopback network) and, at :meth:`TrafficRun.stop`, collects one
:class:`Answer` per request: when it was sent and answered, which server and transport,
the version that answered, and the error if any. The REST client speaks keep-alive
HTTP/1.1 over raw asyncio streams and the gRPC client uses ``grpc.aio`` with a connection
per client, so the load generator costs far less than the server it loads.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import queue
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

REQUEST_TIMEOUT = 10.0


@dataclass(frozen=True)
class Call:
    """One request to make: ``boards`` has one board, or several for ``EvaluateBatch``."""

    transport: str  # "rest" or "grpc"
    method: str  # "BestMove", "Evaluate", "EvaluateBatch"
    game: str
    boards: tuple[str, ...]
    model: str = ""
    client_id: str = ""


@dataclass(frozen=True)
class Answer:
    sent: float  # time.monotonic(), comparable across processes on Linux
    done: float
    server: int  # index into the targets
    transport: str
    method: str
    version: int  # 0 when the request failed
    error: str = ""  # "" when it succeeded; else "KIND detail"

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def latency(self) -> float:
        return self.done - self.sent


def mixed_calls(boards: dict[str, list[str]], *, models: Sequence[str] = ("",),
                transports: Sequence[str] = ("rest", "grpc"),
                methods: Sequence[str] = ("BestMove", "Evaluate"), batch_every: int = 0,
                batch_size: int = 50, count: int = 4000, seed: int = 0) -> list[Call]:
    """``count`` calls cycling through every game, transport, method and model; every
    ``batch_every``-th call is an ``EvaluateBatch`` of ``batch_size`` boards."""
    rng = random.Random(seed)
    games = sorted(boards)
    calls = []
    for i in range(count):
        game = games[i % len(games)]
        transport = transports[(i // len(games)) % len(transports)]
        model = models[(i // 7) % len(models)]
        client = f"client-{rng.randrange(10_000)}"
        if batch_every and i % batch_every == batch_every - 1:
            chosen = tuple(rng.choice(boards[game]) for _ in range(batch_size))
            batch_transport = transports[(i // batch_every) % len(transports)]
            calls.append(Call(batch_transport, "EvaluateBatch", game, chosen, model, client))
        else:
            method = methods[(i // 3) % len(methods)]
            calls.append(Call(transport, method, game, (rng.choice(boards[game]),), model,
                              client))
    return calls


class TrafficRun:
    """Client processes sending ``calls`` to every target until :meth:`stop` (or for
    ``seconds``), each with ``concurrency`` clients; at ``rate`` requests per second in
    total, or as fast as the server answers when ``rate`` is ``None``.

    Args:
        targets: ``(http_port, grpc_port)`` of each server; clients spread over them.
        calls: the requests, cycled through.
    """

    def __init__(self, targets: Sequence[tuple[int, int]], calls: Sequence[Call], *,
                 processes: int = 1, concurrency: int = 8, rate: float | None = None,
                 seconds: float | None = None) -> None:
        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._results: Any = context.Queue()
        self._answered: Any = context.Value("l", 0)
        self.started = time.monotonic()
        per_rate = None if rate is None else rate / processes
        self._processes = [
            context.Process(target=_client_process, name=f"gameai-stress-client-{i}", args=(
                list(targets), list(calls[i::processes]) or list(calls), concurrency,
                per_rate, seconds, self._stop, self._results, i, self._answered), daemon=True)
            for i in range(processes)]
        for process in self._processes:
            process.start()

    @property
    def answered(self) -> int:
        """Requests answered (or failed) so far, over every client process."""
        return int(self._answered.value)

    def wait_for(self, count: int, timeout: float = 60.0) -> None:
        """Until ``count`` requests have completed (``TimeoutError`` after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while self.answered < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {self.answered} of {count} requests in {timeout} s")
            time.sleep(0.01)

    def stop(self, timeout: float = 60.0) -> list[Answer]:
        """Stop the clients and return every answer, oldest first."""
        self._stop.set()
        return self.wait(timeout)

    def wait(self, timeout: float = 60.0) -> list[Answer]:
        """Wait for the clients (after their ``seconds``, or :meth:`stop`)."""
        answers: list[Answer] = []
        deadline = time.monotonic() + timeout
        for _ in self._processes:
            try:
                rows = self._results.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                break
            answers.extend(Answer(*row) for row in rows)
        for process in self._processes:
            process.join(5)
            if process.is_alive():
                process.kill()
        return sorted(answers, key=lambda a: a.sent)


def _client_process(targets: list[tuple[int, int]], calls: list[Call], concurrency: int,
                    rate: float | None, seconds: float | None, stop: Any, results: Any,
                    index: int, answered: Any) -> None:
    rows: list[tuple[Any, ...]] = []
    try:
        asyncio.run(_clients(targets, calls, concurrency, rate, seconds, stop, index,
                             answered, rows))
    except BaseException as e:  # the rows so far, and the failure as one more row
        now = time.monotonic()
        rows.append((now, now, 0, "client", "crash", 0, f"client-crash {e!r}"[:300]))
    finally:
        results.put(rows)


async def _clients(targets: list[tuple[int, int]], calls: list[Call], concurrency: int,
                   rate: float | None, seconds: float | None, stop: Any,
                   index: int, answered: Any, rows: list[tuple[Any, ...]]) -> None:
    end = time.monotonic() + seconds if seconds is not None else float("inf")
    interval = concurrency / rate if rate else 0.0

    async def client(k: int) -> None:
        server = (k + index) % len(targets)
        http_port, grpc_port = targets[server]
        rest, grpc_ = _Rest(http_port), _Grpc(grpc_port)
        # spread the clients' first requests over one interval
        next_at = time.monotonic() + interval * k / concurrency
        i = k
        try:
            while not stop.is_set() and time.monotonic() < end:
                if interval:
                    delay = next_at - time.monotonic()
                    if delay > 0:
                        await asyncio.sleep(delay)
                    next_at = max(next_at + interval, time.monotonic() - interval)
                call = calls[i % len(calls)]
                i += concurrency
                sent = time.monotonic()
                try:
                    version, error = await (rest if call.transport == "rest"
                                            else grpc_).send(call)
                except Exception as e:  # anything else is a finding, not a dead client
                    version, error = 0, f"client-{type(e).__name__} {e}"[:300]
                rows.append((sent, time.monotonic(), server, call.transport, call.method,
                             version, error))
                with answered.get_lock():
                    answered.value += 1
        finally:
            await rest.close()
            await grpc_.close()

    async def watch_stop() -> None:
        while not stop.is_set() and time.monotonic() < end:
            await asyncio.sleep(0.05)

    await asyncio.gather(watch_stop(), *(client(k) for k in range(concurrency)))


class _Rest:
    """Keep-alive HTTP/1.1 on one connection, reopened after an error."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def send(self, call: Call) -> tuple[int, str]:
        path = {"BestMove": "best-move", "Evaluate": "evaluate",
                "EvaluateBatch": "evaluate-batch"}[call.method]
        body: dict[str, Any] = {"model": call.model, "client_id": call.client_id}
        if call.method == "EvaluateBatch":
            body["boards"] = list(call.boards)
        else:
            body["board"] = call.boards[0]
        data = json.dumps(body).encode()
        request = (f"POST /v1/games/{call.game}/{path} HTTP/1.1\r\nHost: stress\r\n"
                   f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
                   ).encode() + data
        try:
            if self.streams is None:
                self.streams = await asyncio.open_connection("127.0.0.1", self.port)
            reader, writer = self.streams
            writer.write(request)
            status, payload = await asyncio.wait_for(_read_response(reader), REQUEST_TIMEOUT)
        except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError) as e:
            await self.close()
            return 0, f"{_connection_error_kind(e)} {type(e).__name__}: {e}"[:300]
        if status != 200:
            return 0, f"http-{status} {payload[:200].decode(errors='replace')}"
        return int(json.loads(payload)["model_version"]), ""

    async def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    try:
        return status, await reader.readexactly(length)
    except asyncio.IncompleteReadError as e:  # the head arrived: this answer broke off
        raise asyncio.IncompleteReadError(head + e.partial, None) from e


def _connection_error_kind(error: BaseException) -> str:
    """``refused``: nothing listens (the request reached no server); ``closed``: the server
    closed the connection before a byte of answer (a keep-alive connection it was done
    with: the request was not served, and a client may resend it); ``cut``: an answer
    broke off midway; ``timeout``: no answer in time."""
    if isinstance(error, ConnectionRefusedError):
        return "refused"
    if isinstance(error, TimeoutError):
        return "timeout"
    if isinstance(error, asyncio.IncompleteReadError) and error.partial:
        return "cut"
    if isinstance(error, asyncio.IncompleteReadError | ConnectionResetError | BrokenPipeError):
        return "closed"
    return "cut"


class _Grpc:
    """A ``grpc.aio`` channel of its own (not shared with other clients)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.channel: Any = None
        self.stub: Any = None

    async def send(self, call: Call) -> tuple[int, str]:
        import grpc

        from gameai.service.gen.gameai.v1 import move_pb2, move_pb2_grpc

        if self.channel is None:
            self.channel = grpc.aio.insecure_channel(
                f"127.0.0.1:{self.port}", options=[("grpc.use_local_subchannel_pool", 1)])
            self.stub = move_pb2_grpc.MoveServiceStub(self.channel)
        try:
            if call.method == "EvaluateBatch":
                batch = await self.stub.EvaluateBatch(move_pb2.EvaluateBatchRequest(
                    game=call.game, boards=list(call.boards), model=call.model,
                    client_id=call.client_id), timeout=REQUEST_TIMEOUT)
                return int(batch.model_version), ""
            kind = move_pb2.BestMoveRequest if call.method == "BestMove" \
                else move_pb2.EvaluateRequest
            method = self.stub.BestMove if call.method == "BestMove" else self.stub.Evaluate
            answer = await method(kind(game=call.game, board=call.boards[0], model=call.model,
                                       client_id=call.client_id), timeout=REQUEST_TIMEOUT)
            return int(answer.model_version), ""
        except grpc.aio.AioRpcError as e:
            return 0, f"grpc-{e.code().name} {e.details()}"[:300]

    async def close(self) -> None:
        if self.channel is not None:
            await self.channel.close()
            self.channel = None
