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
    mygames = "my_package.family"

A game is then what the interface (:mod:`gameai.games.interface`) makes it: the trainer
learns it, the solvers solve it where they can, and the server serves it (``examples/``
holds such a distribution; docs/games.md says how to write one).

A broken plug-in never takes the other games down: an entry point that does not load, or
names no family, is left out with a warning, and a family whose ``find`` fails with
anything but a :class:`~gameai.games.errors.GameError` is skipped for that name; both are
listed by :func:`plugin_problems`.
"""

from __future__ import annotations

import logging
import threading
from importlib.metadata import entry_points
from typing import Any, Protocol

from gameai.games.errors import GameError, UnknownGame
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
_problems: dict[str, str] = {}  # entry point -> why it was not loaded (or was dropped)
_names: dict[int, str] = {}  # id of a loaded family -> its entry point's name


def families() -> tuple[Family, ...]:
    """The built-in families, then those installed through the entry point (loaded once)."""
    return (*_BUILT_IN, *_installed())


def plugin_problems() -> dict[str, str]:
    """Entry points of the ``gameai.games`` group that could not be loaded, or whose family
    failed on a name, with the reason."""
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
        try:
            found = family.find(key)
        except GameError:
            raise
        except Exception as e:
            if any(family is b for b in _BUILT_IN):
                raise
            _skip(family, f"find({key[:40]!r}) failed: {type(e).__name__}: {e}")
            continue
        if found is not None and not isinstance(found, Game):
            _skip(family, f"find({key[:40]!r}) returned a {type(found).__name__}, not a Game")
            continue
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
                    _check_family(point.value, family)
                except Exception as e:  # a broken plug-in must not take the built-ins down
                    _problems[point.name] = f"{type(e).__name__}: {e}"
                    log.warning("game family %r (%s) not loaded: %s", point.name,
                                point.value, e)
                    continue
                _plugins.append(family)
                _names[id(family)] = point.name
        return _plugins


def _check_family(where: str, family: Any) -> None:
    missing = [a for a in ("NAMES", "PATTERNS", "find") if not hasattr(family, a)]
    if missing:
        raise TypeError(f"{where} has no {', '.join(missing)}")
    names = family.NAMES
    if not isinstance(names, tuple | list) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"{where}.NAMES must be a tuple of names, got {names!r:.60}")
    if not isinstance(family.PATTERNS, str):
        raise TypeError(f"{where}.PATTERNS must be text, got {family.PATTERNS!r:.60}")
    if not callable(family.find):
        raise TypeError(f"{where}.find must be callable")


def _skip(family: Any, why: str) -> None:
    """Record that a plug-in family failed on a name (it is skipped for that name only, so
    that no request can take its games away from the others)."""
    name = _names.get(id(family), repr(family))
    with _lock:
        _problems[name] = why
    log.warning("game family %r skipped: %s", name, why)
