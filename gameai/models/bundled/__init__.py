"""Bundled starting models: a game's model shipped inside the package, imported as version
1 when the store has none, so a newcomer's first minute is served by a strong model.

Each is listed in ``bundled.json`` beside this module: its file, its sha256, the one
command that reproduces it byte for byte, and its judged figures (docs/ntuple.md). A file
whose sha256 differs from the manifest's is refused (:class:`CorruptModel`), never served.

A bundled model may come with an **opening book** (``book`` in its entry): proved positions
for the store's shared table (:class:`gameai.store.ProvedTable`), written there with the
model, so level best plays them exactly from the first game (docs/levels.md); the file's
format is :mod:`gameai.store.book`'s, and every entry is checked to be a solution of its
position before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gameai.models.container import CorruptModel

DIRECTORY = Path(__file__).resolve().parent
MAX_BYTES = 10 * 1024 * 1024  # a bundled model is at most 10 MB, and so is a book
log = logging.getLogger("gameai.models")


@dataclass(frozen=True)
class BundledBook:
    """A bundled model's opening book as its manifest describes it."""

    file: str
    sha256: str
    positions: int
    command: str  # reproduces the file byte for byte
    judged: str  # what it changes, in words, with the command that measured it

    def read(self, game: str, directory: Path = DIRECTORY) -> bytes:
        """The book file's bytes, checked against the manifest (its entries are checked
        against their positions as they are written: :func:`import_book`).

        Raises:
            CorruptModel: the file is missing, too large, or not the manifest's.
        """
        return _checked(directory / self.file, self.sha256, f"the bundled book of {game}")


@dataclass(frozen=True)
class Bundled:
    """One bundled model as its manifest describes it."""

    game: str
    file: str
    sha256: str
    command: str  # reproduces the file byte for byte
    judged: str  # its strength, in words, with the command that measured it
    # the gates' judged measures of the file (`gameai evaluate FILE --judge-games N --json`'s
    # "judged", with the command in "command"): its version's own figures once published
    measures: dict[str, Any] | None = None
    book: BundledBook | None = None  # proved positions for the shared table, if any

    def read(self, directory: Path = DIRECTORY) -> bytes:
        """The model's bytes, checked against the manifest.

        Raises:
            CorruptModel: the file is missing, too large, or not the one the manifest names.
        """
        return _checked(directory / self.file, self.sha256, f"the bundled model of {self.game}")


def _checked(path: Path, sha256: str, what: str) -> bytes:
    """The bytes of a bundled file, at most :data:`MAX_BYTES` and of the manifest's sha256.

    Raises:
        CorruptModel: naming ``what``: the file is missing, too large, or not the one the
            manifest names.
    """
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CorruptModel(f"{what} cannot be read: {e.strerror}") from e
    if len(data) > MAX_BYTES:
        raise CorruptModel(f"{what} is {len(data):,} bytes; at most {MAX_BYTES:,} are bundled")
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise CorruptModel(f"{what} has sha256 {digest[:12]}, not the manifest's {sha256[:12]}")
    return data


def manifest(directory: Path = DIRECTORY) -> dict[str, Bundled]:
    """The bundled models by game (empty when there is no manifest)."""
    try:
        entries: dict[str, Any] = json.loads((directory / "bundled.json").read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise CorruptModel(f"the bundled models' manifest cannot be read: {e}") from e
    return {game: Bundled(game, e["file"], e["sha256"], e["command"], e.get("judged", ""),
                          e.get("measures"), BundledBook(**e["book"]) if "book" in e else None)
            for game, e in entries.items()}


def bundled(game: str, directory: Path = DIRECTORY) -> Bundled | None:
    """The bundled model of ``game``, or None."""
    return manifest(directory).get(game)


def publish_bundled(store: Any, game: str, *, algorithm: str | None = None, by: str,
                    directory: Path = DIRECTORY, book: bool = True
                    ) -> tuple[int, Bundled] | None:
    """Publish ``game``'s bundled model to ``store`` (a :class:`gameai.store.ModelStore`),
    its manifest's judged measures as the version's own, and make it production (unpinned,
    so its trainer's better candidates replace it); with ``book``, its bundled opening
    book to the store's table of proved positions too (:func:`import_book`).
    Returns its version and manifest entry, or None when the game bundles none, or none
    of ``algorithm`` (a trainer of another algorithm could not go on from it).

    Raises:
        CorruptModel: the bundled file is not the manifest's; nothing is published.
    """
    from gameai.models.load import load_model

    entry = bundled(game, directory)
    if entry is None:
        return None
    data = entry.read(directory)
    if algorithm is not None and load_model(data).info.algorithm != algorithm:
        return None
    record = store.publish(data, by=by, judged=entry.measures)
    store.set_alias(game=game, alias="production", version=record.version, by=by)
    if book:
        import_book(store, entry, directory)
    return record.version, entry


def import_book(store: Any, entry: Bundled, directory: Path = DIRECTORY
                ) -> dict[str, int] | None:
    """Write ``entry``'s bundled book, if it has one, to ``store``'s table of proved
    positions (positions held keep their entries; none past the table's bound): the
    counts, or None. A damaged book is logged and written nowhere (the model is still
    served)."""
    if entry.book is None:
        return None
    game = entry.game
    try:
        counts = store.proved().put_book(game, entry.book.read(game, directory))
    except CorruptModel as e:  # checked whole before anything is written
        log.warning("the bundled book of %s is not used: %s", game, e)
        return None
    log.info("the bundled book of %s: %d positions written to the proved table, %d held "
             "already, %d refused (the table is full)", game, counts["written"],
             counts["held"], counts["full"])
    return dict(counts)
