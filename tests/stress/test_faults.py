"""The fault scenarios of ``gameai stress faults``, one test each."""

from pathlib import Path

import pytest

from gameai.store import RedisServer
from gameai.stress.drain import sigterm_under_load
from gameai.stress.kills import trainer_kills
from gameai.stress.outage import corrupt_payloads, redis_outage
from gameai.stress.report import Report
from tests.stress.conftest import assert_held

pytestmark = [pytest.mark.stress, pytest.mark.slow]


@pytest.mark.parametrize("empty", [False, True], ids=["restarted", "back-empty"])
def test_redis_outage_under_traffic(tmp_path: Path, empty: bool) -> None:
    report = Report("faults", "test")
    redis_outage(report, tmp_path, 2.0, empty=empty)
    assert_held(report)


def test_damaged_payloads_are_refused_counted_and_logged_once(tmp_path: Path,
                                                               redis_url: str) -> None:
    report = Report("faults", "test")
    corrupt_payloads(report, tmp_path, redis_url)
    assert_held(report)


def test_trainer_killed_mid_publish_leaves_no_half_version(tmp_path: Path,
                                                            redis_url: str) -> None:
    report = Report("faults", "test")
    trainer_kills(report, tmp_path, redis_url, random_kills=1)
    assert_held(report)
    assert len(report.figures["kill_points"]) == 8


def test_sigterm_under_load(tmp_path: Path, redis_server: RedisServer) -> None:
    report = Report("faults", "test")
    sigterm_under_load(report, tmp_path, redis_server.url)
    assert_held(report)
