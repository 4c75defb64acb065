"""Hostile input to every core entry point: only the named errors, never anything else."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gameai.games import GameError, GameOver, InvalidBoard, UnknownGame, get_game
from gameai.games.mnk.board import Board
from gameai.games.mnk.solver import solve
from gameai.models import CorruptModel, load_model

GAMES = ["tictactoe", "four-in-a-row", "mnk-4x5-4", "connect-four", "connect-3x4-3"]
CELL = st.sampled_from("XO-")

any_text = st.text(max_size=300)
# Mostly well-formed patterns (right shape, random cells) to reach the deep checks.
shaped = st.sampled_from(GAMES).flatmap(
    lambda name: st.lists(
        st.text(CELL, min_size=get_game(name).cols, max_size=get_game(name).cols),
        min_size=get_game(name).rows, max_size=get_game(name).rows,
    ).map(lambda rows, name=name: (name, "|".join(rows)))
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GAMES), st.one_of(any_text, st.integers(), st.none(), st.binary()))
def test_parse_raises_only_invalid_board(name, text):
    try:
        board = Board.parse(get_game(name), text)
    except InvalidBoard as e:
        assert str(e)
    else:
        assert str(board) == text


@settings(max_examples=600)
@given(shaped)
def test_shaped_patterns_parse_or_name_the_problem(case):
    name, text = case
    try:
        board = Board.parse(get_game(name), text)
    except InvalidBoard as e:
        assert str(e)
        return
    assert str(board) == text
    try:
        moves = board.require_playable().legal_moves()
    except GameOver:
        assert board.is_over()
        return
    assert moves and all(board.play(m).ply == board.ply + 1 for m in moves)


@settings(max_examples=300)
@given(st.one_of(any_text, st.from_regex(r"(mnk|connect)-\d{1,3}x\d{1,3}-\d{1,3}",
                                         fullmatch=True)))
def test_game_names_raise_only_unknown_game(name):
    try:
        game = get_game(name)
    except UnknownGame as e:
        assert str(e)
    else:
        assert 1 <= game.cells <= 64 and 1 <= game.k <= max(game.rows, game.cols)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["tictactoe", "mnk-3x4-3", "connect-3x4-3"]).flatmap(
    lambda name: st.lists(st.text(CELL, min_size=get_game(name).cols,
                                  max_size=get_game(name).cols),
                          min_size=get_game(name).rows, max_size=get_game(name).rows)
    .map(lambda rows, name=name: (name, "|".join(rows)))))
def test_solve_raises_only_named_errors(case):
    name, text = case
    try:
        solution = solve(Board.parse(get_game(name), text))
    except GameError as e:
        assert isinstance(e, InvalidBoard | GameOver)
    else:
        assert solution.moves and solution.value in (-1, 0, 1)


@settings(max_examples=300)
@given(st.binary(max_size=2000))
def test_load_model_raises_only_corrupt_model(data):
    try:
        load_model(data)
    except CorruptModel as e:
        assert str(e)


valid_metadata = st.fixed_dictionaries(
    {"kind": st.sampled_from(["table", "mlp"]),
     "game": st.sampled_from(["tictactoe", "connect-3x4-3"]),
     "algorithm": st.text(max_size=10)},
    optional={"seed": st.integers(0, 99) | st.none(), "games_played": st.integers(0, 10**9)},
)


def _forged(header: object, body: bytes) -> bytes:
    import hashlib
    import json
    import struct
    import zlib

    from gameai.models.container import MAGIC

    raw = json.dumps(header).encode()
    head = struct.pack("<8sHHI", MAGIC, 1, 0, len(raw)) + raw + zlib.compress(body)
    return head + hashlib.sha256(head).digest()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                 max_size=4),
    max_leaves=12,
)
array_specs = st.fixed_dictionaries({
    "name": st.sampled_from(["keys", "values", "w1", "b1", "w2", "b2", "exception_keys",
                             "exception_values", "other"]),
    "dtype": st.sampled_from(["<u8", "<f4", "|i1", "<i4", "|O", "<U4", "V8", "float32"]),
    "shape": st.lists(st.integers(-2, 12), max_size=3) | json_values,
})
garbage_metadata = st.fixed_dictionaries(
    {"kind": st.sampled_from(["table", "mlp", "pickle"]) | json_values,
     "game": st.sampled_from(["tictactoe", "connect-four", "chess"]) | json_values,
     "algorithm": st.just("fuzz") | json_values},
    optional={"seed": json_values, "params": json_values, "games_played": json_values,
              "evaluation": json_values, "parent_version": json_values},
)
metadata = st.one_of(valid_metadata, valid_metadata, garbage_metadata)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.fixed_dictionaries({"metadata": metadata | json_values,
                           "arrays": st.lists(array_specs, max_size=7) | json_values,
                           "body_length": st.integers(-5, 5000) | json_values}),
    st.binary(max_size=4000),
)
def test_forged_payloads_with_valid_checksums_raise_only_corrupt_model(header, body):
    try:
        model = load_model(_forged(header, body))
    except CorruptModel as e:
        assert str(e)
    else:  # it loaded: then it must answer like any model
        board = Board.empty(model.game)
        assert model.evaluate(board).moves


small_arrays = st.builds(
    lambda dtype, shape, seed: __import__("numpy").random.default_rng(seed)
    .integers(0, 2**31, size=shape).astype(dtype) * (1 if dtype != "float32" else 1e-10),
    st.sampled_from(["uint64", "float32", "int8", "int32"]),
    st.lists(st.integers(0, 10), min_size=1, max_size=2).map(tuple),
    st.integers(0, 2**32 - 1),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(metadata, st.dictionaries(st.sampled_from(["keys", "values", "w1", "b1", "w2", "b2",
                                                  "exception_keys", "exception_values"]),
                                 small_arrays, max_size=8))
def test_well_formed_containers_with_wrong_contents_raise_only_corrupt_model(meta, arrays):
    from gameai.models.container import encode

    try:
        data = encode(meta, arrays)
    except (ValueError, TypeError):
        return  # metadata that JSON cannot hold never becomes a payload
    try:
        model = load_model(data)
    except CorruptModel as e:
        assert str(e)
    else:
        assert model.evaluate(Board.empty(model.game)).moves
