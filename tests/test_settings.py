"""One way to declare a setting (gameai/settings.py), used by every process: the server,
the trainer and the ops commands resolve the same variable the same way, in one order,
with the same refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from gameai.cli import main
from gameai.service.settings import SERVER
from gameai.service.settings import load_settings as server_settings
from gameai.settings import Setting, SettingsError, read, whole_number
from gameai.store.connect import STORE, StoreSettings
from gameai.trainer.worker.settings import WORKER
from gameai.trainer.worker.settings import load_settings as worker_settings

PORT = Setting("port", "GAMEAI_X_PORT", "--port", whole_number(1, 9), 5,
               file_variable="GAMEAI_X_PORT_FILE", file_flag="--port-file")


def test_each_variable_is_declared_once_for_every_process() -> None:
    declared: dict[str, Setting] = {}
    for setting in (*SERVER, *WORKER, *STORE):
        assert declared.setdefault(setting.variable, setting) is setting, setting.variable
    assert {"GAMEAI_STORE_URL", "GAMEAI_HOST", "GAMEAI_LOG_LEVEL"} <= {
        s.variable for s in SERVER} & {s.variable for s in WORKER}


def test_one_order_flag_file_flag_variable_file_variable_default(tmp_path: Path) -> None:
    five, six, seven = (tmp_path / n for n in ("5", "6", "7"))
    for path, text in ((five, "5\n"), (six, "6"), (seven, " 7 ")):
        path.write_text(text)
    env = {"GAMEAI_X_PORT": "3"}
    assert read([PORT], {"port": 1, "port_file": str(six)}, env) == {"port": 1}
    assert read([PORT], {"port_file": str(six)}, env) == {"port": 6}
    assert read([PORT], {}, env) == {"port": 3}
    assert read([PORT], {}, {"GAMEAI_X_PORT_FILE": str(seven)}) == {"port": 7}
    assert read([PORT], {"port": None}, {"GAMEAI_X_PORT": ""}) == {"port": 5}


@pytest.mark.parametrize(("flags", "env", "message"), [
    ({"port": "10"}, {}, "GAMEAI_X_PORT (--port): must be between 1 and 9, got 10"),
    ({}, {"GAMEAI_X_PORT": "x"}, "GAMEAI_X_PORT (--port): must be a whole number, got 'x'"),
    ({}, {"GAMEAI_X_PORT": "3", "GAMEAI_X_PORT_FILE": "f"},
     "set GAMEAI_X_PORT or GAMEAI_X_PORT_FILE, not both"),
    ({"port_file": "/no/such/file"}, {},
     "GAMEAI_X_PORT_FILE (--port-file): cannot read /no/such/file: No such file or directory"),
])
def test_a_refusal_names_the_variable_and_the_flag(flags: dict[str, str], env: dict[str, str],
                                                   message: str) -> None:
    with pytest.raises(SettingsError) as refused:
        read([PORT], flags, env)
    assert str(refused.value) == message


def test_server_trainer_and_ops_commands_resolve_the_store_alike(tmp_path: Path) -> None:
    url_file = tmp_path / "url"
    url_file.write_text("redis://:pw@db:6379/2\n")
    env = {"GAMEAI_STORE_URL_FILE": str(url_file), "GAMEAI_STORE_PREFIX": "blue"}
    trainer_flags = {"game": "tictactoe", "algorithm": "td"}
    server, worker = server_settings({}, env), worker_settings(trainer_flags, env)
    store = StoreSettings.load({}, env)
    assert (server.store_url, server.store_prefix) == (store.url, store.prefix) == \
        (worker.store.url, worker.store.prefix) == ("redis://:pw@db:6379/2", "blue")
    both = {**env, "GAMEAI_STORE_URL": "redis://other:6379/0"}
    messages = set()
    for load in (lambda: server_settings({}, both), lambda: worker_settings(trainer_flags, both),
                 lambda: StoreSettings.load({}, both)):
        with pytest.raises(SettingsError) as refused:
            load()
        messages.add(str(refused.value))
    assert messages == {"set GAMEAI_STORE_URL or GAMEAI_STORE_URL_FILE, not both"}


def test_the_ops_commands_take_the_store_url_from_a_file(redis_url: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    url_file = tmp_path / "url"
    url_file.write_text(redis_url + "\n")
    assert main(["models", "list", "--game", "tictactoe", "--store-file", str(url_file),
                 "--json"]) == 0
    assert '"versions": []' in capsys.readouterr().out
    assert main(["models", "list", "--game", "tictactoe", "--store-file",
                 str(tmp_path / "missing")]) == 2
    assert "GAMEAI_STORE_URL_FILE (--store-file): cannot read" in capsys.readouterr().err
