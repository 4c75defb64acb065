"""Where solvers may keep what they computed once (a whole-game table): a cache the process
hands the game core at start (:func:`gameai.host.install`), since the core itself does no
file or environment I/O. Without one, tables live in memory for the process's lifetime."""

from __future__ import annotations

from typing import Any, Protocol

import numpy.typing as npt

Arrays = dict[str, npt.NDArray[Any]]


class TableCache(Protocol):
    """Named sets of arrays kept between processes."""

    def load(self, name: str) -> Arrays | None:
        """The arrays saved under ``name``, or None when missing or unreadable."""

    def save(self, name: str, arrays: Arrays) -> None:
        """Keep ``arrays`` under ``name``; a cache that cannot keep them drops them."""

    def __hash__(self) -> int:
        """Caches are hashable: the solvers remember what they loaded, per cache."""


_installed: TableCache | None = None


def set_table_cache(cache: TableCache | None) -> None:
    """Use ``cache`` for the solvers' tables from now on (None: keep them in memory only)."""
    global _installed
    _installed = cache


def table_cache() -> TableCache | None:
    return _installed

