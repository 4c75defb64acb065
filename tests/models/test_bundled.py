"""Bundled starting models: read only as the manifest names them (size and sha256)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from gameai.games import get_game
from gameai.models import CorruptModel, load_model
from gameai.models.bundled import MAX_BYTES, bundled, manifest, publish_bundled
from gameai.models.oracle import solver_model
from gameai.store.book import read_book, write_book


def shelf(tmp_path: Path, data: bytes, sha256: str | None = None,
          measures: dict[str, Any] | None = None, book: bytes | None = None) -> Path:
    (tmp_path / "tictactoe.gmodel").write_bytes(data)
    extra: dict[str, Any] = {"measures": measures} if measures else {}
    if book is not None:
        (tmp_path / "tictactoe.book.gz").write_bytes(book)
        extra["book"] = {"file": "tictactoe.book.gz", "sha256": hashlib.sha256(book).hexdigest(),
                         "positions": len(read_book(book, "tictactoe")),
                         "command": "scripts/...", "judged": "tests"}
    (tmp_path / "bundled.json").write_text(json.dumps({"tictactoe": {
        "file": "tictactoe.gmodel", "sha256": sha256 or hashlib.sha256(data).hexdigest(),
        "command": "gameai models export ...", "judged": "perfect", **extra}}))
    return tmp_path


def book_rows(*patterns: str) -> list[tuple[int, str]]:
    """Tic-tac-toe positions as a book holds them: canonical key, the solver's entry."""
    from gameai.store.proved import encode

    game = get_game("tictactoe")
    rows = []
    for pattern in patterns:
        state = game.parse(pattern)
        key, sym = state.canonical()
        rows.append((key, encode(state, sym, game.solve(state))))
    return rows


BOOK = ("X--|---|---", "X--|-O-|---", "O--|---|-X-", "XO-|-X-|---")


def test_a_book_file_is_the_same_bytes_for_the_same_entries() -> None:
    rows = book_rows(*BOOK)
    data = write_book("tictactoe", rows)
    assert write_book("tictactoe", list(reversed(rows))) == data  # sorted, no time stamp
    assert read_book(data, "tictactoe") == sorted(rows)


@pytest.mark.parametrize(("damage", "says"), [
    (lambda rows: [(rows[0][0], rows[0][1].rsplit(",", 1)[0]), *rows[1:]],
     "line 2 is not a proved position"),  # a move left out
    (lambda rows: [(rows[0][0], rows[-1][1]), *rows[1:]], "line 2 is not a proved"),
])  # (another position's entry: the first by key has 8 moves, the last 7)
def test_a_book_line_that_is_not_a_proved_position_is_refused(damage: Any, says: str) -> None:
    rows = sorted(book_rows(*BOOK))
    with pytest.raises(CorruptModel, match=says):
        read_book(write_book("tictactoe", damage(rows)), "tictactoe")


def test_a_book_of_another_game_or_not_a_book_is_refused() -> None:
    with pytest.raises(CorruptModel, match="not a book of connect-four"):
        read_book(write_book("tictactoe", book_rows(*BOOK)), "connect-four")
    with pytest.raises(CorruptModel, match="not a gzip'd book"):
        read_book(b"tictactoe", "tictactoe")


def test_a_bundled_book_goes_to_the_proved_table_with_its_model(tmp_path: Path,
                                                                redis_url: str) -> None:
    """Written where the table lacks the position, kept where it holds it; a book that is
    not the manifest's is written nowhere, and the model is served all the same."""
    from gameai.store import ModelStore

    rows = book_rows(*BOOK)
    data = solver_model(get_game("tictactoe")).to_bytes()
    directory = shelf(tmp_path, data, book=write_book("tictactoe", rows))
    game = get_game("tictactoe")
    with ModelStore.from_url(redis_url, prefix="bundled-book") as store:
        table = store.proved()
        held = game.parse(BOOK[0])
        table.put(held, game.solve(held))
        assert publish_bundled(store, "tictactoe", by="tests", directory=directory)
        assert table.entries(game="tictactoe") == sorted(rows)
        for pattern in BOOK:
            state = game.parse(pattern)
            assert table.get(state).optimal_moves == game.solve(state).optimal_moves
    (directory / "tictactoe.book.gz").write_bytes(write_book("tictactoe", rows[:2]))
    with ModelStore.from_url(redis_url, prefix="damaged-book") as store:
        assert publish_bundled(store, "tictactoe", by="tests", directory=directory)
        assert store.proved().size(game="tictactoe") == 0
        assert store.resolve(game="tictactoe", ref="production") is not None


def test_a_bundled_model_is_read_as_its_manifest_names_it(tmp_path: Path) -> None:
    data = solver_model(get_game("tictactoe")).to_bytes()
    entry = bundled("tictactoe", shelf(tmp_path, data))
    assert entry is not None and entry.judged == "perfect"
    assert load_model(entry.read(tmp_path)).game.name == "tictactoe"
    assert bundled("connect-four", tmp_path) is None


