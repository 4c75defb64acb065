"""Prometheus config and alert rules: promtool accepts them, every alert has a unit test
that makes it fire, and every expression names only metrics of the contract."""

from __future__ import annotations

import re
import subprocess
from typing import Any

import pytest

from tests.deploy.conftest import DEPLOY, ROOT, dashboards_module, load_yaml, tool
from tests.deploy.contract import series_names
from tests.deploy.promql import series_names as names_in

PROM = DEPLOY / "prometheus"


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([tool("promtool"), *args], capture_output=True, text=True,
                          timeout=120, cwd=PROM)


def test_compose_config_is_valid_and_loads_the_rules() -> None:
    result = promtool("check", "config", "prometheus.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 rule files found" in result.stdout


def test_rules_are_valid() -> None:
    result = promtool("check", "rules", "rules/alerts.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_alert_unit_tests_pass() -> None:
    result = promtool("test", "rules", "tests/alerts.test.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_promtool_test_catches_a_broken_alert(tmp_path: Any) -> None:
    """The unit tests really constrain the rules: raise one threshold and they fail."""
    rules = (PROM / "rules" / "alerts.yml").read_text()
    broken = rules.replace(") > 0.05", ") > 0.5", 1)
    assert broken != rules
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "alerts.yml").write_text(broken)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "alerts.test.yml").write_text(
        (PROM / "tests" / "alerts.test.yml").read_text())
    result = subprocess.run([tool("promtool"), "test", "rules", "tests/alerts.test.yml"],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode != 0
    assert "GameaiHighErrorRatio" in result.stdout + result.stderr


def test_the_required_alerts_exist(alert_rules: list[dict[str, Any]]) -> None:
    names = {r["alert"] for r in alert_rules}
    required = {"GameaiServerDown", "GameaiHighErrorRatio", "GameaiHighLatencyP99",
                "GameaiStoreUnreachable", "GameaiCanaryWorseThanProduction",
                "GameaiTrainerNotPublishing", "GameaiModelLoadFailures"}
    assert required <= names


def test_every_alert_has_a_unit_test_that_fires_it(alert_rules: list[dict[str, Any]]) -> None:
    fired = set()
    for case in load_yaml(PROM / "tests" / "alerts.test.yml")["tests"]:
        fired |= {t["alertname"] for t in case.get("alert_rule_test", []) if t["exp_alerts"]}
    assert {r["alert"] for r in alert_rules} == fired


def test_every_alert_has_severity_summary_and_a_runbook_entry(
        alert_rules: list[dict[str, Any]]) -> None:
    operations = (ROOT / "docs" / "operations.md").read_text()
    anchors = {re.sub(r"[^a-z0-9-]", "", h.strip().lower().replace(" ", "-"))
               for h in re.findall(r"^#+ (.+)$", operations, re.M)}
    for rule in alert_rules:
        assert rule["labels"]["severity"] in ("critical", "warning"), rule["alert"]
        assert rule["annotations"]["summary"], rule["alert"]
        runbook = rule["annotations"]["runbook"]
        assert runbook == f"docs/operations.md#{rule['alert'].lower()}", rule["alert"]
        assert rule["alert"].lower() in anchors, f"no section {rule['alert']} in operations.md"


@pytest.mark.parametrize("path", ["rules/alerts.yml"])
def test_alert_expressions_name_only_contract_metrics(path: str) -> None:
    for group in load_yaml(PROM / path)["groups"]:
        for rule in group["rules"]:
            unknown = names_in(rule["expr"]) - series_names()
            assert not unknown, f"{rule.get('alert')}: {sorted(unknown)} not in docs/contracts.md"


def test_compose_scrape_jobs_are_the_ones_alerts_use() -> None:
    config = load_yaml(PROM / "prometheus.yml")
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert jobs["gameai-server"]["dns_sd_configs"][0] == {
        "names": ["server"], "type": "A", "port": 8000, "refresh_interval": "15s"}
    assert jobs["gameai-trainer"]["static_configs"][0]["targets"] == ["trainer:9100"]
    rules = (PROM / "rules" / "alerts.yml").read_text()
    assert 'job="gameai-server"' in rules and 'job="gameai-trainer"' in rules


def test_server_error_codes_agree_with_the_dashboards() -> None:
    rules = (PROM / "rules" / "alerts.yml").read_text()
    assert f'code=~"{dashboards_module().SERVER_ERROR_CODES}"' in rules
