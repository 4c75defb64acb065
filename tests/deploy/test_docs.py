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


def test_every_server_setting_is_documented_with_its_flag() -> None:
    from service import settings as server

    rows = documented_rows()
    sources = {env: flag for env, flag, _ in server._SOURCES.values()}
    sources |= dict(server._FILE_SOURCES.values())
    for env, flag in sources.items():
        assert env in rows, f"{env} is not in docs/configuration.md"
        cli_flags = {o for a in subcommand("serve")._actions for o in a.option_strings}
        if flag in cli_flags:
            assert f"`{flag}`" in rows[env], f"{env}: flag {flag} not documented"


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
