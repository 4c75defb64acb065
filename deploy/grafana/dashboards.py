#!/usr/bin/env python3
"""Write the Grafana dashboards of gameai: ``python deploy/grafana/dashboards.py``.

The JSON files in ``dashboards/`` are generated from the panel lists below and committed,
so Grafana provisions them as they are; ``tests/deploy/test_grafana.py`` fails if they differ
from what this script writes. Every query names only metrics of docs/contracts.md, and the
live test (``tests/deploy/test_live.py``) runs each one against a Prometheus
scraping a real server and trainer.

Standard library only: it is a build step of the deploy files, not part of the package.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).resolve().parent / "dashboards"
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
RATE = "$__rate_interval"
# Server-side failures: HTTP 5xx and the gRPC statuses that mean "our fault". Client errors
# (4xx, INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION...) are the caller's, not ours.
# The alert rules (deploy/prometheus/rules/alerts.yml) use the same set; a test checks it.
SERVER_ERROR_CODES = ("5..|INTERNAL|UNKNOWN|UNAVAILABLE|DEADLINE_EXCEEDED|DATA_LOSS"
                      "|RESOURCE_EXHAUSTED|UNIMPLEMENTED")
GAME = 'game=~"$game"'

Panel = dict[str, Any]


# ------------------------------------------------------------------------------ builders

def target(expr: str, legend: str = "", *, ref: str = "A", instant: bool = False,
           heatmap: bool = False) -> dict:
    return {"refId": ref, "datasource": DATASOURCE, "expr": expr, "legendFormat": legend,
            "range": not instant, "instant": instant,
            "format": "heatmap" if heatmap else "time_series"}


def panel(kind: str, title: str, description: str, targets: list[tuple[str, str]], *,
          unit: str = "short", width: int = 12, height: int = 8, **options: Any) -> Panel:
    """A panel of ``kind`` with one query per ``(expr, legend)``; placed later by ``layout``."""
    defaults: dict[str, Any] = {"unit": unit}
    if kind == "timeseries":
        defaults["custom"] = {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10,
                              "showPoints": "never", "spanNulls": True,
                              "lineInterpolation": options.pop("interpolation", "linear"),
                              "stacking": {"mode": options.pop("stacking", "none")}}
    for key in ("min", "max", "decimals"):
        if key in options:
            defaults[key] = options.pop(key)
    if "thresholds" in options:
        steps = [{"color": options.pop("base", "green"), "value": None}]
        steps += [{"color": c, "value": v} for v, c in options.pop("thresholds")]
        defaults["thresholds"] = {"mode": "absolute", "steps": steps}
    refs = "ABCDEFGH"
    return {
        "type": kind, "title": title, "description": description, "datasource": DATASOURCE,
        "gridPos": {"h": height, "w": width, "x": 0, "y": 0},
        "targets": [target(e, leg, ref=refs[i], instant=kind == "stat",
                           heatmap=kind == "heatmap") for i, (e, leg) in enumerate(targets)],
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": options or _default_options(kind),
    }


def _default_options(kind: str) -> dict[str, Any]:
    if kind == "stat":
        return {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                "colorMode": "value", "graphMode": "area", "textMode": "auto"}
    if kind == "heatmap":
        return {"calculate": False, "yAxis": {"unit": "s"}, "color": {"scheme": "Oranges"},
                "cellGap": 1}
    return {"legend": {"displayMode": "table", "placement": "bottom",
                       "calcs": ["lastNotNull", "max"]},
            "tooltip": {"mode": "multi", "sort": "desc"}}


def row(title: str) -> Panel:
    return {"type": "row", "title": title, "collapsed": False, "panels": [],
            "gridPos": {"h": 1, "w": 24, "x": 0, "y": 0}}


def layout(panels: Iterable[Panel]) -> list[Panel]:
    """Number the panels and place them left to right, wrapping at Grafana's 24 columns."""
    placed, x, y, row_height = [], 0, 0, 0
    for pid, p in enumerate(panels, start=1):
        w, h = p["gridPos"]["w"], p["gridPos"]["h"]
        if p["type"] == "row" or x + w > 24:
            x, y, row_height = 0, y + row_height, 0
        p = {"id": pid, **p, "gridPos": {"h": h, "w": w, "x": x, "y": y}}
        placed.append(p)
        x, row_height = x + w, max(row_height, h)
        if p["type"] == "row":
            x, y, row_height = 0, y + h, 0
    return placed


