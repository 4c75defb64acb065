"""The trainer's Prometheus metrics (names fixed by docs/contracts.md) and its small HTTP
server: ``GET /metrics`` and ``GET /healthz`` on the metrics port."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge
from prometheus_client.exposition import generate_latest

EVALUATION_FIGURES = ("losses_as_x", "losses_as_o", "optimal_move_rate", "vs_random_loss_rate")


class TrainerMetrics:
    """Every trainer metric, registered in ``registry`` (a fresh one per test)."""

    def __init__(self, registry: CollectorRegistry, *, game: str, algorithm: str) -> None:
        both = ["game", "algorithm"]
        self._games = Counter("gameai_trainer_games", "self-play games played", both,
                              registry=registry).labels(game, algorithm)
        self._rate = Gauge("gameai_trainer_games_per_second", "self-play games per second "
                           "over the last round", both, registry=registry).labels(game, algorithm)
        self._exploration = Gauge("gameai_trainer_exploration", "current exploration level "
                                  "(epsilon, temperature...)", both, registry=registry
                                  ).labels(game, algorithm)
        self._evaluation = Gauge("gameai_trainer_evaluation", "latest evaluation",
                                 [*both, "metric"], registry=registry)
        self._published = Counter("gameai_trainer_published", "versions published", ["game"],
                                  registry=registry).labels(game)
        self._promoted = Counter("gameai_trainer_promoted", "versions promoted to production",
                                 ["game"], registry=registry).labels(game)
        self._failures = Counter("gameai_trainer_publish_failures", "publish attempts that "
                                 "failed (store down...)", ["game"], registry=registry).labels(game)
        self._last_publish = Gauge("gameai_trainer_last_publish_timestamp_seconds", "unix time "
                                   "of the last publish", ["game"], registry=registry).labels(game)
        self._store_up = Gauge("gameai_trainer_store_up", "1 while the store answers",
                               registry=registry)
        self._idle = Gauge("gameai_trainer_idle", "1 while the best model known is proven "
                           "perfect and the trainer waits, training nothing", ["game"],
                           registry=registry).labels(game)
        self._pinned = Gauge("gameai_trainer_production_pinned", "1 while an operator's pin "
                             "holds automatic promotion off", ["game"],
                             registry=registry).labels(game)
        self._candidates = Counter("gameai_trainer_candidates", "candidates evaluated, by "
                                   "what became of them (kept for publishing, or not_better "
                                   "than the best model known)", ["game", "result"],
                                   registry=registry)
        for result in ("kept", "not_better"):
            self._candidates.labels(game, result)
        # parallel self-play (the n-tuple learner's actors, locally or on a Ray cluster)
        self._actor_rate = Gauge("gameai_trainer_actor_games_per_second", "self-play games "
                                 "per second of each actor while it played, last round",
                                 [*both, "actor"], registry=registry)
        self._actors = Gauge("gameai_trainer_actors", "self-play actors running", both,
                             registry=registry).labels(game, algorithm)
        self._actors_lost = Gauge("gameai_trainer_actors_lost", "self-play actors lost "
                                  "(their node died) since the start", both,
                                  registry=registry).labels(game, algorithm)
        self._merge_lag = Gauge("gameai_trainer_merge_lag_seconds", "last round: from the "
                                "first actor's delta in to the merged update handed out",
                                both, registry=registry).labels(game, algorithm)
        self._staleness = Gauge("gameai_trainer_staleness_games", "games the last merged "
                                "delta was behind the learner (0 in reproducible rounds)",
                                both, registry=registry).labels(game, algorithm)
        self._busy = Gauge("gameai_trainer_actors_busy_ratio", "the actors' share of the "
                           "last call spent playing (the rest: waiting for a round's last "
                           "share or the learner, taking updates)", both,
                           registry=registry).labels(game, algorithm)
        self._nodes = Gauge("gameai_trainer_cluster_nodes", "nodes self-play runs on (1: "
                            "this machine)", both, registry=registry).labels(game, algorithm)
        self._cpus = Gauge("gameai_trainer_cluster_cpus", "CPUs of those nodes", both,
                           registry=registry).labels(game, algorithm)
        self._seen_actors: set[str] = set()
        self.game, self.algorithm = game, algorithm

    def played(self, games: int, games_per_second: float, exploration: float) -> None:
        self._games.inc(games)
        self._rate.set(games_per_second)
        self._exploration.set(exploration)

    def selfplay(self, status: dict[str, Any] | None) -> None:
        """The parallel actors' figures (``SelfPlay.status``; nothing with one actor)."""
        if not status:
            return
        rates = status.get("host_rates") or {}
        for actor in self._seen_actors - set(rates):  # gone: its series goes too
            self._actor_rate.remove(self.game, self.algorithm, actor)
        for actor, rate in rates.items():
            self._actor_rate.labels(self.game, self.algorithm, actor).set(rate)
        self._seen_actors = set(rates)
        self._actors.set(status.get("hosts", 0))
        self._actors_lost.set(status.get("hosts_lost", 0))
        self._merge_lag.set(status.get("merge_lag", 0.0))
        self._staleness.set(status.get("staleness", 0))
        self._busy.set(status.get("busy", 0.0))
        self._nodes.set(status.get("nodes", 1))
        self._cpus.set(status.get("cpus", 1))

    def evaluated(self, report: dict[str, Any]) -> None:
        vs = report.get("vs_random") or {}
        figures = {k: report.get(k) for k in EVALUATION_FIGURES[:3]}
        played = sum(sum(side.values()) for side in vs.values())
        if played:
            figures["vs_random_loss_rate"] = sum(side["loss"] for side in vs.values()) / played
        # the gates' judged measures (n-tuple workers): the strength curve on the training
        # dashboard, e.g. metric="judged_vs_perfect_as_x" (the mean score, 0 to 1)
        for m in (report.get("judged") or {}).get("measures", []):
            figures[f"judged_{m['name']}"] = m["score"]["value"] if m["kind"] == "score" \
                else m["value"]
        for name, value in figures.items():
            if value is not None:
                self._evaluation.labels(self.game, self.algorithm, name).set(value)

    def published(self) -> None:
        self._published.inc()
        self._last_publish.set(time.time())

    def promoted(self) -> None:
        self._promoted.inc()

    def candidate(self, result: str) -> None:
        self._candidates.labels(self.game, result).inc()

    def idle(self, idle: bool) -> None:
        self._idle.set(1 if idle else 0)

    def pinned(self, pinned: bool) -> None:
        self._pinned.set(1 if pinned else 0)

    def publish_failed(self) -> None:
        self._failures.inc()

    def store_up(self, up: bool) -> None:
        self._store_up.set(1 if up else 0)


class MetricsServer:
    """``/metrics`` and ``/healthz`` in a background thread. ``healthy()`` decides
    ``/healthz``: 200 while the training loop is alive, 503 otherwise."""

    def __init__(self, registry: CollectorRegistry, *, host: str, port: int,
                 healthy: Callable[[], dict[str, Any] | None]) -> None:
        handler = _handler(registry, healthy)
        self._server = ThreadingHTTPServer((host, port), handler)  # OSError if taken
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="metrics",
                                        daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> MetricsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(registry: CollectorRegistry, healthy: Callable[[], dict[str, Any] | None]
             ) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, CONTENT_TYPE_LATEST, generate_latest(registry))
            elif path == "/healthz":
                state = healthy()
                body = json.dumps(state or {"status": "stalled"}).encode()
                self._send(200 if state else 503, "application/json", body)
            else:
                self._send(404, "text/plain", b"not found: try /metrics or /healthz\n")

        def _send(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # scrapes every few seconds would drown the log

    return Handler
