"""Shared fixtures. The session hands the game core this machine's memory limit and table
cache as every process does at start (:func:`gameai.host.install`); tests never touch the
user's caches: the cache lives in a per-session temporary directory."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from gameai import host
from gameai.store.embedded import RedisServer

# The files that take a minute or more on two cores (`pytest --durations`, 2026-11-28),
# longest first. scripts/test hands files to its workers in collection order
# (--no-loadscope-reorder): these go first, so that no worker is left running one of them
# alone at the end while the other idles. (xdist's own order, the files with the most tests
# first, started them last: 19.4 min of pytest on a slow 2-core machine.)
LONG_FILES = (
    "tests/deploy/test_readme.py",
    "tests/deploy/test_image_build.py",
    "tests/trainer/test_selfplay_ray.py",
    "tests/trainer/test_stop_rules.py",
    "tests/stress/test_faults.py",
    "tests/deploy/test_k8s_ready.py",
    "tests/stress/test_security.py",
    "tests/deploy/test_up.py",
    "tests/cli/test_ntuple_cli.py",
    "tests/games/test_search.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """:data:`LONG_FILES` first, longest first; then the other files, those with the most
    tests first (as xdist orders them), each file's tests in their own order."""
    count = Counter(item.nodeid.split("::")[0] for item in items)

    def rank(item: pytest.Item) -> tuple[int, int]:
        path = item.nodeid.split("::")[0]
        if path in LONG_FILES:
            return LONG_FILES.index(path), 0
        return len(LONG_FILES), -count[path]

    items.sort(key=rank)  # stable: a file's tests keep their order, files stay together


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("gameai-cache")
    old = os.environ.get("GAMEAI_CACHE_DIR")
    os.environ["GAMEAI_CACHE_DIR"] = str(path)
    host.install()
    yield path
    if old is None:
        os.environ.pop("GAMEAI_CACHE_DIR", None)
    else:
        os.environ["GAMEAI_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A private redis-server on a free loopback port for the whole test session."""
    with RedisServer(tmp_path_factory.mktemp("redis"), tcp=True, persist=False) as server:
        yield server


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """The private server's URL, emptied before each test so tests cannot see each other."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    client.close()
    yield redis_server.url
