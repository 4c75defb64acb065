"""``gameai models``: in-process through ``gameai.cli.main`` (fast), and as a real
subprocess where process start and exit matter (the embedded Redis, environment)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gameai.cli import main
from gameai.games import get_game
from gameai.models import ModelInfo, TableModel
from gameai.models.oracle import solver_model
from gameai.store import ModelStore, RedisServer


@functools.cache
def _oracle() -> TableModel:
    return solver_model(get_game("tictactoe"))


def model_file(folder: Path, seed: int, **evaluation: float) -> Path:
    o = _oracle()
    info = ModelInfo(game="tictactoe", algorithm="td", seed=seed, games_played=1000 * seed,
                     evaluation=dict(evaluation))
    path = folder / f"model-{seed}.gameai"
    path.write_bytes(TableModel(o.game, info, o.keys, o.values).to_bytes())
    return path


AUDITED = {"promote", "rollback", "pin", "release", "canary", "shadow", "import", "gc",
           "publish-exact"}


class Cli:
    """Runs ``gameai models ACTION --game tictactoe --store URL ...`` in this process."""

    def __init__(self, url: str, capsys: pytest.CaptureFixture[str]) -> None:
        self.url, self.capsys = url, capsys

    def __call__(self, action: str, *args: str, game: str = "tictactoe",
                 store: str | None = None) -> tuple[int, str, str]:
        self.capsys.readouterr()
        by = ["--by", "tester"] if action in AUDITED else []
        code = main(["models", action, "--game", game, "--store", store or self.url, *by,
                     *args])
        out, err = self.capsys.readouterr()
        return code, out, err

    def json(self, action: str, *args: str) -> dict:
        code, out, err = self(action, *args, "--json")
        assert code == 0, err
        return json.loads(out)


@pytest.fixture
def cli(redis_url: str, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(redis_url, capsys)


@pytest.fixture
def three(cli: Cli, tmp_path: Path) -> list[Path]:
    files = [model_file(tmp_path, seed, optimal_move_rate=0.9 + seed / 100) for seed in (1, 2, 3)]
    for f in files:
        assert cli("import", str(f))[0] == 0
    return files


def test_list_json_has_the_documented_shape(cli, three):
    cli("promote", "--version", "2")
    cli("canary", "--version", "3", "--weight", "10")
    listing = cli.json("list")
    assert listing["game"] == "tictactoe"
    assert listing["aliases"] == {"production": 2, "canary": 3} and listing["canary_weight"] == 10
    v = listing["versions"][0]
    assert v["version"] == 1 and v["algorithm"] == "td" and v["games_played"] == 1000
    assert v["sha256"] == hashlib.sha256(three[0].read_bytes()).hexdigest()
    assert v["evaluation"] == {"optimal_move_rate": 0.91} and v["created_at"]
    code, out, _ = cli("list")
    assert code == 0 and "canary -> 3, production -> 2" in out and "optimal_move_rate=0.93" in out


def test_show_accepts_numbers_aliases_and_latest(cli, three):
    cli("promote", "--version", "1")
    shown = cli.json("show", "--version", "production")
    assert (shown["version"], shown["aliases"], shown["info"]["seed"]) == (1, ["production"], 1)
    assert cli.json("show", "--version", "latest")["version"] == 3
    code, out, _ = cli("show", "--version", "2")
    assert code == 0 and "sha256" in out and "seed: 2" in out.replace("  ", "")


def test_promote_rollback_canary_and_history(cli, three):
    assert cli.json("promote", "--version", "1") == {
        "game": "tictactoe", "alias": "production", "from": None, "to": 1,
        "at": cli.json("history")["history"][0]["at"], "by": "tester", "action": "set",
        "pinned": True}
    cli("promote", "--version", "2")
    cli("promote", "--version", "3")
    assert cli.json("rollback")["to"] == 2
    assert cli.json("rollback")["to"] == 1
    code, _, err = cli("rollback")
    assert code == 1 and err.count("\n") == 1 and "no earlier version" in err
    assert cli.json("canary", "--version", "3", "--weight", "25") == {
        "game": "tictactoe", "canary": 3, "canary_weight": 25}
    assert cli.json("canary", "--weight", "0")["canary_weight"] == 0
    history = cli.json("history")["history"]
    assert [(h["alias"], h["from"], h["to"]) for h in history] == [
        ("production", None, 1), ("production", 1, 2), ("production", 2, 3),
        ("production", 3, 2), ("production", 2, 1), ("canary", None, 3)]
    assert set(history[0]) >= {"alias", "from", "to", "at", "by"}
    assert len(cli.json("history", "--alias", "canary")["history"]) == 1


def test_a_manual_promote_or_rollback_pins_production_until_released(cli, three, redis_url):
    store = ModelStore.from_url(redis_url)
    code, out, _ = cli("promote", "--version", "1")
    assert code == 0 and "pinned: auto-promotion holds off" in out
    assert store.pinned(game="tictactoe").version == 1
    assert cli.json("list")["pin"] == {**store.pinned(game="tictactoe").to_json(),
                                       "by": "tester", "action": "set"}
    code, out, _ = cli("list")
    assert "production pinned by tester at" in out and "(promoted to version 1)" in out
    assert "gameai models release --game tictactoe" in out
    assert cli.json("release")["released"]["version"] == 1
    assert store.pinned(game="tictactoe") is None and cli.json("list")["pin"] is None
    assert "production not pinned" in cli("list")[1]
    assert "nothing changed" in cli("release")[1]
    cli("promote", "--version", "2", "--no-pin")
    assert store.pinned(game="tictactoe") is None
    assert cli.json("rollback")["pinned"] is True
    assert store.pinned(game="tictactoe").action == "rollback"
    cli("release")
    assert cli.json("pin")["pin"]["version"] == 1
    actions = [h["action"] for h in cli.json("history")["history"]]
    assert actions == ["set", "release", "set", "rollback", "release", "pin"]


@pytest.mark.parametrize(("args", "message"), [
    (["show", "--version", "9"], "tictactoe has no version 9 (versions: 1-3)"),
    (["promote", "--version", "9"], "tictactoe has no version 9"),
    (["promote", "--version", "nope"], "tictactoe has no version nope"),
    (["canary", "--version", "2", "--weight", "150"], "0 to 100, not 150"),
    (["canary", "--weight", "5"], "no canary version"),
    (["promote", "--version", "1", "--alias", "7up"], "invalid alias name '7up'"),
    (["gc", "--keep", "0"], "at least 1"),
])
def test_a_refused_command_says_why_in_one_line_and_changes_nothing(cli, three, redis_url,
                                                                    args, message):
    cli("promote", "--version", "1")
    before = ModelStore.from_url(redis_url)
    state = (before.rollout(game="tictactoe"), before.history(game="tictactoe"),
             before.versions(game="tictactoe"))
    code, out, err = cli(*args)
    assert code == 1 and out == ""
    assert err.startswith("gameai models: error: ") and err.count("\n") == 1
    assert message in err
    assert (before.rollout(game="tictactoe"), before.history(game="tictactoe"),
            before.versions(game="tictactoe")) == state


def test_an_unknown_game_is_named(cli):
    code, _, err = cli("list", game="chess")
    assert code == 2 and "unknown game 'chess'" in err


def test_an_unreachable_store_is_named_with_the_password_hidden(cli, tmp_path):
    url = RedisServer(tmp_path, tcp=True, password="s3cr3t-pw").url  # never started
    code, out, err = cli("list", store=url)
    assert code == 3 and out == "" and err.count("\n") == 1
    assert "s3cr3t-pw" not in err and "redis://:***@127.0.0.1:" in err


def test_export_import_across_two_servers_keeps_the_exact_bytes(cli, three, tmp_path):
    out = tmp_path / "exported.gameai"
    assert cli("export", "--version", "2", "--out", str(out))[0] == 0
    assert out.read_bytes() == three[1].read_bytes()
    with RedisServer(tmp_path / "other", tcp=True, persist=False) as other:
        cli("import", str(model_file(tmp_path, 9)), store=other.url)
        code, text, _ = cli("import", str(out), store=other.url)
        assert code == 0 and "as tictactoe version 2 " in text
        store = ModelStore.from_url(other.url)
        assert store.payload(game="tictactoe", version=2) == out.read_bytes()
        assert store.version(game="tictactoe", version=2).sha256 == \
            hashlib.sha256(out.read_bytes()).hexdigest()
        store.close()


def test_a_corrupt_export_is_refused_on_import(cli, three, tmp_path):
    bad = tmp_path / "bad.gameai"
    data = bytearray(three[0].read_bytes())
    data[-40] ^= 0x10
    bad.write_bytes(bytes(data))
    code, _, err = cli("import", str(bad))
    assert code == 1 and "refused to import" in err and "checksum" in err
    assert len(cli.json("list")["versions"]) == 3
    code, _, err = cli("import", str(tmp_path / "missing.gameai"))
    assert code == 1 and "cannot read" in err


def test_import_with_the_files_judged_report_shows_it_as_the_versions_own(cli, tmp_path,
                                                                            capsys):
    """``evaluate FILE --judge-games N --json`` judges the file as the gates would and names
    its sha256; ``models import FILE --judged REPORT`` records those figures as the
    version's own (shown by list and show), and refuses a report of another file."""
    path = model_file(tmp_path, 5)
    assert main(["evaluate", str(path), "--judge-games", "2", "--random-games", "10",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    names = [m["name"] for m in report["judged"]["measures"]]
    assert names == ["lines_lost", "optimal_move_rate"]  # tic-tac-toe: exhaustive measures
    saved = tmp_path / "judged.json"
    saved.write_text(json.dumps(report))
    code, _, err = cli("import", str(model_file(tmp_path, 6)), "--judged", str(saved))
    assert code == 1 and f"judged another file (sha256 {report['sha256'][:12]})" in err
    assert cli.json("list")["versions"] == []  # nothing stored
    code, _, err = cli("import", str(path), "--judged", str(path))
    assert code == 1 and "is not JSON" in err
    assert cli("import", str(path), "--judged", str(saved))[0] == 0
    shown = cli.json("show", "--version", "1")
    assert shown["info"]["evaluation"]["judged"] == report["judged"]
    code, out, _ = cli("list")
    assert code == 0 and "judged at table: lines_lost 0; optimal_move_rate 1.000000" in out, out


def test_import_refuses_a_model_of_another_game(cli, tmp_path):
    o = solver_model(get_game("mnk-3x3-2"))
    path = tmp_path / "other-game.gameai"
    path.write_bytes(o.to_bytes())
    code, _, err = cli("import", str(path))
    assert code == 1 and "holds a mnk-3x3-2 model, not tictactoe" in err


def test_export_never_overwrites_without_force(cli, three, tmp_path):
    out = tmp_path / "precious"
    out.write_bytes(b"keep me")
    code, _, err = cli("export", "--version", "1", "--out", str(out))
    assert code == 1 and "--force" in err and out.read_bytes() == b"keep me"
    assert cli("export", "--version", "1", "--out", str(out), "--force")[0] == 0
    assert out.read_bytes() == three[0].read_bytes()


def test_gc_dry_run_then_gc(cli, three):
    cli("promote", "--version", "1")
    plan = cli.json("gc", "--keep", "1", "--window-days", "0", "--dry-run")
    because = {"1": ["production points at it"], "3": ["among the newest 1"]}
    assert plan == {"game": "tictactoe", "deleted": [2], "kept": [1, 3], "dry_run": True,
                    "kept_because": because}
    done = cli.json("gc", "--keep", "1", "--window-days", "0")
    assert done == {"game": "tictactoe", "deleted": [2], "kept": [1, 3], "dry_run": False,
                    "kept_because": because}
    code, _, err = cli("show", "--version", "2")
    assert code == 1 and "deleted by gc" in err


def _gameai(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GAMEAI_STORE")}
    return subprocess.run([sys.executable, "-m", "gameai", "models", *args], capture_output=True,
                          text=True, timeout=60, env={**base, **(env or {})})


@pytest.mark.slow
def test_the_embedded_default_starts_stops_and_persists(tmp_path):
    data = tmp_path / "data"
    model = model_file(tmp_path, 4)
    first = _gameai("import", str(model), "--game", "tictactoe", "--data-dir", str(data))
    assert first.returncode == 0, first.stderr
    assert not (data / "redis" / "redis.sock").exists(), "redis-server stopped on exit"
    second = _gameai("list", "--game", "tictactoe", "--data-dir", str(data), "--json")
    assert second.returncode == 0, second.stderr
    assert [v["version"] for v in json.loads(second.stdout)["versions"]] == [1]
    running = subprocess.run(["pgrep", "-f", f"redis-server.*{data}"], capture_output=True)
    assert running.stdout == b"", "no redis-server left behind"


@pytest.mark.slow
def test_the_store_url_comes_from_the_environment_or_a_file(redis_url, tmp_path):
    model = model_file(tmp_path, 5)
    out = _gameai("import", str(model), "--game", "tictactoe", "--json",
                  env={"GAMEAI_STORE_URL": redis_url})
    assert out.returncode == 0, out.stderr
    secret = tmp_path / "store-url"
    secret.write_text(redis_url + "\n")
    listed = _gameai("list", "--game", "tictactoe", "--json",
                     env={"GAMEAI_STORE_URL_FILE": str(secret)})
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["versions"][0]["sha256"] == json.loads(out.stdout)["sha256"]


def test_publish_exact_publishes_the_solvers_model_labelled_as_such(cli, redis_url):
    shown = cli.json("publish-exact", "--promote")
    assert shown["version"] == 1 and shown["promoted"]
    assert shown["evaluation"]["optimal_move_rate"] == 1.0
    assert shown["evaluation"]["losses_as_x"] == shown["evaluation"]["losses_as_o"] == 0
    store = ModelStore.from_url(redis_url)
    try:
        record = store.version(game="tictactoe", version=1)
        assert record.info["algorithm"] == "solver" and record.info["params"]["exact"]
        assert record.info["games_played"] == 0
        assert "not learned" in record.info["params"]["source"]
        assert store.rollout(game="tictactoe").production == 1
        assert store.rollout(game="tictactoe").pin is not None  # an operator's choice
        assert store.load(game="tictactoe", version=1).info.evaluation == shown["evaluation"]
    finally:
        store.close()
    code, out, _ = cli("publish-exact")
    assert code == 0 and "as version 2" in out and "algorithm solver, not learned" in out


def test_publish_exact_refuses_a_game_whose_table_does_not_fit_in_one_line(cli, redis_url,
                                                                          monkeypatch):
    # --memory-limit sets it in os.environ: have monkeypatch record it (setenv does, even
    # when it was unset; a delenv of an unset variable records nothing) so it is undone
    monkeypatch.setenv("GAMEAI_MEMORY_LIMIT", "1G")
    monkeypatch.delenv("GAMEAI_MEMORY_LIMIT")
    code, _, err = cli("publish-exact", "--memory-limit", "64M", game="four-in-a-row")
    assert code == 1 and err.count("\n") == 1
    assert "four-in-a-row" in err and "over the memory limit of 64.0 MB" in err
    store = ModelStore.from_url(redis_url)
    try:
        assert store.versions(game="four-in-a-row") == []
    finally:
        store.close()


def test_list_and_show_print_a_versions_judged_strength(cli, tmp_path):
    """An n-tuple version's strength lives in its judged measures (nested): list and show
    print them, with the policy judged and each match's interval."""
    judged = {"policy": "depth 3", "seconds": 41.5, "unproved_moves": 0, "measures": [
        {"name": "vs_perfect_as_x", "kind": "score", "games": 100, "wins": 92, "draws": 5,
         "losses": 3, "score": {"value": 0.945, "low": 0.9, "high": 0.98}}]}
    o = _oracle()
    info = ModelInfo(game="tictactoe", algorithm="ntuple", seed=1, games_played=1000,
                     evaluation={"model_bytes": 3872, "judged": judged})
    path = tmp_path / "judged.gameai"
    path.write_bytes(TableModel(o.game, info, o.keys, o.values).to_bytes())
    assert cli("import", str(path))[0] == 0
    code, out, _ = cli("list")
    assert code == 0
    assert "judged at depth 3: vs_perfect_as_x 92/5/3 (score 0.945 in [0.900, 0.980])" in out
    code, out, _ = cli("show", "--version", "1")
    assert code == 0 and "vs_perfect_as_x 92/5/3" in out


def test_gc_that_deletes_nothing_says_why(cli, three):
    """Inside the retention window every version an alias moved through is kept: gc says
    so rather than only 'deleted nothing'."""
    cli("promote", "--version", "1")
    cli("promote", "--version", "2")
    code, out, _ = cli("gc", "--keep", "1")
    assert code == 0 and "deleted nothing" in out
    assert "kept 1: an alias moved to or from it within the 7-day window" in out
    assert "kept 2: production points at it" in out
    assert "kept 3: among the newest 1" in out
    assert "--window-days 7 keeps what an alias moved to or from" in out


def test_shadow_sets_the_alias_and_share_and_list_shows_what_it_found(cli, three, redis_url):
    cli("promote", "--version", "1")
    code, out, _ = cli("shadow", "--version", "3", "--share", "50")
    assert code == 0 and "version 3, 50% of production's best-move queries mirrored" in out
    assert "nothing compared yet" in cli("list")[1]
    with ModelStore.from_url(redis_url) as store:
        assert store.rollout(game="tictactoe").shadow_share == 50
        store.record_shadow(game="tictactoe", version=3, production=1,
                            counts={"compared": 200, "agreed": 150, "proved": 100,
                                    "production_optimal": 100, "shadow_optimal": 90})
    out = cli("list")[1]
    assert ("shadow at 50% of production's best-move queries: version 3 against production "
            "1: 200 queries compared, agrees 75.0%; optimal 90.0% against production's "
            "100.0% (100 proved)") in out
    listing = cli.json("list")
    assert listing["shadow"]["version"] == 3 and listing["shadow"]["share"] == 50
    assert listing["shadow"]["report"]["agreement"] == 0.75
    assert cli.json("shadow", "--share", "0") == {"game": "tictactoe", "shadow": 3,
                                                 "shadow_share": 0}
    code, _, err = cli("shadow", "--version", "9", "--share", "10")
    assert code == 1 and "no version 9" in err
