"""Grafana: the committed dashboards are what the generator writes, they are well-formed
Grafana dashboards, their queries name only contract metrics, and provisioning finds them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.conftest import DEPLOY, dashboards_module, load_yaml
from tests.deploy.contract import series_names
from tests.deploy.promql import series_names as names_in

GRAFANA = DEPLOY / "grafana"
FILES = sorted((GRAFANA / "dashboards").glob("*.json"))


def queries(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(where, query) for every PromQL query: panel targets, variables, annotations."""
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            yield f"{dashboard['uid']} / {panel['title']} / {target['refId']}", target["expr"]
    for var in dashboard["templating"]["list"]:
        if var["type"] == "query":
            yield f"{dashboard['uid']} / ${var['name']}", var["query"]["query"]
    for note in dashboard["annotations"]["list"]:
        if "expr" in note:
            yield f"{dashboard['uid']} / annotation {note['name']}", note["expr"]


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def test_committed_dashboards_are_the_generated_ones() -> None:
    rendered = dashboards_module().render()
    assert sorted(rendered) == [p.name for p in FILES]
    for path in FILES:
        assert path.read_text() == rendered[path.name], \
            f"{path.name} is stale: run python deploy/grafana/dashboards.py"


def test_the_three_dashboards_cover_serving_rollouts_training() -> None:
    titles = {load(p)["uid"]: [q for _, q in queries(load(p))] for p in FILES}
    assert set(titles) == {"gameai-serving", "gameai-rollouts", "gameai-training"}
    serving = " ".join(titles["gameai-serving"])
    for needed in ("gameai_requests_total", "gameai_request_duration_seconds_bucket",
                   "by (transport, method)", "histogram_quantile(0.99"):
        assert needed in serving
    rollouts = " ".join(titles["gameai-rollouts"])
    for needed in ("gameai_alias_version", "gameai_canary_weight", "gameai_model_loads_total",
                   "gameai_model_evaluation"):
        assert needed in rollouts
    training = " ".join(titles["gameai-training"])
    for needed in ("gameai_trainer_games_per_second", "gameai_trainer_exploration",
                   "gameai_trainer_evaluation", "gameai_trainer_published_total"):
        assert needed in training


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_queries_name_only_contract_metrics(path: Path) -> None:
    found = list(queries(load(path)))
    assert len(found) >= 8
    for where, query in found:
        names = names_in(query)
        assert names, f"{where}: selects no metric: {query}"
        assert not names - series_names(), \
            f"{where}: {sorted(names - series_names())} not in docs/contracts.md"


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_dashboard_is_well_formed(path: Path) -> None:
    board = load(path)
    assert board["uid"].startswith("gameai-") and len(board["uid"]) <= 40
    assert board["schemaVersion"] >= 36 and board["title"]
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids))
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    cells: set[tuple[int, int]] = set()
    for panel in board["panels"]:
        pos = panel["gridPos"]
        assert pos["x"] >= 0 and pos["w"] > 0 and pos["x"] + pos["w"] <= 24, panel["title"]
        mine = {(x, y) for x in range(pos["x"], pos["x"] + pos["w"])
                for y in range(pos["y"], pos["y"] + pos["h"])}
        assert not mine & cells, f"{panel['title']} overlaps another panel"
        cells |= mine
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]


def test_provisioning_points_at_the_mounted_dashboards_and_prometheus() -> None:
    providers = load_yaml(GRAFANA / "provisioning" / "dashboards" / "gameai.yml")["providers"]
    sources = load_yaml(GRAFANA / "provisioning" / "datasources" / "prometheus.yml")
    compose = load_yaml(DEPLOY / "docker-compose.yml")
    mounts = dict(v.rsplit(":", 1)[0].split(":", 1)
                  for v in compose["services"]["grafana"]["volumes"] if v.startswith("./"))
    assert mounts["./grafana/dashboards"] == providers[0]["options"]["path"]
    assert mounts["./grafana/provisioning"] == "/etc/grafana/provisioning"
    (source,) = sources["datasources"]
    assert source["type"] == "prometheus" and source["isDefault"]
    assert source["url"] == "http://prometheus:9090"
    assert "prometheus" in compose["services"]
