"""``gameai bench server`` runs end to end and reports every figure (bench marker: not in
the default run)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.bench
def test_bench_server_reports_its_figures() -> None:
    out = subprocess.run([sys.executable, "-m", "gameai", "bench", "server", "--json",
                          "--seconds", "0.5", "--rounds", "1", "--workers", "1",
                          "--review-games", "200"],
                         capture_output=True, text=True, timeout=600, check=True).stdout
    report = json.loads(out)
    run = report["runs"]["1"]
    for transport in ("grpc", "rest"):
        assert run[transport]["move"]["errors"] == 0
        assert run[transport]["ratio"] > 0 and run[transport]["move"]["p99_ms"] > 0
    assert run["batch"]["positions_per_second"] > 0
    for transport in ("grpc", "rest"):
        shadow = run["shadow"][transport]
        assert shadow["ratio"] > 0 and shadow["on"]["errors"] == 0
        assert shadow["compared"] + shadow["dropped"] > 0  # the shadow saw the traffic
    for review in run["review"].values():
        assert review["depth"] == 3 and len(review["ms"]) == 3 and review["max_ms"] > 0
