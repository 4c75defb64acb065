"""The game interface every family implements: a :class:`Game` and its :class:`State`\\ s.

After OpenSpiel's split: a game is an immutable description (its board, its actions, its
symmetries, how to read and print a position); a state is one immutable position of it.
Rules, solvers, models, learners and the server ask these methods and never which family
a game belongs to. Two families implement it here: m,n,k games (:mod:`gameai.games.mnk.game`,
:mod:`gameai.games.mnk.board`, with gravity for Connect Four) and morris games, whose pieces
move once placed (:mod:`gameai.games.morris.game`); other distributions add families through
the ``gameai.games`` entry point (:mod:`gameai.games.registry`; docs/games.md says how).

**Actions.** A move is an integer action id in ``range(game.num_actions)``, so a model
stores one value per action and a kernel indexes arrays by it:

* a placement on cell ``to`` is action ``to`` (for m,n,k games every action is one: the
  action is the cell index, exactly as before the interface existed);
* a movement ``from -> to`` is action ``cells + from * cells + to`` (morris).

:class:`Move` is the view the APIs show: the destination's ``row``, ``col`` and ``index``
and, for a movement, its origin (``from_index``, ``from_row``, ``from_col``).

**Symmetries.** ``game.symmetries[s]`` permutes cells (``perm[i]`` is where cell ``i``
goes); ``game.action_symmetries[s]`` permutes actions the same way, so a move ``a`` on a
board is move ``action_symmetries[s][a]`` on its image under ``s``.

**Keys.** ``state.key`` is a compact integer that identifies a position (board and side to
move); ``state.canonical()`` is ``(key, sym)``: the smallest key among the symmetric images
and the symmetry that reaches it. Every image of a position shares its canonical key, as
seed 004 shares one value among them.

**Scores.** Exact solutions follow :mod:`gameai.games.mnk.solver`'s convention from the side to
move: a win in ``t`` plies scores ``game.big - t``, a draw 0, a loss in ``t`` plies
``t - game.big``.

**Cycles.** In a game where positions can repeat (``game.cyclic``), a position that occurs
for the third time in a game ends it in a draw (see :mod:`gameai.games.morris.game`). A state
carries no history: every answer about a state is about the game that starts from it.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt

from gameai.games.errors import InvalidBoard

if TYPE_CHECKING:
    from gameai.games.graph import StateGraph

U64 = npt.NDArray[np.uint64]
I8 = npt.NDArray[np.int8]
PLAYERS = ("X", "O")


@dataclass(frozen=True, slots=True)
class Move:
    """One action as the APIs show it: where a piece goes and, if it moves, where from."""

    action: int
    index: int
    row: int
    col: int
    from_index: int | None = None
    from_row: int | None = None
    from_col: int | None = None

    def __str__(self) -> str:
        to = f"({self.row}, {self.col})"
        if self.from_index is None:
            return to
        return f"({self.from_row}, {self.from_col}) -> {to}"


@dataclass(frozen=True)
class Batch:
    """Many positions of one game in the vectorised form models read: canonical keys, the
    symmetry of each onto its canonical image, the legal actions, and whose turn it is."""

    keys: U64
    syms: I8
    legal: npt.NDArray[np.bool_]  # (positions, num_actions)
    to_move: list[str]
    masks: tuple[U64, U64] | None = None  # the boards as X and O bitmasks (m,n,k games)

    def __len__(self) -> int:
        return len(self.keys)


@dataclass(frozen=True)
class MoveOutcome:
    """One legal move and what it leads to for the player making it."""

    move: int  # the action id (for m,n,k games the cell index)
    row: int  # where the piece goes
    col: int
    outcome: str  # "win" | "draw" | "loss"
    distance: int  # plies from now to the end of the game under optimal play
    score: int
    optimal: bool
    from_index: int | None = None  # where a moving piece comes from (morris movements)
    from_row: int | None = None
    from_col: int | None = None


@dataclass(frozen=True)
class Solution:
    """The exact value of a position and of each of its moves, from the side to move's view."""

    board: State
    value: int  # +1 win, 0 draw, -1 loss for the side to move
    outcome: str
    distance: int
    moves: tuple[MoveOutcome, ...]  # best first

    @property
    def optimal_moves(self) -> tuple[int, ...]:
        return tuple(m.move for m in self.moves if m.optimal)


@dataclass(frozen=True)
class OptimalMoves:
    """The exact value of a position and its optimal moves (those with the best exact
    score), without the other moves' scores: what choosing a best move needs, proved for
    less than a :class:`Solution` (:meth:`Game.prove_optimal`)."""

    board: State
    value: int  # +1 win, 0 draw, -1 loss for the side to move
    optimal_moves: tuple[int, ...]  # ascending


