"""The fault proxy: commands split exactly, and a cut command never reaches Redis whole."""

import threading

import pytest
import redis

from gameai.store import RedisServer
from gameai.stress.proxy import FaultProxy, split_commands

pytestmark = pytest.mark.stress


def test_commands_are_split_at_their_boundaries() -> None:
    one = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\na\r\nbc\r\n"  # CRLF inside a value
    two = b"*1\r\n$4\r\nPING\r\n"
    assert split_commands(one + two[:7]) == ([one], two[:7])
    assert split_commands(one + two) == ([one, two], b"")
    assert split_commands(b"PING\r\n" + one) == ([b"PING\r\n", one], b"")


@pytest.mark.parametrize("fraction", [0.0, 0.5, 0.999])
def test_a_cut_command_is_never_applied(redis_server: RedisServer, redis_url: str,
                                        fraction: float) -> None:
    proxy = FaultProxy(redis_server.port or 0)
    fired_at: list[str] = []
    fired = proxy.arm(b"poisoned", "cut", fraction=fraction,
                      on_fire=lambda: fired_at.append(threading.current_thread().name))
    client = redis.Redis.from_url(proxy.url(), socket_timeout=2, retry_on_timeout=False)
    client.set("before", "1")
    with pytest.raises(redis.ConnectionError):
        client.set("key", "poisoned" + "x" * 50_000)
    assert fired.is_set() and fired_at
    direct = redis.Redis.from_url(redis_url)
    assert direct.get("before") == b"1" and direct.get("key") is None
    client.close()
    direct.close()
    proxy.close()
