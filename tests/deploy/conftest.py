"""Fixtures of the deploy tests: paths and parsed files. Tools that are part of the
install (promtool, kubectl, hadolint) are required, not skipped: CI has them."""

from __future__ import annotations

import importlib.util
import shutil
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def tool(name: str) -> str:
    """The path of a command-line tool the install provides (the venv first)."""
    found = shutil.which(name, path=str(ROOT / ".venv" / "bin")) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: run `bash scripts/install`")
    return found


@cache
def dashboards_module() -> ModuleType:
    """deploy/grafana/dashboards.py, the generator of the dashboards (not a package)."""
    path = DEPLOY / "grafana" / "dashboards.py"
    spec = importlib.util.spec_from_file_location("gameai_deploy_dashboards", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def alert_rules_of(directory: Path) -> list[dict[str, Any]]:
    """Every alerting rule of the rule files in ``directory``."""
    rules = []
    for path in sorted(directory.glob("*.yml")):
        for group in load_yaml(path)["groups"]:
            rules += [r for r in group["rules"] if "alert" in r]
    return rules


@pytest.fixture(scope="session")
def alert_rules() -> list[dict[str, Any]]:
    """Every alerting rule of deploy/prometheus/rules/."""
    return alert_rules_of(DEPLOY / "prometheus" / "rules")