class OwnSolvers(NamedTuple):
    """A game's two proofs on one table of their own (:meth:`Game.own_solvers`), each
    called with a state and a time limit in seconds, raising as :meth:`Game.solve`."""

    optimal: Callable[[State, float], OptimalMoves]
    solve: Callable[[State, float], Solution]


class Game(abc.ABC):
    """A game: its board, its actions and how positions are read, printed and keyed."""

    name: str
    rows: int
    cols: int
    k: int  # how many in a row win
    gravity: bool  # pieces fall to the lowest empty cell of a column
    # True when positions can repeat; a third occurrence is then a draw.
    cyclic: ClassVar[bool] = False
    # True for games whose every move fills one empty cell and whose position is two
    # bitmasks with the side to move following from the counts: the m,n,k kernels
    # (self-play, layered enumeration, vectorised evaluation) apply to them. Other games
    # use the generic paths over their state graph (:meth:`state_graph`).
    cell_kernels: ClassVar[bool] = False
    # How the self-play learners move through the game's positions (the trainer's compiled
    # walker of that name): "position_graph", along :meth:`state_graph` (any game small
    # enough to enumerate), or "bitboard", for games whose positions are two bitmasks and
    # whose every move fills one empty cell (m,n,k: boards too large to enumerate).
    walker: ClassVar[str] = "position_graph"

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    @property
    @abc.abstractmethod
    def num_actions(self) -> int:
        """How many action ids there are (values per position in a model)."""

    @property
    @abc.abstractmethod
    def big(self) -> int:
        """The score scale: a win in ``t`` plies scores ``big - t``."""

    @property
    @abc.abstractmethod
    def symmetries(self) -> tuple[tuple[int, ...], ...]:
        """The board's symmetries as cell permutations, the identity first."""

    @cached_property
    def action_symmetries(self) -> tuple[tuple[int, ...], ...]:
        """Each symmetry as a permutation of action ids."""
        return tuple(tuple(self.image_of_action(a, perm) for a in range(self.num_actions))
                     for perm in self.symmetries)

    def image_of_action(self, action: int, perm: Sequence[int]) -> int:
        """``action`` moved by the cell permutation ``perm``."""
        frm, to = self.split_action(action)
        return self.action_of(perm[to], None if frm is None else perm[frm])

    # -- actions -------------------------------------------------------------------------

    def split_action(self, action: int) -> tuple[int | None, int]:
        """``(from, to)`` of an action id (``from`` is None for a placement)."""
        cells = self.cells
        if action < cells:
            return None, action
        frm, to = divmod(action - cells, cells)
        return frm, to

    def split_actions(self, actions: npt.NDArray[np.integer]
                      ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Vectorised :meth:`split_action`: ``(from, to)`` arrays, ``from`` -1 for a
        placement."""
        a = np.asarray(actions, dtype=np.int64)
        moving = a >= self.cells
        frm = np.where(moving, (a - self.cells) // self.cells, -1)
        to = np.where(moving, (a - self.cells) % self.cells, a)
        return frm, to

    def action_of(self, to: int, frm: int | None = None) -> int:
        """The action id of a placement on ``to`` or a movement ``frm -> to``."""
        return to if frm is None else self.cells + frm * self.cells + to

    def move(self, action: int) -> Move:
        """The API view of ``action``."""
        frm, to = self.split_action(action)
        row, col = divmod(to, self.cols)
        if frm is None:
            return Move(action, to, row, col)
        fr, fc = divmod(frm, self.cols)
        return Move(action, to, row, col, frm, fr, fc)

    # -- positions -----------------------------------------------------------------------

    @abc.abstractmethod
    def initial(self) -> State:
        """The position before the first move."""

    @abc.abstractmethod
    def parse(self, text: object, *, to_move: object = None) -> State:
        """The position a pattern describes, validated.

        Args:
            text: the seed's pattern (``"X--|-O-|---"``).
            to_move: ``"X"``, ``"O"`` or ``None``/``""``. Required where the counts do not
                tell whose turn it is (morris after the placements); where they do, a
                given side must agree with them.
        Raises:
            InvalidBoard: malformed text, an impossible position, or a missing or
                impossible side to move; the message names the problem.
        """

    def parse_many(self, texts: Sequence[object], *, to_move: object = None) -> list[State]:
        """:meth:`parse` for many boards (one ``to_move`` for all), each checked playable.

        Raises:
            InvalidBoard, GameOver, GameError: the first bad board's error, with its
                ``field`` attribute set to ``boards[i]``.
        """
        from gameai.games.errors import GameError

        states = []
        for i, text in enumerate(texts):
            try:
                states.append(self.parse(text, to_move=to_move).require_playable())
            except GameError as e:
                e.field = f"boards[{i}]"
                raise
        return states

    def parse_batch(self, texts: Sequence[object], *, to_move: object = None) -> Batch:
        """:meth:`parse_many` straight into a :class:`Batch` (games may do it without
        building a state per board)."""
        return self.batch(self.parse_many(texts, to_move=to_move))

    def batch(self, states: Sequence[State]) -> Batch:
        """The :class:`Batch` of ``states`` (positions of this game)."""
        keys, syms = self.canonical_many(states)
        return Batch(keys, syms, self.legal_many(states), [s.to_move for s in states])

    def parse_moves(self, text: object) -> State:
        """The position after the moves ``text`` from :meth:`initial`, in the game's move
        notation, with the draw rule applied along the way.

        Raises:
            InvalidBoard: the game has no move notation, or the text is malformed
                (``field`` is ``moves``).
            IllegalMove: a move the rules forbid; the message names it (``field`` moves).
            GameOver: the moves end in a draw by repetition.
        """
        raise InvalidBoard(f"moves: {self.name} takes a board, not a list of moves",
                           field="moves")

    def parse_game(self, text: object) -> list[int]:
        """The action of each move of ``text`` (the game's move notation, read as
        :meth:`parse_moves` reads it), in order from :meth:`initial`: a game replayed ply by
        ply (a review). Unlike :meth:`parse_moves`, a last move that ends the game by the
        draw rule is no error: the game simply ends there.

        Raises:
            InvalidBoard, IllegalMove: as :meth:`parse_moves` (a game without a notation,
                or one that does not list its moves one by one, says so: give actions).
        """
        raise InvalidBoard(f"moves: {self.name} takes a board, not a list of moves "
                           "(give the moves as actions)", field="moves")

    def rules(self) -> dict[str, Any]:
        """What a client needs to play the game beyond the board's size (the web board
        reads it from ``GET /v1/games``); empty for games where a move fills a cell."""
        return {}

    @abc.abstractmethod
    def describe(self) -> str:
        """One line for people: the name and the rules in brief."""

    # -- whole-game views ----------------------------------------------------------------

    def state_graph(self, *, limit: int | None = None) -> StateGraph:
        """Every position reachable from :meth:`initial`, with every move's successor
        (see :mod:`gameai.games.graph`); games may build it faster than the generic walk.

        Raises:
            TooLarge: more than ``limit`` positions.
        """
        from gameai.games.graph import DEFAULT_GRAPH_LIMIT, build_graph

        return build_graph(self, limit=limit or DEFAULT_GRAPH_LIMIT)

    @abc.abstractmethod
    def solve(self, state: State, *, time_limit: float | None = None) -> Solution:
        """The exact value of ``state`` and of each of its moves (best first).

        Args:
            time_limit: seconds a search may take (``None``: until solved); solvers that
                answer from a table or a graph take no time worth limiting.
        Raises:
            GameOver: the game has ended at ``state``.
            TooLarge: the position is too large to solve exactly, or (``SearchTimeout``)
                a search ran out of time.
        """

    def optimal_actions(self, state: State, *, time_limit: float | None = None
                        ) -> tuple[int, ...]:
        """The actions of ``state`` with the best exact score (ascending): what a perfect
        player draws among. Raises as :meth:`solve`; a search may answer this for less
        than every move's exact score."""
        return tuple(sorted(self.solve(state, time_limit=time_limit).optimal_moves))

    def non_losing_actions(self, state: State, *, time_limit: float | None = None
                           ) -> tuple[int, ...]:
        """The actions of ``state`` whose exact outcome is a win or a draw (ascending;
        empty when every action loses). Raises as :meth:`solve`."""
        solution = self.solve(state, time_limit=time_limit)
        return tuple(sorted(m.move for m in solution.moves if m.outcome != "loss"))

    def forced_win_actions(self, state: State, *, time_limit: float | None = None
                           ) -> tuple[int, ...]:
        """The actions of ``state`` whose exact outcome is a win, however slow (ascending;
        empty when none wins). Raises as :meth:`solve`."""
        solution = self.solve(state, time_limit=time_limit)
        return tuple(sorted(m.move for m in solution.moves if m.outcome == "win"))

    def prove_optimal(self, state: State, *, time_limit: float | None = None
                      ) -> OptimalMoves:
        """The value of ``state`` and its optimal moves (:meth:`optimal_actions` with the
        value). Raises as :meth:`solve`."""
        solution = self.solve(state, time_limit=time_limit)
        return OptimalMoves(state, solution.value, tuple(sorted(solution.optimal_moves)))

    def own_solvers(self, *, table_bits: int) -> OwnSolvers | None:
        """:meth:`prove_optimal` and :meth:`solve` with a table of their own
        (``2**table_bits`` entries, shared by the two), for a thread that must not wait
        on the shared one, or a judged player whose opponent's proofs must not help it.
        ``None`` for a game whose :meth:`solve` is quick anyway (an enumerated table, not a
        search)."""
        return None

    def own_solver(self, *, table_bits: int) -> Callable[[State, float], Solution] | None:
        """:meth:`own_solvers`' :meth:`solve` alone."""
        found = self.own_solvers(table_bits=table_bits)
        return None if found is None else found.solve

    @abc.abstractmethod
    def move_scores(self) -> tuple[U64, npt.NDArray[np.int16], npt.NDArray[np.bool_]]:
        """The exact score of every move of every live position, up to symmetry:
        ``(keys, scores, legal)`` with canonical ``keys``, ``scores`` and ``legal`` of shape
        ``(positions, num_actions)`` in each canonical position's orientation (scores of
        illegal actions are 0). The oracle every model is judged by.

        Raises:
            TooLarge: the game is too large to solve whole.
        """

    @abc.abstractmethod
    def analyze(self) -> dict[str, Any]:
        """Figures about the whole game (``gameai analyze``), as JSON.

        Raises:
            TooLarge: the game is too large to enumerate.
        """

    # -- batches (models answer many positions at once) ----------------------------------

    def canonical_many(self, states: Sequence[State]) -> tuple[U64, npt.NDArray[np.int8]]:
        """:meth:`State.canonical` of each state: keys and symmetries as arrays."""
        pairs = [s.canonical() for s in states]
        keys = np.fromiter((k for k, _ in pairs), dtype=np.uint64, count=len(pairs))
        syms = np.fromiter((s for _, s in pairs), dtype=np.int8, count=len(pairs))
        return keys, syms

    def legal_many(self, states: Sequence[State]) -> npt.NDArray[np.bool_]:
        """``(len(states), num_actions)``: which actions are legal in each state."""
        out = np.zeros((len(states), self.num_actions), dtype=bool)
        for i, state in enumerate(states):
            out[i, state.legal_actions()] = True
        return out