def game_variable(metric: str) -> dict[str, Any]:
    query = f"label_values({metric}, game)"
    return {"name": "game", "label": "Game", "type": "query", "datasource": DATASOURCE,
            "query": {"query": query, "refId": "game"}, "definition": query,
            "refresh": 2, "sort": 1, "multi": True, "includeAll": True, "allValue": ".*",
            "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
            "hide": 0, "regex": "", "options": []}


def dashboard(uid: str, title: str, description: str, panels: Iterable[Panel], *,
              game_metric: str, annotations: Iterable[dict] = ()) -> dict[str, Any]:
    builtin = {"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"},
               "enable": True, "hide": True, "iconColor": "rgba(0, 211, 255, 1)",
               "name": "Annotations & Alerts", "type": "dashboard"}
    return {
        "uid": uid, "title": title, "description": description, "tags": ["gameai"],
        "editable": True, "graphTooltip": 1, "refresh": "30s", "schemaVersion": 39,
        "version": 1, "timezone": "browser", "time": {"from": "now-1h", "to": "now"},
        "annotations": {"list": [builtin, *annotations]},
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource",
             "query": "prometheus", "current": {}, "hide": 0, "refresh": 1, "regex": "",
             "options": []},
            game_variable(game_metric),
        ]},
        "links": [{"title": "gameai", "type": "dashboards", "tags": ["gameai"],
                   "asDropdown": True, "includeVars": True, "keepTime": True}],
        "panels": layout(panels),
    }


def alias_changes_annotation() -> dict[str, Any]:
    """A marker wherever an alias changed version (promotion, rollback, canary)."""
    return {"name": "Alias changes", "enable": True, "hide": False, "iconColor": "purple",
            "datasource": DATASOURCE, "step": "30s", "titleFormat": "{{game}}: {{alias}} moved",
            "textFormat": "the alias now points at another version", "tagKeys": "game,alias",
            "expr": f"max by (game, alias) (changes(gameai_alias_version{{{GAME}}}[1m])) > 0"}


# ---------------------------------------------------------------------------- dashboards

