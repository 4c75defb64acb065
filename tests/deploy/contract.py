"""What docs/contracts.md promises, read from its tables: metric names and settings.

The deploy files are checked against these sets, so a dashboard or alert that names a
metric the processes do not export, or a manifest that sets a variable nobody reads, fails.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "docs" / "contracts.md"

_METRIC_ROW = re.compile(r"^\| `(gameai_[a-z0-9_]+)` \| (counter|gauge|histogram) \|", re.M)
_SETTING_ROW = re.compile(r"^\| `(GAMEAI_[A-Z0-9_]+)`(?: / `(GAMEAI_[A-Z0-9_]+)`)? \|", re.M)
# Prometheus adds these to every target; they are not the processes' own.
SCRAPE_METRICS = frozenset({"up", "scrape_duration_seconds", "scrape_samples_scraped"})


@cache
def metrics() -> dict[str, str]:
    """Metric name -> type, for every metric of the contract."""
    return {m[1]: m[2] for m in _METRIC_ROW.finditer(CONTRACT.read_text())}


@cache
def series_names() -> frozenset[str]:
    """Every series name a query may use: the contract's metrics as exported (histogram
    ``_bucket``/``_sum``/``_count``) plus Prometheus's own per-target series."""
    names = set(SCRAPE_METRICS)
    for name, kind in metrics().items():
        if kind == "histogram":
            names |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
        else:
            names.add(name)
    return frozenset(names)


@cache
def settings() -> frozenset[str]:
    """Every environment variable of the contract's settings table."""
    found = set()
    for m in _SETTING_ROW.finditer(CONTRACT.read_text()):
        found |= {v for v in m.groups() if v}
    return frozenset(found)
