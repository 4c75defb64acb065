"""Shared fixtures. The session hands the game core this machine's memory limit and table
cache as every process does at start (:func:`gameai.host.install`); tests never touch the
user's caches: the cache lives in a per-session temporary directory."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gameai import host
from gameai.store.embedded import RedisServer


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
