"""Find the series names a PromQL expression (or a Grafana query) reads.

Not a PromQL parser: it removes what cannot be a series name (strings, label matchers,
ranges, grouping clauses, function calls, keywords) and keeps the identifiers left. That is
enough to check dashboards and alerts against the contract; the live test then runs every
query on a real Prometheus, which catches anything this misses.
"""

from __future__ import annotations

import re

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[[^\[\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_IDENT = re.compile(r"(?<![\w.$])[A-Za-z_:][A-Za-z0-9_:]*")
_KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "by", "without", "on",
                       "ignoring", "group_left", "group_right", "inf", "nan", "atan2"})
_LABEL_VALUES = re.compile(r"^\s*label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,")


def series_names(expr: str) -> set[str]:
    """The series names ``expr`` selects. Grafana's ``label_values(metric, label)`` counts
    as selecting ``metric``; Grafana variables (``$game``, ``$__rate_interval``) are ignored.
    """
    if m := _LABEL_VALUES.match(expr):
        return {m.group(1)}
    text = _STRING.sub('""', expr)
    text = _MATCHERS.sub("", text)
    text = _RANGE.sub("", text)
    text = _GROUPING.sub("", text)
    names = set()
    for m in _IDENT.finditer(text):
        if m.group(0).lower() in _KEYWORDS or text[m.end():].lstrip().startswith("("):
            continue
        names.add(m.group(0))
    return names


def for_prometheus(expr: str, *, rate_interval: str = "1m") -> str:
    """A Grafana query made runnable on Prometheus: its variables replaced by values."""
    return (expr.replace("$__rate_interval", rate_interval)
            .replace("$__range", "1h")
            .replace("$__interval", "15s")
            .replace('=~"$game"', '=~".*"'))
