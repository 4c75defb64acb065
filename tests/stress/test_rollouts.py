"""Rollouts under traffic on two servers sharing one Redis (``gameai stress rollouts``)."""

import pytest

from gameai.stress import rollouts
from tests.stress.conftest import assert_held

pytestmark = [pytest.mark.stress, pytest.mark.slow]


def test_every_answer_from_a_live_version_and_switches_within_a_second() -> None:
    report = rollouts.run(3, cycles=6, rate=150)
    assert_held(report)
    assert report.figures["changes"] == 24 and report.figures["answers"] > 200
