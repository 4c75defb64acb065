"""Every Redis key the store uses, under one prefix, in one place.

Several deployments can share one Redis by choosing different prefixes (the
``GAMEAI_STORE_PREFIX`` setting). Layout, for prefix ``p`` and game ``g``:

    p:counter                 int     grows with every change of any game (poll fallback)
    p:events                  channel pub/sub change events (JSON)
    p:games                   set     games with at least one version ever published
    p:g:{g}:next              int     last version number handed out (INCR; never lowered)
    p:g:{g}:index             hash    version -> JSON index record (no payload)
    p:g:{g}:payload:{v}       string  the exact payload bytes of version v
    p:g:{g}:aliases           hash    alias -> version
    p:g:{g}:weight            int     canary weight 0-100 (absent = 0)
    p:g:{g}:shadow            int     shadow share 0-100: percent of production's best-move
                                      queries mirrored to the ``shadow`` alias (absent = 0)
    p:g:{g}:shadow-tally:{v}  hash    what shadowing version v found, by production version:
                                      ``{production}:{tally}`` -> count (tallies: compared,
                                      agreed, proved, production_optimal, shadow_optimal,
                                      dropped), ``updated_at``
    p:g:{g}:history           list    JSON alias changes, oldest first (RPUSH)
    p:g:{g}:deleted           hash    version -> JSON tombstone {at, by} written by gc
    p:g:{g}:pin               string  JSON {version, at, by, action} while an operator has
                                      pinned production (auto-promotion holds off)
    p:g:{g}:token:{t}         int     version of a finished publish, so a retried publish
                                      does not create a second version (expires after 1 day)
    p:g:{g}:proved            hash    canonical position key -> every move's exact score,
                                      as the solver proved it (:mod:`gameai.store.proved`):
                                      the table every server and the book builder share
    p:g:{g}:proved-keys       list    the proved table's fields in the order written (RPUSH,
                                      in the same script): what each server's index of the
                                      table reads, so a miss costs no round trip
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gameai.store.errors import StoreError

_PREFIX = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$")


@dataclass(frozen=True)
class Keys:
    """Key names for one prefix. ``Keys("gameai").index("tictactoe")``."""

    prefix: str = "gameai"

    def __post_init__(self) -> None:
        if not _PREFIX.match(self.prefix):
            raise StoreError(f"invalid store prefix {self.prefix!r}: use 1-64 letters, digits "
                             "or . _ : / -, starting with a letter or digit")

    @property
    def counter(self) -> str:
        return f"{self.prefix}:counter"

    @property
    def events(self) -> str:
        return f"{self.prefix}:events"

    @property
    def games(self) -> str:
        return f"{self.prefix}:games"

    def _game(self, game: str) -> str:
        return f"{self.prefix}:g:{game}"

    def next(self, game: str) -> str:
        return f"{self._game(game)}:next"

    def index(self, game: str) -> str:
        return f"{self._game(game)}:index"

    def payload_prefix(self, game: str) -> str:
        """``payload(game, v) == payload_prefix(game) + str(v)``; the publish script needs
        the prefix because it learns the number only when it runs."""
        return f"{self._game(game)}:payload:"

    def payload(self, game: str, version: int) -> str:
        return f"{self.payload_prefix(game)}{version}"

    def aliases(self, game: str) -> str:
        return f"{self._game(game)}:aliases"

    def weight(self, game: str) -> str:
        return f"{self._game(game)}:weight"

    def shadow(self, game: str) -> str:
        return f"{self._game(game)}:shadow"

    def shadow_tally(self, game: str, version: int) -> str:
        return f"{self._game(game)}:shadow-tally:{version}"

    def history(self, game: str) -> str:
        return f"{self._game(game)}:history"

    def deleted(self, game: str) -> str:
        return f"{self._game(game)}:deleted"

    def pin(self, game: str) -> str:
        return f"{self._game(game)}:pin"

    def proved(self, game: str) -> str:
        return f"{self._game(game)}:proved"

    def proved_keys(self, game: str) -> str:
        return f"{self._game(game)}:proved-keys"

    def token(self, game: str, token: str) -> str:
        return f"{self._game(game)}:token:{token}"
