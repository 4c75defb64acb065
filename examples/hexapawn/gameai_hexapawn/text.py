"""Hexapawn positions from text: the seed's pattern (``to_move`` optional) and move lists.

Every error names what is wrong: a malformed pattern, too many pawns, a side to move that
cannot be (``field`` ``to_move``), a position that no legal game reaches; a move of a list
that the rules forbid, named by its number (``field`` ``moves``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gameai.games.errors import IllegalMove, InvalidBoard
from gameai.games.interface import Game

from gameai_hexapawn.board import BOTTOM, PAWNS, SIZE, TOP, HexapawnBoard, initial

MAX_BOARD_TEXT = 40  # characters; a board is 11
MAX_MOVES_TEXT = 200  # characters; no game is longer than 7 moves


def parse(game: Game, text: object, to_move: object, *,
          reachable: Callable[[int], bool]) -> HexapawnBoard:
    """The position of ``HexapawnGame.parse``, validated exactly: ``reachable(key)`` says
    whether legal play from the start reaches the position with that key.

    Captures break the counts, but no reachable position arises with both sides to move,
    so ``to_move`` may be left out; a given one must be the side the position arises with.
    """
    x, o = _cells(game, text)
    if not x and not o:
        raise InvalidBoard("the board is empty: a game of Hexapawn starts with three pawns "
                           "a side (OOO|---|XXX) and always leaves the winner one")
    for side, pawns in (("X", x), ("O", o)):
        if pawns.bit_count() > PAWNS:
            raise InvalidBoard(f"{side} has {pawns.bit_count()} pawns; each side has three")
    if x & TOP and o & BOTTOM:
        raise InvalidBoard("both X and O have a pawn on the far row; the game ends when the "
                           "first one gets there")
    given = _side(to_move)
    finished = _finished_by(x, o)
    if finished is not None and given == finished:
        why = "reached the far row" if x & TOP or o & BOTTOM else "taken every enemy pawn"
        raise InvalidBoard(f"to_move: {given!r} is impossible: {given} has {why}, so {given} "
                           "moved last", field="to_move")
    sides = [s for s in ("X", "O") if reachable(HexapawnBoard(game, x, o, s == "X").key)]
    if not sides:
        raise InvalidBoard(f"this position cannot arise in {game.name}: no sequence of legal "
                           "moves from the start (OOO|---|XXX) reaches it")
    if given is not None and given not in sides:
        raise InvalidBoard(f"to_move: {given!r} is impossible: this position arises only with "
                           f"{sides[0]} to move", field="to_move")
    # every reachable position arises with one side to move only (the tests check it)
    return HexapawnBoard(game, x, o, sides[0] == "X")


def parse_moves(game: Game, text: object) -> HexapawnBoard:
    """The position after ``text``: moves from the start separated by spaces or commas, each
    a pawn's ``from-to`` with the points numbered 1-9 row by row from the top left (seed
    000's numbering): ``"8-5 3-5 9-5"`` is X up the middle, O taking it, X taking back. The
    empty list is the start.

    Raises:
        InvalidBoard: malformed text (``field`` moves).
        IllegalMove: a move the rules forbid, or one after the game ended; the message
            names the move by its number (``field`` moves).
    """
    if not isinstance(text, str):
        raise InvalidBoard(f"moves: must be text like '8-5 3-5 9-5', got "
                           f"{type(text).__name__}", field="moves")
    if len(text) > MAX_MOVES_TEXT:
        raise InvalidBoard(f"moves: {len(text)} characters long; at most {MAX_MOVES_TEXT} "
                           "are accepted (no game of Hexapawn is longer than 7 moves)",
                           field="moves")
    state = initial(game)
    for number, token in enumerate((t for t in re.split(r"[\s,]+", text.strip()) if t), 1):
        match = re.fullmatch(r"([1-9])-([1-9])", token)
        if match is None:
            hint = (" (Hexapawn has no placements: every move takes a pawn from one point "
                    "to another)" if re.fullmatch(r"[1-9]", token) else "")
            raise InvalidBoard(f"moves: move {number} ({token[:20]!r}) is not a move like "
                               f"'8-5' from one point 1-9 to another{hint}", field="moves")
        if state.is_over():
            raise _illegal(f"moves: move {number} ({token}): the game was already over: "
                           f"{state.winner()} had won")
        frm, to = int(match.group(1)) - 1, int(match.group(2)) - 1
        try:
            state = state.play(game.action_of(to, frm))
        except IllegalMove as e:
            raise _illegal(f"moves: move {number} ({token}): {e}") from None
    return state


def _illegal(message: str) -> IllegalMove:
    error = IllegalMove(message)
    error.field = "moves"
    return error


def _cells(game: Game, text: object) -> tuple[int, int]:
    if not isinstance(text, str):
        raise InvalidBoard(f"board must be text like 'OOO|---|XXX', got {type(text).__name__}")
    if len(text) > MAX_BOARD_TEXT:
        raise InvalidBoard(f"board is {len(text)} characters long; a {game.name} board is 11")
    rows = text.split("|")
    if len(rows) != SIZE:
        raise InvalidBoard(f"expected 3 rows separated by '|', got {len(rows)} (a {game.name} "
                           "row has 3 cells of X, O or -)")
    x = o = 0
    for r, row in enumerate(rows):
        if len(row) != SIZE:
            raise InvalidBoard(f"row {r} has {len(row)} cells, expected 3")
        for c, ch in enumerate(row):
            bit = 1 << (r * SIZE + c)
            if ch == "X":
                x |= bit
            elif ch == "O":
                o |= bit
            elif ch != "-":
                raise InvalidBoard(f"unknown character {ch!r} at row {r}, column {c} (cells "
                                   "are X, O or -)")
    return x, o


def _side(to_move: object) -> str | None:
    if to_move is None or to_move == "":
        return None
    if to_move not in ("X", "O"):
        shown = repr(to_move) if len(repr(to_move)) <= 40 else repr(to_move)[:37] + "..."
        raise InvalidBoard(f"to_move: must be 'X' or 'O', got {shown}", field="to_move")
    return str(to_move)


def _finished_by(x: int, o: int) -> str | None:
    """The side that has won on the board alone (a pawn on the far row, or no enemy pawn
    left): it moved last."""
    if x & TOP or not o:
        return "X"
    if o & BOTTOM or not x:
        return "O"
    return None
