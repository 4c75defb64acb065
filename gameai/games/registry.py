"""Every game by name: the one module that knows every family.

A **family** is any object (usually a module) with three attributes:

* ``NAMES``: its named games, for help texts and error messages;
* ``PATTERNS``: a phrase for names it makes from parameters (``""`` when it has none);
* ``find(key) -> Game | None``: the game a normalised name (lowercase, stripped) names, or
  ``None`` when the name is none of the family's; it raises
  :class:`~gameai.games.errors.UnknownGame` for a name of its form that is out of range.

Two families are built in (:mod:`gameai.games.mnk.game`, :mod:`gameai.games.morris.game`).
Another distribution adds games without a line changed here by naming its family under
the ``gameai.games`` entry point group, as OpenSpiel's ``register_game`` and Python's
plug-ins do::

    [project.entry-points."gameai.games"]
    hexapawn = "gameai_hexapawn.game"

A game is then what the interface (:mod:`gameai.games.interface`) makes it: the trainer
learns it, the solvers solve it where they can, and the server serves it.
"""

from __future__ import annotations

import logging
import threading
from importlib.metadata import entry_points
from typing import Any, Protocol

from gameai.games.errors import UnknownGame
from gameai.games.interface import Game
from gameai.games.mnk import game as mnk
from gameai.games.morris import game as morris

GROUP = "gameai.games"
log = logging.getLogger(__name__)


class Family(Protocol):
    NAMES: tuple[str, ...]
    PATTERNS: str

    def find(self, key: str) -> Game | None: ...


_BUILT_IN: tuple[Any, ...] = (mnk, morris)
_lock = threading.Lock()
_plugins: list[Any] | None = None
_problems: dict[str, str] = {}  # entry point -> why it was not loaded


def families() -> tuple[Family, ...]:
    """The built-in families, then those installed through the entry point (loaded once)."""
    return (*_BUILT_IN, *_installed())


def plugin_problems() -> dict[str, str]:
    """Entry points of the ``gameai.games`` group that could not be loaded, with the reason."""
    _installed()
    return dict(_problems)


def known_games() -> tuple[str, ...]:
    """Every named game of every family, for help texts and error messages."""
    return tuple(name for family in families() for name in family.NAMES)


def get_game(name: str) -> Game:
    """The game called ``name``, of whichever family names it.

    Names are normalised (case and surrounding spaces) and a game is one object per name.

    Raises:
        UnknownGame: the name matches no family's, or its sizes are out of range.
    """
    if not isinstance(name, str):
        raise UnknownGame(f"game name must be text, got {type(name).__name__}")
    key = name.strip().lower()
    for family in families():
        found = family.find(key)
        if found is not None:
            return found
    shown = name if len(name) <= 40 else name[:40] + "..."
    patterns = " or ".join(f.PATTERNS for f in families() if f.PATTERNS)
    raise UnknownGame(f"unknown game {shown!r}: known games are {', '.join(known_games())}"
                      + (f", or any {patterns}" if patterns else ""))


def _installed() -> list[Any]:
    global _plugins
    with _lock:
        if _plugins is None:
            _plugins = []
            for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
                try:
                    family = point.load()
                    missing = [a for a in ("NAMES", "PATTERNS", "find")
                               if not hasattr(family, a)]
                    if missing:
                        raise TypeError(f"{point.value} has no {', '.join(missing)}")
                except Exception as e:  # a broken plug-in must not take the built-ins down
                    _problems[point.name] = f"{type(e).__name__}: {e}"
                    log.warning("game family %r (%s) not loaded: %s", point.name,
                                point.value, e)
                    continue
                _plugins.append(family)
        return _plugins
