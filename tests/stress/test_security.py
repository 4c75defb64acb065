"""The security pass (``gameai stress security``), without the network audit (see
test_audit.py)."""

import pytest

from gameai.stress import security
from tests.stress.conftest import assert_held

pytestmark = [pytest.mark.stress, pytest.mark.slow]


def test_security_pass() -> None:
    report = security.run(3, audit=False)
    assert_held(report)
