"""Column-sequence notation for gravity games: the moves played, one column per move.

Columns count from 1 at the left, as the Connect Four community and its test sets write
games (``"4453"``: X in the centre, O on top of it, X in column 5, O in column 3). Boards
of up to 9 columns take one digit per move; any board may separate the moves by spaces or
commas (``"4 4 5 3"``, needed from 10 columns on). Every error names the move by its
number: a column out of range, a full column, a move after the game ended.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gameai.games.errors import IllegalMove, InvalidBoard
from gameai.games.mnk.board import Board, line_through
from gameai.games.mnk.geometry import Geometry

MAX_MOVES_TEXT = 200  # characters: a 64-cell board's game with separators fits


def parse_moves(game: Geometry, text: object) -> Board:
    """The position after the column sequence ``text`` from the empty board.

    Raises:
        InvalidBoard: not text, or a token that is no column number (``field`` moves).
        IllegalMove: a column out of range or full, or a move after the game ended;
            the message names the move by its number (``field`` moves).
    """
    return play_columns(game, text)[0]


def play_columns(game: Geometry, text: object) -> tuple[Board, list[int]]:
    """:func:`parse_moves`' position and the cell each move filled, in order (raises as
    it does)."""
    if not isinstance(text, str):
        raise _invalid(f"moves: must be text like '4453' (columns from 1), got "
                       f"{type(text).__name__}")
    if len(text) > MAX_MOVES_TEXT:
        raise _invalid(f"moves: {len(text)} characters long; at most {MAX_MOVES_TEXT} are "
                       "accepted")
    # The board is built here from its two masks, not by Board.play (which tests the whole
    # board for lines before every move): only a line through the cell just filled can end
    # the game, so that is all a move tests (tests/games/test_columns.py holds the result
    # to Board.play's, move by move).
    x = o = 0
    ended: str | None = None  # why the game ended, once it has
    cells: list[int] = []
    for number, token in enumerate(_tokens(game, text), 1):
        if not token.isdecimal() or len(token) > 3:
            raise _invalid(f"moves: move {number} ({token[:20]!r}) is not a column number "
                           f"1-{game.cols}")
        column = int(token)
        if not 1 <= column <= game.cols:
            raise _illegal(f"moves: move {number} ({token}): column {column} is out of range "
                           f"(columns are 1-{game.cols})")
        if ended is not None:
            raise _illegal(f"moves: move {number} ({token}): the game was already over: "
                           f"{ended} at move {number - 1}")
        cell = _lowest_empty(game, x | o, column - 1)
        if cell is None:
            raise _illegal(f"moves: move {number} ({token}): column {column} is full")
        if number % 2:  # X moves first
            x |= 1 << cell
            mine, player = x, "X"
        else:
            o |= 1 << cell
            mine, player = o, "O"
        cells.append(cell)
        if line_through(game, mine, cell):
            ended = f"{player} won"
        elif x | o == game.full_mask:
            ended = "the board was full (a draw)"
    return Board(game, x, o), cells


def _lowest_empty(game: Geometry, occupied: int, col: int) -> int | None:
    for row in range(game.rows - 1, -1, -1):
        cell = row * game.cols + col
        if not occupied >> cell & 1:
            return cell
    return None


def drop_cell(board: Board, col: int) -> int | None:
    """The cell a piece dropped in column ``col`` (from 0) lands on; None if it is full."""
    return _lowest_empty(board.game, board.occupied, col)


def to_moves(game: Geometry, columns: list[int]) -> str:
    """The notation of a game given as columns from 0 (digits, or spaced past 9 columns)."""
    return ("" if game.cols <= 9 else " ").join(str(c + 1) for c in columns)


def _tokens(game: Geometry, text: str) -> list[str]:
    stripped = text.strip()
    if re.search(r"[\s,]", stripped):
        return [t for t in re.split(r"[\s,]+", stripped) if t]
    if game.cols > 9 and stripped:
        return [stripped]  # one move, or digits run together: the token check says which
    return list(stripped)


def _invalid(message: str) -> InvalidBoard:
    return InvalidBoard(message, field="moves")


def _illegal(message: str) -> IllegalMove:
    error = IllegalMove(message)
    error.field = "moves"
    return error



# -- test-set lines ----------------------------------------------------------------------

@dataclass(frozen=True)
class TestLine:
    """One line of a test set: ``MOVES [SCORE]`` (Pascal Pons's Connect Four test sets)."""

    number: int  # the line's number in its file, from 1
    moves: str
    columns: tuple[int, ...] | None  # from 0; None when the moves need parse_moves's check
    given: int | None  # the score the line gives, in Pons's convention


def read_test_lines(game: Geometry, lines: Iterable[str]) -> Iterator[TestLine]:
    """The positions of a test set, one a line: the moves (columns from 1; comma-separated
    past 9 columns) and optionally the score of the side to move in Pons's convention
    (:func:`pons_score`). Blank lines and lines from ``#`` are skipped.

    Raises:
        InvalidBoard: a line that is neither ``MOVES`` nor ``MOVES SCORE`` (names the line).
    """
    for number, raw in enumerate(lines, 1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        parts = text.split()
        if len(parts) > 2 or (len(parts) == 2 and not re.fullmatch(r"[+-]?\d{1,3}", parts[1])):
            raise _invalid(f"line {number}: expected 'MOVES' or 'MOVES SCORE' (columns from "
                           f"1, then an integer score), got {text[:60]!r}")
        moves = parts[0]
        given = int(parts[1]) if len(parts) == 2 else None
        tokens = moves.split(",") if "," in moves or game.cols > 9 else list(moves)
        columns = None
        if all(t.isdecimal() and len(t) <= 3 for t in tokens) and len(moves) <= MAX_MOVES_TEXT:
            columns = tuple(int(t) - 1 for t in tokens)
        yield TestLine(number, moves, columns, given)


def pons_score(game: Geometry, score: int, ply: int) -> int:
    """Our score (``big - t`` for a win in ``t`` plies, from the side to move at ``ply``)
    in Pascal Pons's convention: a win whose last stone is the ``e``-th of the game (from
    1) scores ``(cells + 2 - e) // 2``, which on 6x7 is 22 minus the winner's stones (1 for
    a win with the winner's last stone, 18 for "4455"'s win with X's fourth); a loss the
    negative of the winner's; a draw 0."""
    if score == 0:
        return 0
    e = ply + game.big - abs(score)
    return (game.cells + 2 - e) // 2 * (1 if score > 0 else -1)
