"""What this machine offers the game core, handed over by each process at start.

The core (:mod:`gameai.games`) does no file or environment I/O of its own (DESIGN.md); a
composition root (the command line, each server process, the tests) calls :func:`install`,
which gives it:

* the **memory limit** every solve, export and evaluation is checked against
  (:mod:`gameai.games.budget`): ``GAMEAI_MEMORY_LIMIT`` (``4G``, ``512M``...; the command
  line's ``--memory-limit`` sets it), else half of the machine's memory (the container's
  cgroup limit where it has one), read at each check;
* a **table cache** on disk (:mod:`gameai.games.cache`) where the solvers keep whole-game
  tables between processes: ``GAMEAI_CACHE_DIR``, else ``$XDG_CACHE_HOME/gameai`` or
  ``~/.cache/gameai``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

from gameai.games import budget
from gameai.games.cache import Arrays, set_table_cache


def machine_memory() -> int:
    """The memory this process's machine (or container) has, in bytes."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def memory_limit() -> budget.Limit:
    """``GAMEAI_MEMORY_LIMIT``, else :data:`~gameai.games.budget.DEFAULT_SHARE` of the machine.

    Raises:
        BadLimit: ``GAMEAI_MEMORY_LIMIT`` is not a size.
    """
    text = os.environ.get(budget.ENV, "").strip()
    if text:
        return budget.Limit(budget.parse_size(text), f"{budget.ENV}={text}")
    machine = machine_memory()
    return budget.Limit(int(machine * budget.DEFAULT_SHARE),
                        f"the default, {budget.DEFAULT_SHARE:.0%} of this machine's "
                        f"{budget.size_text(machine)}")


def cache_dir() -> Path:
    """Where gameai keeps what it computed once: solver tables, benchmark positions, books."""
    env = os.environ.get("GAMEAI_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gameai"


class DiskTables:
    """A :class:`~gameai.games.cache.TableCache` of ``.npz`` files in :func:`cache_dir` (read
    at each use, so a changed ``GAMEAI_CACHE_DIR`` takes effect). Arrays are loaded without
    pickles; a file is written whole or not at all; a read-only folder keeps nothing."""

    def load(self, name: str) -> Arrays | None:
        try:
            with np.load(cache_dir() / f"{name}.npz", allow_pickle=False) as data:
                return {key: data[key] for key in data.files}
        except (OSError, KeyError, ValueError):
            return None  # missing or damaged: the solver computes it again

    def save(self, name: str, arrays: Arrays) -> None:
        path = cache_dir() / f"{name}.npz"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as f:
                np.savez_compressed(f, **arrays)  # type: ignore[arg-type]
            os.replace(f.name, path)
        except OSError:
            pass  # a read-only cache is not an error: the table is simply not kept

    def __hash__(self) -> int:  # one cache is as good as another: the solver memoises by it
        return hash(DiskTables)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DiskTables)


def install() -> None:
    """Give the game core this machine's memory limit and the disk table cache."""
    budget.set_limit_source(memory_limit)
    set_table_cache(DiskTables())
