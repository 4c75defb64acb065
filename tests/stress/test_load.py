"""Sustained mixed load at 70% of the measured maximum (``gameai stress load``)."""

import pytest

from stress import load
from tests.stress.conftest import assert_held

pytestmark = [pytest.mark.stress, pytest.mark.slow]


def test_load_held_with_no_error_and_flat_memory() -> None:
    report = load.run(8, probe_seconds=2)
    assert_held(report)
    assert report.figures["failed"] == 0 and report.figures["requests"] > 500
