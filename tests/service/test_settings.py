"""Settings: flags over environment, files for secrets, refusals that name the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from gameai.service.settings import SettingsError, load_settings


def test_defaults_follow_the_contract() -> None:
    s = load_settings({}, {})
    assert (s.http_port, s.grpc_port, s.host, s.games) == (8000, 50051, "127.0.0.1",
                                                          ("tictactoe",))
    assert s.store_url is None and s.admin_token is None and s.store_prefix == "gameai"


def test_flags_win_over_the_environment() -> None:
    env = {"GAMEAI_HTTP_PORT": "9000", "GAMEAI_GAMES": "four-in-a-row",
           "GAMEAI_STORE_URL": "redis://env:6379/0"}
    s = load_settings({"http_port": "9100", "store_url": None}, env)
    assert s.http_port == 9100 and s.games == ("four-in-a-row",)
    assert s.store_url == "redis://env:6379/0"


def test_exact_budgets_are_read_per_game() -> None:
    assert load_settings({}, {}).exact_ms == (("connect-four", 1),)
    s = load_settings({"exact_ms": "connect-four=5, tictactoe=0"}, {})
    assert s.exact_ms == (("connect-four", 5), ("tictactoe", 0))
    off = load_settings({}, {"GAMEAI_EXACT_MS": "connect-four=0"})
    assert off.exact_ms == (("connect-four", 0),)
    half = load_settings({"exact_ms": "connect-four=0.5"}, {})
    assert half.exact_ms == (("connect-four", 0.5),)  # a fraction of a millisecond
    assert load_settings({}, {}).exact_background_ms == (("connect-four", 2000),)
    none = load_settings({"exact_background_ms": "connect-four=0"}, {})
    assert none.exact_background_ms == (("connect-four", 0),)


def test_games_are_normalised_and_deduplicated() -> None:
    s = load_settings({"games": "tictactoe, mnk-3x3-3 ,connect-four"}, {})
    assert s.games == ("tictactoe", "connect-four")


@pytest.mark.parametrize(("flags", "env", "message"), [
    ({"http_port": "http"}, {}, "GAMEAI_HTTP_PORT (--http-port): must be a whole number"),
    ({}, {"GAMEAI_GRPC_PORT": "70000"}, "GAMEAI_GRPC_PORT (--grpc-port): must be between"),
    ({"games": "chess"}, {}, "GAMEAI_GAMES (--games): unknown game 'chess'"),
    ({"games": " , "}, {}, "GAMEAI_GAMES (--games): must name at least one game"),
    ({"store_url": "http://x"}, {}, "GAMEAI_STORE_URL (--store): must start with redis://"),
    ({"log_level": "loud"}, {}, "GAMEAI_LOG_LEVEL (--log-level): must be one of"),
    ({"workers": "0"}, {}, "GAMEAI_WORKERS (--workers): must be between 1 and 64"),
    ({"grace_seconds": "1", "drain_seconds": "5"}, {}, "GAMEAI_DRAIN_SECONDS"),
    ({}, {"GAMEAI_READY_WHEN": "some"}, "GAMEAI_READY_WHEN (--ready-when): must be all"),
    ({}, {"GAMEAI_EXACT_MS": "connect-four"}, "GAMEAI_EXACT_MS (--exact-ms): must be "
     "game=milliseconds pairs, got 'connect-four'"),
    ({"exact_ms": "chess=3"}, {}, "GAMEAI_EXACT_MS (--exact-ms): unknown game 'chess'"),
    ({"exact_ms": "connect-four=fast"}, {}, "GAMEAI_EXACT_MS (--exact-ms): connect-four: "
     "must be a number of milliseconds, got 'fast'"),
    ({"exact_ms": "connect-four=nan"}, {}, "GAMEAI_EXACT_MS (--exact-ms): connect-four: "
     "must be between 0 and 1000 ms"),
    ({}, {"GAMEAI_EXACT_BACKGROUND_MS": "connect-four=0.5"},
     "GAMEAI_EXACT_BACKGROUND_MS (--exact-background-ms): connect-four: must be a whole "
     "number of milliseconds, got '0.5'"),
    ({"exact_background_ms": "connect-four=700000"}, {}, "GAMEAI_EXACT_BACKGROUND_MS "
     "(--exact-background-ms): connect-four: must be between 0 and 600000 ms"),
    ({"exact_ms": "connect-four=5000"}, {}, "GAMEAI_EXACT_MS (--exact-ms): connect-four: "
     "must be between 0 and 1000 ms"),
    ({"proved_max": "-1"}, {}, "GAMEAI_PROVED_MAX (--proved-max): must be between"),
])
def test_bad_values_name_the_setting(flags: dict[str, str], env: dict[str, str],
                                     message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_settings(flags, env)


def test_admin_token_is_never_shown(tmp_path: Path) -> None:
    secret = "s3cret-token-that-is-long-enough"
    s = load_settings({}, {"GAMEAI_ADMIN_TOKEN": secret})
    assert s.admin_token == secret and secret not in repr(s)
    with pytest.raises(SettingsError) as caught:
        load_settings({}, {"GAMEAI_ADMIN_TOKEN": "short-secret"})
    assert "short-secret" not in str(caught.value) and "GAMEAI_ADMIN_TOKEN" in str(caught.value)


def test_secrets_come_from_files(tmp_path: Path) -> None:
    token, url = tmp_path / "token", tmp_path / "url"
    token.write_text("file-token-0123456789abcdef\n")
    url.write_text("redis://:pw@db:6379/2\n")
    s = load_settings({"admin_token_file": str(token)}, {"GAMEAI_STORE_URL_FILE": str(url)})
    assert s.admin_token == "file-token-0123456789abcdef"
    assert s.store_url == "redis://:pw@db:6379/2"
    with pytest.raises(SettingsError, match=r"GAMEAI_ADMIN_TOKEN_FILE .*cannot read"):
        load_settings({"admin_token_file": str(tmp_path / "missing")}, {})
