"""Property-based fuzzing (hypothesis) of the server's core functions and batch parsing:
whatever the input, the answer is a result or one of the named errors that the
transports map to a 4xx / gRPC status; never anything else.

The properties run in-process against a real :class:`~gameai.service.registry.Registry` over a
real store, so the same code answers here as behind REST and gRPC. :func:`fuzz_core`
runs them all (``gameai stress hostile`` and ``tests/stress`` both call it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gameai.games import get_game
from gameai.games.mnk.game import as_mnk
from gameai.service import core
from gameai.service.batch import parse_boards
from gameai.service.errors import classify
from gameai.service.registry import Registry

GAMES = ["tictactoe", "TicTacToe", "mnk-3x3-3", "connect-3x4-3", "four-in-a-row", "chess",
         "mnk-0x0-0", "mnk-99999x99999-3", "", " ", "tictactoe\x00", "tïctactoe"]
MODELS = ["", "production", "canary", "staging", "1", "2", "0", "-1", "007", "99999999999999",
          "latest", "１", "¹", "٣", "production ", "\u202eproduction"]  # "¹": isdigit, no int

nasty_text = st.text(max_size=300) | st.text(st.characters(codec="utf-8"), max_size=40)
not_text = st.integers() | st.none() | st.floats() | st.booleans() | st.binary(max_size=20) \
    | st.lists(st.integers(), max_size=3) | st.dictionaries(st.text(max_size=3),
                                                            st.integers(), max_size=2)


def mostly(usual: st.SearchStrategy[Any], *hostile: st.SearchStrategy[Any]
           ) -> st.SearchStrategy[Any]:
    """``usual`` three times in four, so calls get past the first check and reach the
    deeper ones; the hostile values the rest of the time. (Not ``st.one_of(usual, usual,
    usual, ...)``: hypothesis flattens a one_of into its strategies' branches and drops
    repeats, so every branch would be drawn alike.)"""
    rest = st.one_of(*hostile)
    return st.integers(0, 3).flatmap(lambda i: rest if i == 3 else usual)


cells = st.sampled_from("XO-")
shaped_board = st.lists(st.text(cells, min_size=3, max_size=3), min_size=3, max_size=3) \
    .map("|".join)
# real positions (live and finished), so the answers and the game-over checks are reached
positions = st.sampled_from(["---|---|---", "X--|-O-|---", "XX-|OO-|---", "XO-|-X-|--O",
                             "XXX|OO-|---", "XOX|XOO|OXX", "X-O|-X-|---", "OX-|---|---"])
boards = mostly(positions | shaped_board, nasty_text, not_text, st.text("XO-|", max_size=20))
games = mostly(st.sampled_from(["tictactoe", "tictactoe", "mnk-3x3-3", "connect-3x4-3"]),
               st.sampled_from(GAMES), nasty_text, not_text)
models = mostly(st.sampled_from(["", "production", "canary", "1", "2"]),
                st.sampled_from(MODELS), nasty_text, not_text)
client_ids = mostly(st.sampled_from(["", "player-1", "player-2"]), st.text(max_size=400),
                    not_text)
aliases = mostly(st.sampled_from(["production", "canary", "staging"]),
                 st.text(max_size=70), not_text)
# top, nodes and time_ms: unset or small most of the time, then any number or no number
counts = mostly(st.none() | st.integers(1, 12), st.integers(), not_text)


class Unexpected(AssertionError):
    """A core call raised something other than a named, mapped error."""


def _expect_named(call: Callable[[], Any], outcomes: Counter[str]) -> Any:
    try:
        result = call()
    except Exception as e:
        status = classify(e)
        if status is None:
            raise Unexpected(f"{type(e).__name__}: {e}") from e
        if status.http >= 500 and status.http != 503:
            raise Unexpected(f"a {status.http} for input: {e}") from e
        if status.field and not status.message.startswith(f"{status.field}:"):
            raise Unexpected(f"message does not start with its field: {status.message}") from e
        outcomes[f"{status.http} {status.code_name}"] += 1
        return None
    outcomes["200 OK"] += 1
    return result


def fuzz_core(registry: Registry, *, examples: int = 200, admin: bool = True) -> Counter[str]:
    """Run every property ``examples`` times; returns how the calls ended
    (``"200 OK"``, ``"422 INVALID_ARGUMENT"``, ...). Raises on the first violation."""
    outcomes: Counter[str] = Counter()
    options = settings(max_examples=examples, deadline=None, database=None,
                       suppress_health_check=list(HealthCheck))
    versions = {v for state in map(registry.served, registry.games) for v in state.models}

    @options
    @given(games, boards, models, client_ids, st.sampled_from(["best_move", "evaluate"]))
    def one_board(game: Any, board: Any, model: Any, client_id: Any, method: str) -> None:
        answer = _expect_named(lambda: getattr(core, method)(
            registry, game=game, board=board, model=model, client_id=client_id), outcomes)
        if answer is not None:
            assert answer.version >= 1

    @options
    @given(games, boards, models, st.sampled_from(["best_move", "evaluate"]), counts, counts,
           counts)
    def asking_more(game: Any, board: Any, model: Any, method: str, top: Any, nodes: Any,
                    time_ms: Any) -> None:
        answer = _expect_named(lambda: getattr(core, method)(
            registry, game=game, board=board, model=model, top=top, nodes=nodes,
            time_ms=time_ms), outcomes)
        if answer is not None and top is not None:
            assert answer.top is not None and 1 <= len(answer.top) <= top
            assert all(t.line[0] == t.move for t in answer.top)
            assert answer.search is not None

    @options
    @given(positions | shaped_board, st.sampled_from(["", "production", "canary", "1", "2"]),
           st.text(max_size=30))
    def plausible(board: str, model: str, client_id: str) -> None:
        answer = _expect_named(lambda: core.evaluate(
            registry, game="tictactoe", board=board, model=model, client_id=client_id),
            outcomes)
        if answer is not None:
            e = answer.evaluation
            assert -1 <= e.value <= 1 and e.moves and e.value == e.moves[0].value
            assert all(board[m.row * 4 + m.col] == "-" for m in e.moves)

    @options
    @given(games, mostly(st.lists(boards, max_size=12), not_text), models, client_ids,
           st.integers(0, 10), st.booleans(), counts, counts)
    def batch(game: Any, texts: Any, model: Any, client_id: Any, limit: int,
              include: bool, nodes: Any, time_ms: Any) -> None:
        if not isinstance(texts, list | tuple | str | bytes):
            texts = [texts]
        answer = _expect_named(lambda: core.evaluate_batch(
            registry, game=game, boards=texts, model=model, client_id=client_id,
            max_batch=limit, include_move_values=include, nodes=nodes, time_ms=time_ms),
            outcomes)
        if answer is not None:
            assert len(answer.values) == len(texts) <= limit
            assert answer.version in versions or answer.version >= 1

    @options
    @given(st.sampled_from(["tictactoe", "connect-3x4-3", "four-in-a-row"]),
           st.lists(boards, max_size=20))
    def parsing(name: str, texts: list[Any]) -> None:
        game = as_mnk(get_game(name))
        parsed = _expect_named(lambda: parse_boards(game, texts), outcomes)
        if parsed is not None:
            x, o = parsed
            assert len(x) == len(o) == len(texts) and not (x & o).any()

    @options
    @given(games, models)
    def model_reads(game: Any, version: Any) -> None:
        _expect_named(lambda: core.get_model(registry, game=game, version=version), outcomes)
        _expect_named(lambda: core.list_models(registry, game=game), outcomes)

    @options
    @given(games, aliases, mostly(st.integers(1, 2), st.integers(-3, 5), not_text),
           mostly(st.integers(0, 100), st.integers(-5, 120), not_text))
    def admin_changes(game: Any, alias: Any, version: Any, weight: Any) -> None:
        _expect_named(lambda: core.set_alias(registry, game=game, alias=alias,
                                             version=version, by="fuzz"), outcomes)
        _expect_named(lambda: core.set_canary(registry, game=game, version=version,
                                              weight=weight, by="fuzz"), outcomes)

    properties = [plausible, one_board, asking_more, batch, parsing, model_reads]
    if admin:
        properties.append(admin_changes)
    for prop in properties:
        prop()
    return outcomes