def serving() -> dict[str, Any]:
    errors = f'code=~"{SERVER_ERROR_CODES}"'
    quantile = ("histogram_quantile({q}, sum by (le, transport, method) "
                f"(rate(gameai_request_duration_seconds_bucket[{RATE}])))")
    panels = [
        row("Overview"),
        panel("stat", "Requests/s", "Requests answered per second, all transports.",
              [(f"sum(rate(gameai_requests_total{{{GAME}}}[{RATE}]))", "")],
              unit="reqps", width=5, height=4),
        panel("stat", "Server error ratio", "Share of requests that failed on our side "
              "(HTTP 5xx, gRPC INTERNAL/UNAVAILABLE/...).",
              [(f"sum(rate(gameai_requests_total{{{GAME}, {errors}}}[{RATE}])) / "
                f"sum(rate(gameai_requests_total{{{GAME}}}[{RATE}]))", "")],
              unit="percentunit", width=5, height=4, decimals=2,
              thresholds=[(0.01, "orange"), (0.05, "red")]),
        panel("stat", "p99 latency", "99th percentile over every transport and method.",
              [("histogram_quantile(0.99, sum by (le) "
                f"(rate(gameai_request_duration_seconds_bucket[{RATE}])))", "")],
              unit="s", width=5, height=4, thresholds=[(0.1, "orange"), (0.25, "red")]),
        panel("stat", "Servers ready", "Replicas whose /readyz answers 200, of those scraped.",
              [("sum(gameai_ready)", "ready"), ('count(up{job="gameai-server"})', "scraped")],
              width=5, height=4),
        panel("stat", "Store", "1 while every server reaches the model store.",
              [("min(gameai_store_up)", "")], width=4, height=4,
              base="red", thresholds=[(1, "green")], min=0, max=1),
        row("Rate"),
        panel("timeseries", "Requests/s by transport and method", "",
              [(f"sum by (transport, method) (rate(gameai_requests_total{{{GAME}}}[{RATE}]))",
                "{{transport}} {{method}}")], unit="reqps"),
        panel("timeseries", "Responses/s by code", "Status codes by transport: HTTP status "
              "(REST) or gRPC status name.",
              [(f"sum by (transport, code) (rate(gameai_requests_total{{{GAME}}}[{RATE}]))",
                "{{transport}} {{code}}")], unit="reqps", stacking="normal"),
        panel("timeseries", "Best moves/s by level of play", "How people play: best-move "
              "answers per second at each level (beginner, casual, strong, best; best is the "
              "default).",
              [(f"sum by (level) (rate(gameai_level_moves_total{{{GAME}}}[{RATE}]))",
                "{{level}}")], unit="reqps", stacking="normal"),
        panel("timeseries", "Best moves proved exact", "Share of level-best answers the "
              "solver proved (held, from the shared table of proved positions, or solved "
              "within GAMEAI_EXACT_MS), by game.",
              [(f'sum by (game) (rate(gameai_exact_moves_total{{{GAME}, exact="true"}}'
                f'[{RATE}])) / sum by (game) (rate(gameai_exact_moves_total{{{GAME}}}'
                f'[{RATE}]))', "{{game}}")], unit="percentunit", min=0, max=1),
        panel("timeseries", "Shared table of proved positions", "Lookups answered (hits) "
              "and not (misses; of them, the ones each server's index of the table answered "
              "without a round trip), proofs written and proved by the background prover "
              "(and dropped from its queue) per second, and the positions it holds.",
              [(f"sum by (game) (rate(gameai_proved_hits_total{{{GAME}}}[{RATE}]))",
                "hits/s {{game}}"),
               (f"sum by (game) (rate(gameai_proved_misses_total{{{GAME}}}[{RATE}]))",
                "misses/s {{game}}"),
               (f"sum by (game) (rate(gameai_proved_unasked_total{{{GAME}}}[{RATE}]))",
                "misses unasked/s {{game}}"),
               (f"sum by (game, result) (rate(gameai_proved_background_total{{{GAME}, "
                f'result=~"proved|dropped"}}[{RATE}]))', "background {{result}}/s {{game}}"),
               (f'sum by (game) (rate(gameai_proved_writes_total{{{GAME}, result="written"}}'
                f'[{RATE}]))', "written/s {{game}}"),
               (f"max by (game) (gameai_proved_size{{{GAME}}})", "held {{game}}")]),
        row("Errors"),
        panel("timeseries", "Server error ratio by transport and method",
              "Server-side failures over all requests, per method.",
              [(f"sum by (transport, method) (rate(gameai_requests_total{{{GAME}, {errors}}}"
                f"[{RATE}])) / sum by (transport, method) (rate(gameai_requests_total{{{GAME}}}"
                f"[{RATE}]))", "{{transport}} {{method}}")],
              unit="percentunit", min=0),
        panel("timeseries", "Client errors/s by code", "Rejected input: HTTP 4xx and gRPC "
              "INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION... (the caller's mistake).",
              [(f'sum by (transport, method, code) (rate(gameai_requests_total{{{GAME}, '
                f'code=~"4..|INVALID_ARGUMENT|NOT_FOUND|FAILED_PRECONDITION|'
                f'PERMISSION_DENIED|UNAUTHENTICATED|OUT_OF_RANGE|ALREADY_EXISTS"}}[{RATE}]))',
                "{{transport}} {{method}} {{code}}")], unit="reqps"),
        row("Duration"),
        panel("timeseries", "Latency p50 / p90 / p99 by transport and method",
              "Quantiles from the gameai_request_duration_seconds histogram.",
              [(quantile.format(q=0.5), "p50 {{transport}} {{method}}"),
               (quantile.format(q=0.9), "p90 {{transport}} {{method}}"),
               (quantile.format(q=0.99), "p99 {{transport}} {{method}}")], unit="s"),
        panel("heatmap", "Latency distribution", "Requests per latency bucket, all methods.",
              [(f"sum by (le) (increase(gameai_request_duration_seconds_bucket[{RATE}]))",
                "{{le}}")], unit="s"),
        panel("timeseries", "In-flight requests by transport", "",
              [("sum by (transport) (gameai_inflight_requests)", "{{transport}}")]),
        panel("timeseries", "Long work by priority class", "Hints, reviews and streams "
              "(interactive) go before batches and background streams: requests waiting and "
              "running per class, and the p99 wait for a slot.",
              [("sum by (lane) (gameai_lane_waiting)", "waiting {{lane}}"),
               ("sum by (lane) (gameai_lane_running)", "running {{lane}}"),
               ("histogram_quantile(0.99, sum by (le, lane) (rate("
                f"gameai_lane_wait_seconds_bucket[{RATE}])))", "p99 wait (s) {{lane}}")]),
        panel("timeseries", "Store reachability and reconnects", "gameai_store_up per "
              "server (1 = reachable) and reconnections per second.",
              [("gameai_store_up", "up {{instance}}"),
               ("sum by (instance) (rate(gameai_store_reconnects_total"
                f"[{RATE}]))", "reconnects/s {{instance}}")]),
    ]
    return dashboard("gameai-serving", "gameai / serving",
                     "RED view of the move servers: rate, errors and duration by transport "
                     "and method.", panels, game_metric="gameai_requests_total",
                     annotations=[alias_changes_annotation()])


