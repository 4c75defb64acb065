"""The short versions of the ``gameai stress`` suites: the same code as the commands, with
less time, asserting that every goal held."""

from __future__ import annotations

from gameai.stress.report import Report


def assert_held(report: Report) -> None:
    """Every row's goal held; on failure the whole table is the message."""
    assert report.ok, "\n" + report.render()
