"""Bundled starting models: a game's model shipped inside the package, imported as version
1 when the store has none, so a newcomer's first minute is served by a strong model.

Each is listed in ``bundled.json`` beside this module: its file, its sha256, the one
command that reproduces it byte for byte, and its judged figures (docs/ntuple.md). A file
whose sha256 differs from the manifest's is refused (:class:`CorruptModel`), never served.

A bundled model may come with an **opening book** (``book`` in its entry): proved positions
for the store's shared table (:class:`gameai.store.ProvedTable`), written there with the
model, so level best plays them exactly from the first game (docs/levels.md). A book file is
gzip'd text: a header line ``gameai-book 1 GAME``, then one line a position, its canonical
key and its entry as the table stores it, by key; every entry is checked to be a solution of
its position before anything is written.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gameai.models.container import CorruptModel

DIRECTORY = Path(__file__).resolve().parent
MAX_BYTES = 10 * 1024 * 1024  # a bundled model is at most 10 MB, and so is a book
BOOK_HEADER = "gameai-book 1"
log = logging.getLogger("gameai.models")


@dataclass(frozen=True)
class BundledBook:
    """A bundled model's opening book as its manifest describes it."""

    file: str
    sha256: str
    positions: int
    command: str  # reproduces the file byte for byte
    judged: str  # what it changes, in words, with the command that measured it

    def read(self, game: str, directory: Path = DIRECTORY) -> list[tuple[int, str]]:
        """The book's entries (canonical key, entry text), checked against the manifest
        and each against its position.

        Raises:
            CorruptModel: the file is missing, too large, not the manifest's, or holds an
                entry that is not a solution of its position.
        """
        path = directory / self.file
        try:
            data = path.read_bytes()
        except OSError as e:
            raise CorruptModel(f"the bundled book of {game} cannot be read: {e.strerror}"
                               ) from e
        digest = hashlib.sha256(data).hexdigest()
        if len(data) > MAX_BYTES or digest != self.sha256:
            raise CorruptModel(f"the bundled book of {game} has sha256 {digest[:12]} "
                               f"({len(data):,} bytes), not the manifest's {self.sha256[:12]}")
        entries = read_book(data, game)
        if len(entries) != self.positions:
            raise CorruptModel(f"the bundled book of {game} holds {len(entries):,} positions, "
                               f"not the manifest's {self.positions:,}")
        return entries


def write_book(game: str, entries: list[tuple[int, str]]) -> bytes:
    """A book file's bytes: the same for the same entries (sorted here; gzip without a
    time or a name)."""
    text = "".join([f"{BOOK_HEADER} {game}\n",
                    *(f"{key} {entry}\n" for key, entry in sorted(entries))])
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as z:
        z.write(text.encode())
    return out.getvalue()


def read_book(data: bytes, game: str) -> list[tuple[int, str]]:
    """The entries of a book file of ``game``, each checked to be the solution of the
    position its key names (decoded as the table would read it).

    Raises:
        CorruptModel: not a book of ``game``, or a line that is not a proved position.
    """
    from gameai.games import get_game
    from gameai.games.mnk.board import Board
    from gameai.games.mnk.game import as_mnk
    from gameai.store.proved import decode

    try:
        lines = gzip.decompress(data).decode().splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise CorruptModel(f"not a gzip'd book: {e}") from e
    if not lines or lines[0] != f"{BOOK_HEADER} {game}":
        raise CorruptModel(f"not a book of {game}: it starts {lines[0][:40] if lines else ''!r}")
    board_game = as_mnk(get_game(game))
    entries = []
    for number, line in enumerate(lines[1:], start=2):
        key_text, _, entry = line.partition(" ")
        try:
            key = int(key_text)
            state = Board.from_key(board_game, key)
            canonical, sym = state.canonical()
            ok = canonical == key and not state.is_over() and \
                decode(state, sym, entry) is not None
        except (ValueError, IndexError, OverflowError):
            ok = False
        if not ok:
            raise CorruptModel(f"the book's line {number} is not a proved position of "
                               f"{game}: {line[:60]!r}")
        entries.append((key, entry))
    return entries


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
        path = directory / self.file
        try:
            data = path.read_bytes()
        except OSError as e:
            raise CorruptModel(f"the bundled model of {self.game} cannot be read: "
                               f"{e.strerror}") from e
        if len(data) > MAX_BYTES:
            raise CorruptModel(f"the bundled model of {self.game} is {len(data):,} bytes; "
                               f"at most {MAX_BYTES:,} are bundled")
        digest = hashlib.sha256(data).hexdigest()
        if digest != self.sha256:
            raise CorruptModel(f"the bundled model of {self.game} has sha256 {digest[:12]}, "
                               f"not the manifest's {self.sha256[:12]}")
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
        import_book(store, game, directory)
    return record.version, entry


def import_book(store: Any, game: str, directory: Path = DIRECTORY) -> dict[str, int] | None:
    """Write ``game``'s bundled book, if it has one, to ``store``'s table of proved
    positions (positions held keep their entries; none past the table's bound): the
    counts, or None. A damaged book is logged and written nowhere (the model is still
    served)."""
    entry = bundled(game, directory)
    if entry is None or entry.book is None:
        return None
    try:
        entries = entry.book.read(game, directory)
    except CorruptModel as e:
        log.warning("the bundled book of %s is not used: %s", game, e)
        return None
    counts = store.proved().put_entries(game, entries)
    log.info("the bundled book of %s: %d positions written to the proved table, %d held "
             "already, %d refused (the table is full)", game, counts["written"],
             counts["held"], counts["full"])
    return dict(counts)
