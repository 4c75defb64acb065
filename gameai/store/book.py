"""Book files: a game's proved positions as a file, to carry a table of proved positions
(:class:`gameai.store.ProvedTable`) from one store to another, or ship one with a bundled
model (:mod:`gameai.models.bundled`).

A book file is gzip'd text: a header line ``gameai-book 1 GAME``, then one line a position,
its canonical key and its entry as the table stores it (:func:`gameai.store.proved.encode`),
by key. It is written without a time stamp or a name, so the same entries give the same
bytes. Read back, every line is checked to be a solution of the position its key names
before anything is written (:class:`~gameai.models.CorruptModel` otherwise).
"""

from __future__ import annotations

import gzip
import io

import numpy as np

from gameai.games import get_game
from gameai.games.mnk.board import Board
from gameai.games.mnk.game import as_mnk
from gameai.games.mnk.keys import masks_from_base3
from gameai.models.container import CorruptModel
from gameai.store.proved import decode

BOOK_HEADER = "gameai-book 1"


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
    try:
        lines = gzip.decompress(data).decode().splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise CorruptModel(f"not a gzip'd book: {e}") from e
    if not lines or lines[0] != f"{BOOK_HEADER} {game}":
        raise CorruptModel(f"not a book of {game}: it starts {lines[0][:40] if lines else ''!r}")
    board_game = as_mnk(get_game(game))
    parsed: list[tuple[int, int, str]] = []  # line number, key, entry
    for number, line in enumerate(lines[1:], start=2):
        key_text, _, entry = line.partition(" ")
        if not key_text.isdigit() or int(key_text) >= 1 << 64:
            raise CorruptModel(f"the book's line {number} is not a proved position of "
                               f"{game}: {line[:60]!r}")
        parsed.append((number, int(key_text), entry))
    x_masks, o_masks = masks_from_base3(board_game, np.array([k for _, k, _ in parsed], np.uint64))
    entries = []
    for (number, key, entry), x, o in zip(parsed, x_masks.tolist(), o_masks.tolist(),
                                          strict=True):
        state = Board(board_game, x, o)
        canonical, sym = state.canonical()
        if canonical != key or state.is_over() or decode(state, sym, entry) is None:
            raise CorruptModel(f"the book's line {number} is not a proved position of "
                               f"{game}: {key} {entry[:40]!r}")
        entries.append((key, entry))
    return entries
