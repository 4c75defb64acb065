"""Shared fixtures. Tests never touch the user's caches: the solver cache lives in a
per-session temporary directory."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("gameai-cache")
    old = os.environ.get("GAMEAI_CACHE_DIR")
    os.environ["GAMEAI_CACHE_DIR"] = str(path)
    yield path
    if old is None:
        os.environ.pop("GAMEAI_CACHE_DIR", None)
    else:
        os.environ["GAMEAI_CACHE_DIR"] = old
