"""The book of solved positions: proved answers kept on disk and read back, never a guess."""

from __future__ import annotations

import json
import random

import pytest

from gameai.games import get_game
from gameai.games.mnk.search import SearchTimeout
from gameai.trainer.evaluation.book import Book
from gameai.trainer.evaluation.calibrate import SearchPlayer


def test_answers_are_kept_written_and_read_back(tmp_path):
    game = get_game("connect-four")
    path = tmp_path / "book.jsonl"
    book = Book(game, path)
    state = game.parse_moves("44444433333")
    calls = []

    def solve() -> tuple[int, ...]:
        calls.append(1)
        return game.optimal_actions(state)

    first = book.answer("optimal", state, solve)
    assert book.answer("optimal", state, solve) == first and len(calls) == 1
    assert (book.hits, book.misses) == (1, 1)
    again = Book(game, path)
    assert len(again) == 1 and again.answer("optimal", state, solve) == first
    assert len(calls) == 1  # read from the file, not solved again
    line = json.loads(path.read_text())
    assert line == {"game": "connect-four", "key": state.key, "ask": "optimal",
                    "moves": list(first)}


def test_damaged_and_foreign_lines_are_skipped(tmp_path):
    game = get_game("connect-four")
    path = tmp_path / "book.jsonl"
    good = {"game": "connect-four", "key": 5, "ask": "non_losing", "moves": [3]}
    path.write_text("\n".join([
        json.dumps(good),
        json.dumps({**good, "game": "mnk-4x5-4"}),   # another game's
        json.dumps({**good, "moves": [99]}),          # not an action of this game
        json.dumps({**good, "ask": "best"}),          # not a question the book keeps
        '{"game": "connect-four", "key": 6, "ask": "opti',  # cut short by a kill
    ]))
    book = Book(game, path)
    assert len(book) == 1 and book.skipped == 4


def test_an_unproved_answer_is_not_kept(tmp_path):
    game = get_game("connect-four")
    book = Book(game, tmp_path / "book.jsonl")
    state = game.parse_moves("4453")

    def out_of_time() -> tuple[int, ...]:
        return game.optimal_actions(state, time_limit=0.01)

    with pytest.raises(SearchTimeout):
        book.answer("optimal", state, out_of_time)
    assert len(book) == 0 and not (tmp_path / "book.jsonl").exists()
    with pytest.raises(ValueError, match="ask must be one of"):
        book.answer("best", state, out_of_time)


def test_a_perfect_player_with_a_book_asks_the_solver_once_per_position(tmp_path):
    game = get_game("connect-four")
    path = tmp_path / "book.jsonl"
    state = game.parse_moves("4444443333")
    first = SearchPlayer(game, time_limit=30, book=Book(game, path))
    move = first(state, random.Random(0))
    assert move in game.optimal_actions(state) and first.exact_moves == 1
    second = SearchPlayer(game, time_limit=30, book=Book(game, path))
    second(state, random.Random(0))
    assert second.book.hits == 1 and second.book.misses == 0


def test_an_unwritable_book_answers_from_memory(tmp_path):
    game = get_game("connect-four")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    book = Book(game, blocker / "book.jsonl")
    state = game.parse_moves("44444433333")
    moves = book.answer("optimal", state, lambda: game.optimal_actions(state))
    assert moves and book.unwritable is not None and "not-a-folder" in book.unwritable
    assert book.answer("optimal", state, lambda: ()) == moves  # kept in memory
