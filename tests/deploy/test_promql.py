"""The series-name finder that the contract checks rely on: it must find every name, and
nothing that is not one."""

from __future__ import annotations

import pytest

from tests.deploy.contract import metrics, series_names, settings
from tests.deploy.promql import for_prometheus
from tests.deploy.promql import series_names as names_in


@pytest.mark.parametrize(("expr", "expected"), [
    ("up", {"up"}),
    ('sum by (job) (rate(gameai_requests_total{code=~"5..|INTERNAL"}[5m]))',
     {"gameai_requests_total"}),
    ("histogram_quantile(0.99, sum by (le, transport) "
     "(rate(gameai_request_duration_seconds_bucket[$__rate_interval])))",
     {"gameai_request_duration_seconds_bucket"}),
    ("a / ignoring (version) group_left sum by (game) (b{x=\"y\"})", {"a", "b"}),
    ("max by (game) (x) < on (game, metric) max by (game, metric) (y) and on (game) z > 0",
     {"x", "y", "z"}),
    ("time() - max(gameai_trainer_last_publish_timestamp_seconds{game=~\"$game\"})",
     {"gameai_trainer_last_publish_timestamp_seconds"}),
    ("absent(up{job=\"gameai-server\"} == 1)", {"up"}),
    ("rate(m[5m] offset 1h) or vector(0)", {"m"}),
    ("label_values(gameai_alias_version, game)", {"gameai_alias_version"}),
    ('sum(rate(gameai_requests_total{method="sum(x)"}[1m]))', {"gameai_requests_total"}),
])
def test_finds_exactly_the_series_names(expr: str, expected: set[str]) -> None:
    assert names_in(expr) == expected


def test_reads_the_contract_tables() -> None:
    assert metrics()["gameai_request_duration_seconds"] == "histogram"
    assert metrics()["gameai_trainer_games_total"] == "counter"
    assert len(metrics()) >= 20
    assert "gameai_request_duration_seconds_bucket" in series_names()
    assert "gameai_request_duration_seconds" not in series_names()
    assert {"GAMEAI_STORE_URL", "GAMEAI_ADMIN_TOKEN", "GAMEAI_ADMIN_TOKEN_FILE",
            "GAMEAI_METRICS_PORT"} <= settings()


def test_makes_grafana_queries_runnable() -> None:
    assert for_prometheus('rate(x{game=~"$game"}[$__rate_interval])') == \
        'rate(x{game=~".*"}[1m])'
