import json

import pytest

from gameai.cli import main


def test_bench_store_prints_its_figures(capsys):
    assert main(["bench", "store", "-n", "5", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["n"] == 5 and figures["payload_bytes"] < 50_000
    for name in ("publish", "load", "rollout", "set_alias", "raw_set", "raw_get"):
        assert figures[f"{name}_per_second"] > 0
    assert figures["event_latency_ms_median"] > 0


@pytest.mark.bench
def test_bench_store_full(capsys):
    assert main(["bench", "store", "-n", "1000"]) == 0
    print(capsys.readouterr().out)
