"""The server's Prometheus metrics, named exactly as ``docs/contracts.md`` lists them.

Everything is created on a registry passed in (a fresh ``CollectorRegistry`` in tests, so
they read samples back without seeing other tests' traffic). With several worker processes
(``PROMETHEUS_MULTIPROC_DIR`` set) the values live in shared files and :func:`exposition`
merges them; each gauge says how (in-flight requests add up, store health takes the worst).
"""

from __future__ import annotations

import os
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
           0.5, 1.0, 2.5)
EVALUATION_METRICS = ("optimal_move_rate", "losses_as_x", "losses_as_o")


class Metrics:
    """The server's metric objects, all on ``registry``."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._children: dict[tuple[str, str, str, int | None, str], tuple[Any, Any]] = {}
        self._level_children: dict[tuple[str, str], Any] = {}
        r = self.registry
        self.requests = Counter(
            "gameai_requests", "Requests answered, by transport, method, game, answering "
            "model version and status code.", ["transport", "method", "game", "version", "code"],
            registry=r)
        self.duration = Histogram(
            "gameai_request_duration_seconds", "Request latency in seconds.",
            ["transport", "method"], buckets=BUCKETS, registry=r)
        self.inflight = Gauge("gameai_inflight_requests", "Requests being served.",
                              ["transport"], registry=r, multiprocess_mode="livesum")
        self.alias_version = Gauge("gameai_alias_version",
                                   "The version each alias serves on this server.",
                                   ["game", "alias"], registry=r,
                                   multiprocess_mode="livemostrecent")
        self.canary_weight = Gauge("gameai_canary_weight",
                                   "Percent of traffic sent to the canary alias.", ["game"],
                                   registry=r, multiprocess_mode="livemostrecent")
        self.production_pinned = Gauge(
            "gameai_production_pinned", "1 while an operator's pin holds the trainer's "
            "automatic promotion off.", ["game"], registry=r, multiprocess_mode="livemostrecent")
        self.model_evaluation = Gauge(
            "gameai_model_evaluation", "The serving versions' evaluation figures.",
            ["game", "alias", "metric"], registry=r, multiprocess_mode="livemostrecent")
        self.model_loads = Counter("gameai_model_loads", "Model load attempts by result "
                                   "(ok, corrupt, missing, error).", ["game", "result"],
                                   registry=r)
        self.models_loaded = Gauge("gameai_models_loaded", "Versions held in memory.",
                                   ["game"], registry=r, multiprocess_mode="livemax")
        self.store_up = Gauge("gameai_store_up", "1 while the store answers, 0 while it does "
                              "not.", registry=r, multiprocess_mode="livemin")
        self.store_reconnects = Counter("gameai_store_reconnects",
                                        "Reconnections to the store.", registry=r)
        self.level_moves = Counter(
            "gameai_level_moves", "Best-move answers by game and level of play (beginner, "
            "casual, strong, best).", ["game", "level"], registry=r)
        self.ready = Gauge("gameai_ready", "1 when /readyz would answer 200.", registry=r,
                           multiprocess_mode="livemin")
        # the two priority classes of long work (gameai.service.lanes)
        self.lane_waiting = Gauge("gameai_lane_waiting", "Requests waiting for a work slot, "
                                  "by priority class (interactive, background).", ["lane"],
                                  registry=r, multiprocess_mode="livesum")
        self.lane_running = Gauge("gameai_lane_running", "Work slots held, by priority class.",
                                  ["lane"], registry=r, multiprocess_mode="livesum")
        self.lane_wait = Histogram("gameai_lane_wait_seconds", "Time a request waited for a "
                                   "work slot, by priority class.", ["lane"], buckets=BUCKETS,
                                   registry=r)
        self.lane_refused = Counter("gameai_lane_refused", "Requests refused (429) because too "
                                    "many of their class already waited.", ["lane"], registry=r)
        self.streams = Counter("gameai_streams", "Streamed analyses ended, by priority class "
                               "and how (done, cancelled, error).", ["lane", "end"], registry=r)
        self.stream_steps = Counter("gameai_stream_steps", "Steps of streamed analyses run "
                                    "(a depth of the model's search, a slice of the "
                                    "solver's), by phase.", ["phase"], registry=r)
        # shadow tests of a candidate (gameai.service.shadow)
        self.shadow_compared = Counter(
            "gameai_shadow_compared", "Live best-move queries the shadow version answered "
            "too (off the request path).", ["game", "version"], registry=r)
        self.shadow_agreed = Counter(
            "gameai_shadow_agreed", "Shadowed queries where the shadow version's best move "
            "was production's.", ["game", "version"], registry=r)
        self.shadow_proved = Counter(
            "gameai_shadow_proved", "Shadowed queries the solver proved within the shadow "
            "budget.", ["game", "version"], registry=r)
        self.shadow_optimal = Counter(
            "gameai_shadow_optimal", "Proved shadowed queries where the model's best move "
            "was optimal, by model (production, shadow).", ["game", "version", "model"],
            registry=r)
        self.shadow_dropped = Counter(
            "gameai_shadow_dropped", "Queries not shadowed because the shadow queue was "
            "full.", ["game"], registry=r)
        self.shadow_share = Gauge("gameai_shadow_share", "Percent of production's best-move "
                                  "queries mirrored to the shadow alias.", ["game"],
                                  registry=r, multiprocess_mode="livemostrecent")
        self.shadow_queued = Gauge("gameai_shadow_queued", "Queries waiting for the shadow "
                                   "worker.", registry=r, multiprocess_mode="livesum")

        # the shared table of proved positions (gameai.service.exact)
        self.proved_hits = Counter("gameai_proved_hits", "Positions answered from the "
                                   "shared table of proved positions.", ["game"], registry=r)
        self.proved_misses = Counter("gameai_proved_misses", "Positions looked up in the "
                                     "shared table of proved positions and not found.",
                                     ["game"], registry=r)
        self.proved_unasked = Counter(
            "gameai_proved_unasked", "Misses the server's index of the shared table "
            "answered without a round trip to the store.", ["game"], registry=r)
        self.proved_indexed = Gauge("gameai_proved_indexed", "Positions of the shared table "
                                    "the server's index has read.", ["game"], registry=r,
                                    multiprocess_mode="livemin")
        self.proved_background = Counter(
            "gameai_proved_background", "Positions the background prover tried, by result "
            "(proved, failed: not within its budget, dropped: its queue was full).",
            ["game", "result"], registry=r)
        self.proved_writes = Counter(
            "gameai_proved_writes", "Proofs offered to the shared table, by result (written, "
            "held: another server wrote it first, full: refused at the bound, error: the "
            "store did not answer, dropped: the writer's queue was full).", ["game", "result"],
            registry=r)
        self.proved_size = Gauge("gameai_proved_size", "Positions the shared table of proved "
                                 "positions holds, as last seen.", ["game"], registry=r,
                                 multiprocess_mode="livemax")
        self.exact_moves = Counter(
            "gameai_exact_moves", "Best moves at level best, by whether the solver proved "
            "them (true) or the network chose them (false).", ["game", "exact"], registry=r)

    def observe(self, transport: str, method: str, game: str, version: int | None, code: str,
                seconds: float) -> None:
        """Count one answered request and its latency."""
        key = (transport, method, game, version, code)
        children = self._children.get(key)
        if children is None:  # labels() costs more than the increment: look it up once
            children = self._children[key] = (
                self.requests.labels(transport, method, game,
                                     "" if version is None else str(version), code),
                self.duration.labels(transport, method))
        children[0].inc()
        children[1].observe(seconds)


    def count_level(self, game: str, level: str) -> None:
        """Count one best move answered at ``level``."""
        child = self._level_children.get((game, level))
        if child is None:
            child = self._level_children[game, level] = self.level_moves.labels(game, level)
        child.inc()


def exposition(metrics: Metrics) -> tuple[bytes, str]:
    """The text a scrape gets, and its content type: this process's registry, or every
    worker's merged when running several."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        merged = CollectorRegistry()
        multiprocess.MultiProcessCollector(merged)
        return generate_latest(merged), CONTENT_TYPE_LATEST
    return generate_latest(metrics.registry), CONTENT_TYPE_LATEST