def rollouts() -> dict[str, Any]:
    panels = [
        row("Versions"),
        panel("timeseries", "Version per alias", "The version each alias serves (highest "
              "over the servers); a step is a promotion, rollback or canary change.",
              [(f"max by (game, alias) (gameai_alias_version{{{GAME}}})", "{{game}} {{alias}}")],
              interpolation="stepAfter", decimals=0),
        panel("timeseries", "Servers out of step", "Servers that serve a different version "
              "for the same alias than their peers (0 once every server has switched).",
              [(f"max by (game, alias) (gameai_alias_version{{{GAME}}}) - min by (game, alias)"
                f" (gameai_alias_version{{{GAME}}})", "{{game}} {{alias}}")],
              interpolation="stepAfter", min=0, decimals=0),
        panel("timeseries", "Production pinned", "1 while an operator's promote or rollback "
              "holds the trainer's automatic promotion off (gameai models release --game G).",
              [(f"max by (game) (gameai_production_pinned{{{GAME}}})", "{{game}}")],
              interpolation="stepAfter", min=0, max=1, decimals=0, width=24, height=5),
        row("Canary"),
        panel("timeseries", "Canary weight", "Percent of traffic routed to the canary alias.",
              [(f"max by (game) (gameai_canary_weight{{{GAME}}})", "{{game}}")],
              unit="percent", min=0, max=100, interpolation="stepAfter"),
        panel("timeseries", "Traffic share by answering version", "Share of answered "
              "requests per model version: the canary's observed share next to its weight.",
              [(f'sum by (game, version) (rate(gameai_requests_total{{{GAME}, version!=""}}'
                f'[{RATE}])) / ignoring (version) group_left sum by (game) '
                f'(rate(gameai_requests_total{{{GAME}, version!=""}}[{RATE}]))',
                "{{game}} v{{version}}")], unit="percentunit", stacking="normal", min=0),
        panel("timeseries", "Evaluation of the serving versions",
              "Figures stored with each version, for every alias: optimal move rate and "
              "losses against the exhaustive opponent.",
              [(f"max by (game, alias, metric) (gameai_model_evaluation{{{GAME}}})",
                "{{game}} {{alias}} {{metric}}")], width=24),
        row("Shadow"),
        panel("timeseries", "Shadow test: agreement and optimal moves", "Of production's "
              "best-move queries mirrored to the shadow version (gameai models shadow): the "
              "share where its best move was production's, and, of those the solver proved "
              "within the shadow budget, the share each version answered optimally.",
              [(f"sum by (game, version) (increase(gameai_shadow_agreed_total{{{GAME}}}"
                f"[{RATE}])) / sum by (game, version) (increase(gameai_shadow_compared_total"
                f"{{{GAME}}}[{RATE}]))", "{{game}} v{{version}} agrees"),
               (f"sum by (game, version, model) (increase(gameai_shadow_optimal_total"
                f"{{{GAME}}}[{RATE}])) / ignoring (model) group_left sum by (game, version) "
                f"(increase(gameai_shadow_proved_total{{{GAME}}}[{RATE}]))",
                "{{game}} v{{version}} {{model}} optimal")],
              unit="percentunit", min=0, max=1),
        panel("timeseries", "Shadow traffic", "Queries compared and dropped (the shadow "
              "queue full: never compared, never slowing an answer) per second, and the "
              "share mirrored.",
              [(f"sum by (game) (rate(gameai_shadow_compared_total{{{GAME}}}[{RATE}]))",
                "{{game}} compared/s"),
               (f"sum by (game) (rate(gameai_shadow_dropped_total{{{GAME}}}[{RATE}]))",
                "{{game}} dropped/s"),
               (f"max by (game) (gameai_shadow_share{{{GAME}}})", "{{game}} share %")]),
        row("Loads"),
        panel("timeseries", "Model loads by result", "Load attempts per interval; anything "
              "but ok means a version could not be loaded (servers keep the one they hold).",
              [(f"sum by (game, result) (increase(gameai_model_loads_total{{{GAME}}}"
                f"[{RATE}]))", "{{game}} {{result}}")], stacking="normal"),
        panel("timeseries", "Versions held in memory", "Per server.",
              [(f"gameai_models_loaded{{{GAME}}}", "{{game}} {{instance}}")], decimals=0),
    ]
    return dashboard("gameai-rollouts", "gameai / rollouts",
                     "Which version every alias serves, canary weight and share, evaluation "
                     "figures, model loads.", panels, game_metric="gameai_alias_version",
                     annotations=[alias_changes_annotation()])


