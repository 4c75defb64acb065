"""The operations and configuration pages keep up with the code: every setting of the
contract and of the server, every flag of `gameai serve`, every alert."""

from __future__ import annotations

import argparse
import re

import pytest

from gameai.cli import build_parser
from tests.deploy.conftest import ROOT
from tests.deploy.contract import settings

CONFIGURATION = ROOT / "docs" / "configuration.md"
OPERATIONS = ROOT / "docs" / "operations.md"


def subcommand(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices[name]


def documented_rows() -> dict[str, str]:
    """Environment variable -> its table row in configuration.md."""
    rows = {}
    for line in CONFIGURATION.read_text().splitlines():
        for name in re.findall(r"`(GAMEAI_[A-Z0-9_]+)`", line.split("|")[1] if "|" in line
                               else ""):
            rows.setdefault(name, line)
    return rows


def test_every_contract_setting_is_documented() -> None:
    missing = settings() - set(documented_rows())
    assert not missing, sorted(missing)


@pytest.mark.parametrize("command", ["serve", "trainer"])
def test_every_declared_setting_is_documented_with_its_flag(command: str) -> None:
    """Every setting the process declares (gameai.settings), with its variable, its file
    form and, where the command has it, its flag."""
    from gameai.service.settings import SERVER
    from gameai.trainer.worker.settings import WORKER

    rows = documented_rows()
    cli_flags = {o for a in subcommand(command)._actions for o in a.option_strings}
    for setting in {"serve": SERVER, "trainer": WORKER}[command]:
        for variable, flag in ((setting.variable, setting.flag),
                               (setting.file_variable, setting.file_flag)):
            if variable is None:
                continue
            assert variable in rows, f"{variable} is not in docs/configuration.md"
            if flag is not None:
                assert flag in cli_flags, f"gameai {command} has no {flag} for {variable}"
                assert f"`{flag}`" in rows[variable], f"{variable}: flag {flag} not documented"


@pytest.mark.parametrize("command", ["serve", "trainer", "up"])
def test_every_flag_is_documented(command: str) -> None:
    text = CONFIGURATION.read_text()
    for action in subcommand(command)._actions:
        for option in action.option_strings:
            if option.startswith("--") and option != "--help":
                assert f"`{option}`" in text, f"gameai {command} {option} is not documented"


def test_operations_covers_every_way_to_run_it() -> None:
    text = OPERATIONS.read_text()
    for needed in ("gameai up", "make-secrets.sh", "docker compose", "compose.external-redis.yml",
                   "kubectl apply -k deploy/k8s/overlays/production", "overlays/external-redis",
                   "gameai models promote", "gameai models rollback", "gameai models canary"):
        assert needed in text, needed