class State(abc.ABC):
    """One position of a game: immutable; :meth:`play` returns a new state."""

    __slots__ = ()
    game: Game

    @property
    @abc.abstractmethod
    def to_move(self) -> str:
        """``"X"`` or ``"O"``."""

    @property
    @abc.abstractmethod
    def key(self) -> int:
        """A compact integer that identifies the position, side to move included."""

    @abc.abstractmethod
    def canonical(self) -> tuple[int, int]:
        """``(canonical key, sym)``: the smallest key over the symmetries and the first
        symmetry reaching it; action ``a`` here is ``game.action_symmetries[sym][a]``
        there."""

    @abc.abstractmethod
    def cell(self, index: int) -> str:
        """``"X"``, ``"O"`` or ``"-"``."""

    @abc.abstractmethod
    def legal_actions(self) -> list[int]:
        """The action ids the side to move may play, ascending; empty once over."""

    @abc.abstractmethod
    def play(self, action: int) -> State:
        """The position after the side to move plays ``action``.

        Raises:
            GameOver: the game has ended.
            IllegalMove: the action is not legal here; the message says why.
        """

    @abc.abstractmethod
    def winner(self) -> str | None:
        """The side that has won, if the game is won."""

    @abc.abstractmethod
    def is_over(self) -> bool:
        """Won, lost or drawn: no move is left to play."""

    def require_playable(self) -> State:
        """This state, or :class:`~gameai.games.errors.GameOver` if the game has ended."""
        from gameai.games.errors import GameOver

        if self.is_over():
            raise GameOver(self.winner())
        return self

    def winning_actions(self) -> tuple[int, ...]:
        """The actions that win at once for the side to move (ascending): each legal
        action played and the result asked who won. A family may answer faster (the m,n,k
        boards test only the lines through each cell), never differently."""
        mover = self.to_move
        return tuple(a for a in self.legal_actions() if self.play(a).winner() == mover)

    def moves(self) -> list[Move]:
        """The API view of :meth:`legal_actions`."""
        return [self.game.move(a) for a in self.legal_actions()]

    def __str__(self) -> str:
        cols = self.game.cols
        text = "".join(self.cell(i) for i in range(self.game.cells))
        return "|".join(text[r * cols:(r + 1) * cols] for r in range(self.game.rows))