def training() -> dict[str, Any]:
    by = "game, algorithm"
    panels = [
        row("Self-play"),
        panel("stat", "Games played", "Self-play games since the trainers started.",
              [(f"sum(gameai_trainer_games_total{{{GAME}}})", "")], width=4, height=4),
        panel("stat", "Versions published", "Since the trainers started: only candidates "
              "that beat the best model known.",
              [(f"sum(gameai_trainer_published_total{{{GAME}}})", "")], width=4, height=4),
        panel("stat", "Since last publish", "Time since the newest published version (long "
              "is normal while the trainer is idle).",
              [(f"time() - max(gameai_trainer_last_publish_timestamp_seconds{{{GAME}}})", "")],
              unit="s", width=4, height=4, thresholds=[(3600, "orange"), (7200, "red")]),
        panel("stat", "Store", "1 while the trainers reach the model store.",
              [("min(gameai_trainer_store_up)", "")], width=4, height=4,
              base="red", thresholds=[(1, "green")], min=0, max=1),
        panel("stat", "Idle", "1 while every trainer is idle: the best model known is "
              "proven perfect, so it plays and publishes nothing.",
              [(f"min(gameai_trainer_idle{{{GAME}}})", "")], width=4, height=4,
              base="blue", thresholds=[(1, "green")], min=0, max=1),
        panel("stat", "Production pinned", "1 while an operator's pin holds automatic "
              "promotion off (gameai models release --game G lets it go).",
              [(f"max(gameai_trainer_production_pinned{{{GAME}}})", "")], width=4, height=4,
              base="green", thresholds=[(1, "orange")], min=0, max=1),
        panel("timeseries", "Games/s", "Reported by the trainer over its last round, and "
              "measured by Prometheus from the games counter.",
              [(f"sum by ({by}) (gameai_trainer_games_per_second{{{GAME}}})",
                "{{game}} {{algorithm}} (reported)"),
               (f"sum by ({by}) (rate(gameai_trainer_games_total{{{GAME}}}[{RATE}]))",
                "{{game}} {{algorithm}} (rate)")], unit="ops"),
        panel("timeseries", "Exploration", "Current exploration level (epsilon or "
              "temperature), decaying as the learner settles.",
              [(f"gameai_trainer_exploration{{{GAME}}}", "{{game}} {{algorithm}}")]),
        row("Parallel self-play"),
        panel("timeseries", "Games/s per actor", "Each self-play actor's games per second "
              "while it played (--param actors=N: threads, or Ray actors across the "
              "cluster with --cluster); the sum is the trainer's speed before merges.",
              [(f"sum by ({by}, actor) (gameai_trainer_actor_games_per_second{{{GAME}}})",
                "{{game}} {{actor}}")], unit="ops"),
        panel("timeseries", "Cluster", "Nodes and CPUs self-play runs on, actors running "
              "and actors lost with their node (their unsent games were played again).",
              [(f"max by ({by}) (gameai_trainer_cluster_nodes{{{GAME}}})", "{{game}} nodes"),
               (f"max by ({by}) (gameai_trainer_cluster_cpus{{{GAME}}})", "{{game}} CPUs"),
               (f"max by ({by}) (gameai_trainer_actors{{{GAME}}})", "{{game}} actors"),
               (f"max by ({by}) (gameai_trainer_actors_lost{{{GAME}}})",
                "{{game}} actors lost")], interpolation="stepAfter", min=0, decimals=0),
        panel("timeseries", "Merge lag and staleness", "Last round: seconds from the first "
              "actor's delta in to the merged update out (the actors wait that long); "
              "games the last merged delta was behind (0 in reproducible rounds).",
              [(f"max by ({by}) (gameai_trainer_merge_lag_seconds{{{GAME}}})",
                "{{game}} merge lag (s)"),
               (f"max by ({by}) (gameai_trainer_staleness_games{{{GAME}}})",
                "{{game}} staleness (games)")], width=12, min=0),
        panel("timeseries", "Actors playing", "The actors' share of the last call spent "
              "playing: below 1 they wait for a round's last share or for the learner.",
              [(f"max by ({by}) (gameai_trainer_actors_busy_ratio{{{GAME}}})",
                "{{game}} actors playing")], width=12, min=0, max=1),
        row("Evaluation"),
        panel("timeseries", "Latest evaluation", "Against the exact solver: optimal move "
              "rate, losses as X and as O to the exhaustive opponent, loss rate against "
              "random play.",
              [(f"max by ({by}, metric) (gameai_trainer_evaluation{{{GAME}}})",
                "{{game}} {{algorithm}} {{metric}}")], width=24),
        row("Publishing"),
        panel("timeseries", "Published, promoted, failed", "Per interval.",
              [(f"sum by (game) (increase(gameai_trainer_published_total{{{GAME}}}[{RATE}]))",
                "{{game}} published"),
               (f"sum by (game) (increase(gameai_trainer_promoted_total{{{GAME}}}[{RATE}]))",
                "{{game}} promoted"),
               (f"sum by (game) (increase(gameai_trainer_publish_failures_total{{{GAME}}}"
                f"[{RATE}]))", "{{game}} failed")], stacking="none"),
        panel("timeseries", "Time since last publish", "",
              [(f"time() - max by (game) (gameai_trainer_last_publish_timestamp_seconds"
                f"{{{GAME}}})", "{{game}}")], unit="s", min=0),
        panel("timeseries", "Candidates", "Candidates evaluated per interval: kept for "
              "publishing (better than the best model known) or not better.",
              [(f"sum by (game, result) (increase(gameai_trainer_candidates_total{{{GAME}}}"
                f"[{RATE}]))", "{{game}} {{result}}")], stacking="normal"),
        panel("timeseries", "Idle and pinned", "1 while the trainer is idle (nothing left "
              "to learn) and while production is pinned by an operator.",
              [(f"max by (game) (gameai_trainer_idle{{{GAME}}})", "{{game}} idle"),
               (f"max by (game) (gameai_trainer_production_pinned{{{GAME}}})",
                "{{game}} pinned")], interpolation="stepAfter", min=0, max=1, decimals=0),
    ]
    return dashboard("gameai-training", "gameai / training",
                     "Self-play speed, exploration, evaluation figures and publishing of the "
                     "trainers.", panels, game_metric="gameai_trainer_games_total")


DASHBOARDS = {"serving": serving, "rollouts": rollouts, "training": training}


def render() -> dict[str, str]:
    """File name -> JSON text of every dashboard."""
    return {f"{name}.json": json.dumps(build(), indent=2, sort_keys=True) + "\n"
            for name, build in DASHBOARDS.items()}


def main() -> int:
    OUT_DIR.mkdir(exist_ok=True)
    for name, text in render().items():
        (OUT_DIR / name).write_text(text)
        print(OUT_DIR / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
