from pathlib import Path

import pytest

from gameai.settings import SettingsError
from gameai.store import ModelStore, RedisServer, StoreUnavailable
from gameai.store.connect import StoreSettings, default_data_dir, embedded_redis, open_store


def test_flags_beat_the_environment_and_a_url_beats_a_url_file(tmp_path):
    secret = tmp_path / "url"
    secret.write_text("redis://:pw@file-host:6379/0\n")
    env = {"GAMEAI_STORE_URL_FILE": str(secret), "GAMEAI_STORE_PREFIX": "blue",
           "GAMEAI_DATA_DIR": str(tmp_path / "d")}
    s = StoreSettings.load({}, env)
    assert (s.url, s.prefix, s.data_dir) == ("redis://:pw@file-host:6379/0", "blue",
                                             tmp_path / "d")
    assert s.where == "redis://:***@file-host:6379/0"
    s = StoreSettings.load({"store_url": "redis://flag-host/1", "store_prefix": "green"}, env)
    assert (s.url, s.prefix) == ("redis://flag-host/1", "green")
    assert StoreSettings.load({"data_dir": str(tmp_path)}, {}).url is None


def test_url_settings_that_cannot_work_are_refused(tmp_path):
    with pytest.raises(SettingsError, match="not both"):
        StoreSettings.load({}, {"GAMEAI_STORE_URL": "redis://a", "GAMEAI_STORE_URL_FILE": "f"})
    with pytest.raises(SettingsError, match=r"GAMEAI_STORE_URL_FILE \(--store-file\): cannot "
                       "read"):
        StoreSettings.load({}, {"GAMEAI_STORE_URL_FILE": str(tmp_path / "missing")})
    (tmp_path / "empty").write_text("  \n")
    with pytest.raises(SettingsError, match="is empty"):
        StoreSettings.load({}, {"GAMEAI_STORE_URL_FILE": str(tmp_path / "empty")})
    with pytest.raises(SettingsError, match=r"GAMEAI_STORE_URL \(--store\): must start with"):
        StoreSettings.load({"store_url": "http://x"}, {})


def test_default_data_dir_follows_xdg(tmp_path):
    assert default_data_dir({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "gameai"
    assert default_data_dir({"GAMEAI_DATA_DIR": "/srv/g"}) == Path("/srv/g")
    assert default_data_dir({}) == Path.home() / ".local" / "share" / "gameai"


def test_open_store_with_a_url_uses_it(redis_url, make_payload):
    with open_store(StoreSettings(url=redis_url, prefix="test")) as store:
        assert store.publish(make_payload(1), by="t").version == 1
    assert ModelStore.from_url(redis_url, prefix="test").versions(game="tictactoe")


def test_the_embedded_server_is_shared_and_stopped_by_the_last_user(tmp_path, make_payload):
    data = tmp_path / "data"
    socket = data / "redis" / "redis.sock"
    with embedded_redis(data) as first_url:
        first = ModelStore.from_url(first_url)
        first.publish(make_payload(1), by="t")
        with embedded_redis(data) as second_url:  # a second user attaches, starts nothing
            assert second_url == first_url
            first.close()
        # the second user left; the first still uses the server
        assert first.versions(game="tictactoe")[0].version == 1
        first.close()
    assert not socket.exists(), "the last user out stops the server"
    with open_store(StoreSettings(data_dir=data)) as store:  # persisted on disk
        assert [r.version for r in store.versions(game="tictactoe")] == [1]
    assert not socket.exists()


def test_last_user_stops_a_server_it_did_not_start(tmp_path):
    data = tmp_path / "data"
    outer = embedded_redis(data)
    url = outer.__enter__()  # the starter
    inner = embedded_redis(data)
    assert inner.__enter__() == url
    outer.__exit__(None, None, None)  # the starter leaves first: the server must stay up
    ModelStore.from_url(url).ping()
    inner.__exit__(None, None, None)
    assert not (data / "redis" / "redis.sock").exists()


def test_a_server_started_by_another_tool_is_used_but_never_stopped(tmp_path):
    data = tmp_path / "data"
    with RedisServer(data / "redis", persist=False) as foreign:
        with embedded_redis(data) as url:
            assert url == foreign.url
        assert foreign.answers_ping(), "not ours to stop"
        with pytest.raises(StoreUnavailable, match="already runs"):
            RedisServer(data / "redis").start()
