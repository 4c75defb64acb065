"""Hostile input on both transports, schemathesis and core fuzzing
(``gameai stress hostile``)."""

import pytest

from gameai.stress import hostile
from tests.stress.conftest import assert_held

pytestmark = [pytest.mark.stress, pytest.mark.slow]


def test_hostile_input_gets_precise_errors_only() -> None:
    report = hostile.run(4, fuzz_examples=25, api_examples=12)
    assert_held(report)
    assert len(report.figures["rest_probes"]) >= 40 and len(report.figures["grpc_probes"]) >= 15
    assert report.figures["schemathesis"]["generated"] > 100
