"""``gameai stress audit``: the pinned dependencies (``constraints.txt``) against the
known vulnerabilities, with ``pip-audit``.

Exit status 1 when any pinned package has a known vulnerability, naming each (package,
version, advisory id, fixed versions). When the advisory service cannot be reached, or
does not know a pinned version, the audit says so loudly (on stderr, every package named)
and exits 0: CI must not fail because a web service is away, and must not pretend it
audited what it could not.

pip-audit asks PyPI's JSON API for each exact version. Where that answer is missing (this
machine reaches ``/pypi/NAME/json`` but not every ``/pypi/NAME/VERSION/json``), the
project's own page is used when the pinned version is its latest: that page lists the
advisories affecting the latest release.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYPI = "https://pypi.org/pypi/{name}/json"
NOT_FOUND = "Dependency not found on PyPI"


@dataclass
class Audit:
    pins: dict[str, str]
    vulnerable: list[str] = field(default_factory=list)  # "name version: ID (fixed in ...)"
    audited: list[str] = field(default_factory=list)
    unaudited: dict[str, str] = field(default_factory=dict)  # name -> why
    service_error: str = ""

    @property
    def ok(self) -> bool:
        return not self.vulnerable

    def to_json(self) -> dict[str, Any]:
        return {"pins": len(self.pins), "audited": self.audited, "vulnerable": self.vulnerable,
                "unaudited": self.unaudited, "service_error": self.service_error}


def read_pins(path: Path) -> dict[str, str]:
    """``name==version`` lines (comments and blanks skipped), names normalised."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[_normal(name)] = version.strip()
    return pins


def _normal(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def run_pip_audit(path: Path) -> tuple[dict[str, Any] | None, str]:
    """pip-audit's JSON report for a pinned requirements file, or ``None`` and why."""
    tool = Path(sys.executable).with_name("pip-audit")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "audit.json"
        try:
            done = subprocess.run(
                [str(tool), "-r", str(path), "--no-deps", "--disable-pip", "--progress-spinner",
                 "off", "--format", "json", "--output", str(out), "--timeout", "10"],
                capture_output=True, text=True, timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, f"pip-audit did not run: {e}"
        if not out.exists() or not out.read_text().strip():
            return None, (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
        return json.loads(out.read_text()), ""


def project_page(name: str) -> dict[str, Any]:
    with urllib.request.urlopen(PYPI.format(name=name), timeout=10) as answer:
        return dict(json.load(answer))


def judge(pins: dict[str, str], report: dict[str, Any] | None, service_error: str = "", *,
          lookup: Callable[[str], dict[str, Any]] = project_page) -> Audit:
    """Vulnerable, audited and unaudited pins from pip-audit's report, completed from the
    project pages (``lookup``) for the versions pip-audit could not find."""
    audit = Audit(pins, service_error=service_error)
    unreachable = ""  # after one failed lookup, don't wait on the others
    seen: dict[str, dict[str, Any]] = {}
    for dep in (report or {}).get("dependencies", []):
        seen[_normal(dep["name"])] = dep
    for name, version in sorted(pins.items()):
        dep = seen.get(name)
        if dep is not None and "skip_reason" not in dep:
            audit.audited.append(name)
            audit.vulnerable += [_named(name, version, v["id"], v.get("fix_versions", []))
                                 for v in dep.get("vulns", [])]
            continue
        why = dep["skip_reason"] if dep is not None else (service_error or "not in the report")
        if dep is not None and not why.startswith(NOT_FOUND):
            audit.unaudited[name] = why
            continue
        if unreachable:
            audit.unaudited[name] = f"{why}; PyPI unreachable ({unreachable})"
            continue
        try:
            page = lookup(name)
        except (OSError, ValueError, urllib.error.URLError) as e:
            unreachable = str(e)[:120]
            audit.unaudited[name] = f"{why}; PyPI unreachable ({unreachable})"
            continue
        if page.get("info", {}).get("version") != version:
            audit.unaudited[name] = (f"PyPI has no advisory answer for {version} here (latest "
                                     f"is {page.get('info', {}).get('version')})")
            continue
        audit.audited.append(name)
        audit.vulnerable += [_named(name, version, v.get("id", "?"), v.get("fixed_in", []))
                             for v in page.get("vulnerabilities", []) if not v.get("withdrawn")]
    return audit


def _named(name: str, version: str, advisory: str, fixed: list[str]) -> str:
    return f"{name} {version}: {advisory} (fixed in {', '.join(fixed) or 'no release yet'})"


def audit_file(path: Path) -> Audit:
    report, error = run_pip_audit(path)
    return judge(read_pins(path), report, error)


def main(requirements: str | None = None, *, as_json: bool = False) -> int:
    path = Path(requirements) if requirements else ROOT / "constraints.txt"
    audit = audit_file(path)
    if as_json:
        print(json.dumps(audit.to_json(), indent=2))
    else:
        print(f"pip-audit of {path.name}: {len(audit.audited)} of {len(audit.pins)} pinned "
              f"packages audited, {len(audit.vulnerable)} known vulnerabilities")
        for line in audit.vulnerable:
            print(f"  VULNERABLE {line}")
    if audit.unaudited:
        print(f"\nWARNING: {len(audit.unaudited)} of {len(audit.pins)} pinned packages could "
              "NOT be audited (the advisory service is unreachable or does not know the "
              "version); they may carry known vulnerabilities:", file=sys.stderr)
        for name, why in sorted(audit.unaudited.items()):
            print(f"WARNING:   {name} {audit.pins[name]}: {why}", file=sys.stderr)
    return 0 if audit.ok else 1


def audit_report(report: Any) -> None:
    """The audit as rows of a suite's report."""
    audit = audit_file(ROOT / "constraints.txt")
    report.check("pinned dependencies (constraints.txt) audited with pip-audit",
                 f"{len(audit.audited)} of {len(audit.pins)} audited; vulnerable: "
                 f"{'; '.join(audit.vulnerable) or 'none'}", "no known vulnerability",
                 audit.ok)
    if audit.unaudited:
        report.note("NOT audited (advisory service unreachable or silent)",
                    ", ".join(f"{n} {audit.pins[n]}" for n in sorted(audit.unaudited)))
