"""The dependency audit: fails naming every known vulnerability; when the advisory service
cannot be reached, passes and says so loudly."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gameai.stress.audit import judge, read_pins

pytestmark = pytest.mark.stress
ROOT = Path(__file__).resolve().parents[2]


def _page(version: str, vulns: list[dict[str, object]] | None = None) -> dict[str, object]:
    return {"info": {"version": version}, "vulnerabilities": vulns or []}


def test_a_known_vulnerability_fails_and_is_named() -> None:
    pins = {"jinja2": "2.4.1", "redis": "8.1.0"}
    report = {"dependencies": [  # pip-audit's JSON format
        {"name": "jinja2", "version": "2.4.1", "vulns": [
            {"id": "PYSEC-2014-8", "fix_versions": ["2.7.2"], "aliases": ["CVE-2014-1402"],
             "description": "..."}]},
        {"name": "redis", "version": "8.1.0", "vulns": []}], "fixes": []}
    audit = judge(pins, report, lookup=lambda name: pytest.fail("no lookup needed"))
    assert not audit.ok and audit.audited == ["jinja2", "redis"]
    assert audit.vulnerable == ["jinja2 2.4.1: PYSEC-2014-8 (fixed in 2.7.2)"]


def test_versions_pip_audit_cannot_find_are_judged_from_the_project_page() -> None:
    pins = {"fastapi": "0.165.0", "numpy": "2.4.6", "tqdm": "4.70.1"}
    skipped = {"dependencies": [
        {"name": n, "skip_reason": f"Dependency not found on PyPI and could not be audited: "
                                   f"{n} ({v})"} for n, v in pins.items()]}
    pages = {"fastapi": _page("0.165.0"), "numpy": _page("2.5.5"),
             "tqdm": _page("4.70.1", [{"id": "GHSA-x", "fixed_in": ["4.70.2"]},
                                      {"id": "GHSA-old", "withdrawn": "2025-01-01"}])}
    audit = judge(pins, skipped, lookup=pages.__getitem__)
    assert audit.audited == ["fastapi", "tqdm"] and list(audit.unaudited) == ["numpy"]
    assert audit.vulnerable == ["tqdm 4.70.1: GHSA-x (fixed in 4.70.2)"]


def test_an_unreachable_service_passes_loudly(tmp_path: Path) -> None:
    pins = tmp_path / "pins.txt"
    pins.write_text("# pinned\nredis==8.1.0\nnumpy==2.4.6\n")
    assert read_pins(pins) == {"redis": "8.1.0", "numpy": "2.4.6"}
    dead = "http://127.0.0.1:9"  # nothing listens: every request fails to connect
    env = {**os.environ, "HTTPS_PROXY": dead, "https_proxy": dead, "NO_PROXY": ""}
    done = subprocess.run([sys.executable, "-m", "gameai", "stress", "audit",
                           "--requirements", str(pins)], capture_output=True, text=True,
                          env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 of 2 pinned packages audited" in done.stdout
    assert "2 of 2 pinned packages could NOT be audited" in done.stderr
    assert "WARNING:   numpy 2.4.6" in done.stderr and "WARNING:   redis 8.1.0" in done.stderr


@pytest.mark.slow
def test_the_pinned_dependencies_have_no_known_vulnerability() -> None:
    """The real audit of constraints.txt (needs PyPI; without it, it passes loudly)."""
    done = subprocess.run([sys.executable, "-m", "gameai", "stress", "audit"],
                          capture_output=True, text=True, timeout=600, check=False, cwd=ROOT)
    print(done.stdout, done.stderr)
    assert done.returncode == 0, done.stdout + done.stderr
