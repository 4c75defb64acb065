"""``gameai stress``: every suite is a subcommand with --seconds and --json."""

import subprocess
import sys

import pytest

from gameai.cli import main
from gameai.cli.stress import SUITES

pytestmark = pytest.mark.stress


def test_every_suite_has_its_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["stress", "--help"])
    assert done.value.code == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in [*SUITES, "audit"])
    for name in SUITES:
        with pytest.raises(SystemExit):
            main(["stress", name, "--help"])
        assert "--seconds" in capsys.readouterr().out


def test_a_bad_duration_is_refused_before_anything_starts() -> None:
    done = subprocess.run([sys.executable, "-m", "gameai", "stress", "load", "--seconds", "0"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "must be a positive number of seconds" in done.stderr