def test_a_file_that_is_not_the_manifests_is_refused(tmp_path: Path) -> None:
    data = solver_model(get_game("tictactoe")).to_bytes()
    entry = bundled("tictactoe", shelf(tmp_path, data, sha256="0" * 64))
    assert entry is not None
    with pytest.raises(CorruptModel, match="not the manifest's 000000000000"):
        entry.read(tmp_path)
    (tmp_path / "tictactoe.gmodel").unlink()
    with pytest.raises(CorruptModel, match="cannot be read"):
        entry.read(tmp_path)


def test_a_bundled_model_is_at_most_ten_megabytes(tmp_path: Path) -> None:
    big = b"x" * (MAX_BYTES + 1)
    entry = bundled("tictactoe", shelf(tmp_path, big))
    assert entry is not None
    with pytest.raises(CorruptModel, match="at most 10,485,760 are bundled"):
        entry.read(tmp_path)


def test_the_shipped_manifest_names_files_that_match() -> None:
    """Every model and book the package ships is within the size limit and is the
    manifest's."""
    for entry in manifest().values():
        assert load_model(entry.read()).game.name == entry.game
        assert entry.command.startswith("SOURCE_DATE_EPOCH=")
        if entry.book is not None:
            assert len(read_book(entry.book.read(entry.game), entry.game)) == \
                entry.book.positions > 0


def test_a_published_bundled_model_shows_its_manifests_judged_figures(tmp_path: Path,
                                                                      redis_url: str) -> None:
    """Version 1 of a newcomer's store is the bundled model: its record carries the
    manifest's judged measures, so ``models show``, ``models list`` and the level picker
    show the served version's own figures, not nothing."""
    from gameai.cli.models import _figures
    from gameai.store import ModelStore

    measures = {"policy": "the exact solver's tables", "seconds": 1.5,
                "command": "gameai evaluate tictactoe.gmodel --judge-games 2 --json",
                "measures": [{"name": "lines_lost", "kind": "lines", "value": 0,
                              "as_x": 0, "as_o": 0}]}
    data = solver_model(get_game("tictactoe")).to_bytes()
    with ModelStore.from_url(redis_url, prefix="bundled-test") as store:
        done = publish_bundled(store, "tictactoe", by="tests",
                               directory=shelf(tmp_path, data, measures=measures))
        assert done is not None
        record = store.version(game="tictactoe", version=done[0])
        assert record is not None and record.evaluation["judged"] == measures
        assert store.payload(game="tictactoe", version=done[0]) == data  # the file's bytes
        assert store.resolve(game="tictactoe", ref="production") == done[0]
        assert "judged at the exact solver's tables: lines_lost 0 (1.5 s)" in \
            _figures(record.evaluation)


def test_the_shipped_manifest_carries_each_models_judged_measures() -> None:
    """Each shipped model's judged measures are the gates' kind (the judge's own match
    names, checked as the store checks them) and agree with the text beside them."""
    from gameai.store.policy import check_judged

    for entry in manifest().values():
        assert entry.measures is not None, entry.game
        check_judged(entry.measures, {})
        named = {m["name"]: m for m in entry.measures["measures"]}
        x = named["vs_perfect_as_x"]
        assert x["wins"] + x["draws"] + x["losses"] == x["games"]
        assert entry.measures["command"].startswith(f"gameai evaluate {entry.file} ")


def test_a_match_of_one_result_shows_the_interval_its_rate_allows() -> None:
    """200 wins of 200 have a score variance of 0; shown as the point [1.000, 1.000] it
    would claim certainty. The line shows the Wilson interval of the one result instead,
    and keeps the score's own interval where the results differ."""
    from gameai.models.info import describe_judged
    from gameai.trainer.evaluation.calibrate import Tally

    def match(name: str, wins: int, draws: int, losses: int, low: float, high: float
              ) -> dict[str, Any]:
        tally = Tally(wins=wins, draws=draws, losses=losses)
        return {"name": name, "kind": "score", **tally.to_json(),
                "score": {"value": tally.score, "low": low, "high": high}}

    judged = {"policy": "depth 3", "seconds": 2.0, "measures": [
        match("vs_perfect_as_x", 200, 0, 0, 1.0, 1.0),
        match("vs_noisy_0.1_as_o", 0, 200, 0, 0.5, 0.5),
        match("vs_perfect_as_o", 0, 0, 200, 0.0, 0.0),
        match("vs_noisy_0.2_as_o", 0, 170, 30, 0.399, 0.451)]}
    assert describe_judged(judged) == (
        "vs_perfect_as_x 200/0/0 (score 1.000 in [0.981, 1.000]); "
        "vs_noisy_0.1_as_o 0/200/0 (score 0.500 in [0.491, 0.509]); "
        "vs_perfect_as_o 0/0/200 (score 0.000 in [0.000, 0.019]); "
        "vs_noisy_0.2_as_o 0/170/30 (score 0.425 in [0.399, 0.451]) (2.0 s)")
