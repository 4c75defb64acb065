"""Morris positions from text: the seed's pattern with ``to_move``, and move lists.

Every error names what is wrong (:mod:`gameai.games.morris.game` has the rules): a malformed
pattern, counts no game reaches, a missing or impossible side to move (``field``
``to_move``), a position no legal sequence reaches; a move of a list that the rules forbid,
named by its number (``field`` ``moves``).
"""

from __future__ import annotations

import re

from gameai.games.errors import GameOver, IllegalMove, InvalidBoard
from gameai.games.morris.board import MorrisBoard, initial
from gameai.games.morris.geometry import CENTRE, PIECES, SIZE, Geometry

MAX_MOVES_TEXT = 2000  # characters of a move list


def parse(game: Geometry, text: object, to_move: object, *, reachable: frozenset[int]
          ) -> MorrisBoard:
    """The position of ``MorrisGame.parse``, validated exactly: ``reachable`` holds the key
    of every position that legal play reaches."""
    x, o = _parse_cells(game, text)
    board = MorrisBoard(game, x, o, _side(game, x, o, to_move))
    _check_lines(game, board)
    if not game.centre_opening and x == 1 << CENTRE and o.bit_count() <= 1:
        raise InvalidBoard("X's only piece is on the centre, but in this game X's first "
                           "placement may not be the centre")
    if board.key not in reachable:
        raise InvalidBoard(
            f"this position cannot arise in {game.name}: no sequence of legal moves "
            f"from the empty board reaches it with {board.to_move} to move")
    return board


def parse_moves(game: Geometry, text: object) -> MorrisBoard:
    """The position after ``text``: moves from the empty board separated by spaces or
    commas, a placement as its point numbered 1-9 row by row (seed 000's numbering), a
    movement as ``from-to`` (``"5 1 9 3 7 2 9-6"``). The draw rule applies: a move that
    brings a position round for the third time ends the game in a draw.

    Raises:
        InvalidBoard: malformed text (``field`` moves).
        IllegalMove: a move the rules forbid, or one after the game ended; the message
            names the move by its number (``field`` moves).
        GameOver: the last move drew the game by repetition.
    """
    state, _actions, drawn = play_moves(game, text)
    if drawn:
        error = GameOver(None, why=drawn)
        error.field = "moves"
        raise error
    return state


def play_moves(game: Geometry, text: object) -> tuple[MorrisBoard, list[int], str]:
    """:func:`parse_moves`' position, the action of each move in order, and, when the last
    move drew the game by repetition, how (else ""); raises as it does, but for that draw."""
    if not isinstance(text, str):
        raise InvalidBoard(f"moves: must be text like '5 1 9 3 7 2 9-6', got "
                           f"{type(text).__name__}", field="moves")
    if len(text) > MAX_MOVES_TEXT:
        raise InvalidBoard(f"moves: {len(text)} characters long; at most "
                           f"{MAX_MOVES_TEXT} are accepted", field="moves")
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    state = initial(game)
    seen = {state.key: 1}
    actions: list[int] = []
    for number, token in enumerate(tokens, 1):
        action = _action_of_token(game, token, number)
        if state.is_over():
            raise _illegal(f"moves: move {number} ({token}): the game was already over: "
                           f"{state.winner()} had won")
        try:
            state = state.play(action)
        except IllegalMove as e:
            raise _illegal(f"moves: move {number} ({token}): {e}") from None
        actions.append(action)
        seen[state.key] = seen.get(state.key, 0) + 1
        if seen[state.key] >= 3:
            if number < len(tokens):
                raise _illegal(f"moves: move {number + 1} ({tokens[number]}): the game was "
                               f"already over: drawn at move {number}, when the position "
                               "came round for the third time")
            return state, actions, (f"a draw: move {number} ({token}) brought the position "
                                    "round for the third time")
    return state, actions, ""

def _action_of_token(game: Geometry, token: str, number: int) -> int:
    match = re.fullmatch(r"([1-9])(?:-([1-9]))?", token)
    if match is None:
        raise InvalidBoard(f"moves: move {number} ({token[:20]!r}) is not a point 1-9 or a "
                           "movement like '9-6'", field="moves")
    first, second = match.groups()
    if second is None:
        return int(first) - 1
    return game.action_of(int(second) - 1, int(first) - 1)


def _illegal(message: str) -> IllegalMove:
    error = IllegalMove(message)
    error.field = "moves"
    return error


def _parse_cells(game: Geometry, text: object) -> tuple[int, int]:
    if not isinstance(text, str):
        raise InvalidBoard(f"board must be text like 'X--|-O-|---', got {type(text).__name__}")
    if len(text) > 40:
        raise InvalidBoard(f"board is {len(text)} characters long; a {game.name} board is 11")
    rows = text.split("|")
    if len(rows) != SIZE:
        raise InvalidBoard(f"expected 3 rows separated by '|', got {len(rows)} (for "
                           f"{game.name}, a row has 3 points of X, O or -)")
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


def _side(game: Geometry, x: int, o: int, to_move: object) -> bool:
    """Whether X is to move, from the counts or ``to_move``, checked against each other."""
    nx, no = x.bit_count(), o.bit_count()
    for side, n in (("X", nx), ("O", no)):
        if n > PIECES:
            raise InvalidBoard(f"{side} has {n} pieces; each side has three")
    if nx not in (no, no + 1):
        raise InvalidBoard(f"impossible piece counts: {nx} X and {no} O (X places first, so "
                           "X has as many pieces as O or one more)")
    given = None if to_move is None or to_move == "" else to_move
    if given is not None and given not in ("X", "O"):
        shown = repr(given) if len(repr(given)) <= 40 else repr(given)[:37] + "..."
        raise InvalidBoard(f"to_move: must be 'X' or 'O', got {shown}", field="to_move")
    if nx + no < 2 * PIECES:
        implied = "X" if nx == no else "O"
        if given is not None and given != implied:
            raise InvalidBoard(
                f"to_move: {given!r} is impossible: pieces are still being placed (X has {nx}, "
                f"O has {no}), so {implied} is to move", field="to_move")
        return implied == "X"
    if given is None:
        raise InvalidBoard("to_move: required once all six pieces are down: the counts no "
                           "longer tell whose turn it is (give 'X' or 'O')", field="to_move")
    return given == "X"


def _check_lines(game: Geometry, board: MorrisBoard) -> None:
    """At most one side has a line, and it moved last. (A line takes three pieces, so the
    side to move is given here, not implied by the counts.)"""
    x_line = any(board.x & line == line for line in game.lines)
    o_line = any(board.o & line == line for line in game.lines)
    if x_line and o_line:
        raise InvalidBoard("both sides have three in a row; the game ends at the first line")
    for side, has in (("X", x_line), ("O", o_line)):
        if has and board.to_move == side:
            raise InvalidBoard(f"to_move: {side!r} is impossible: {side} has three in a "
                               f"row, so {side} moved last", field="to_move")
