import hashlib
import pickle
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gameai.games import GameError, GameOver, get_game
from gameai.games.mnk.board import Board
from gameai.games.mnk.solver import solve
from gameai.models import CorruptModel, MlpModel, ModelInfo, TableModel, load_model
from gameai.models.container import MAGIC, decode, encode
from gameai.models.oracle import solver_model

from ..games.strategies import boards

TTT = get_game("tictactoe")


@pytest.fixture(scope="module")
def oracle() -> TableModel:
    return solver_model(TTT, info=ModelInfo(game="tictactoe", algorithm="solver", seed=7,
                                            games_played=0, evaluation={"losses_as_x": 0}))


def _mlp(game, *, hidden=5, exceptions=0) -> MlpModel:
    rng = np.random.default_rng(1)
    keys = np.arange(1, exceptions + 1, dtype=np.uint64) * 3
    return MlpModel(
        game, ModelInfo(game=game.name, algorithm="mlp"),
        w1=rng.normal(size=(game.cells, hidden)).astype(np.float32),
        b1=rng.normal(size=hidden).astype(np.float32),
        w2=rng.normal(size=(hidden, game.cells)).astype(np.float32),
        b2=rng.normal(size=game.cells).astype(np.float32),
        exception_keys=keys,
        exception_values=np.zeros((exceptions, game.cells), np.float32),
    )


def test_table_round_trip_is_exact(oracle):
    data = oracle.to_bytes()
    back = load_model(data)
    assert isinstance(back, TableModel)
    assert back.info == oracle.info
    assert np.array_equal(back.keys, oracle.keys)
    assert np.array_equal(back.values, oracle.values, equal_nan=True)
    assert back.to_bytes() == data, "encoding must be deterministic"


def test_mlp_round_trip_is_exact():
    model = _mlp(TTT, exceptions=3)
    back = load_model(model.to_bytes())
    assert isinstance(back, MlpModel)
    for name in ("w1", "b1", "w2", "b2", "exception_keys", "exception_values"):
        assert np.array_equal(getattr(back, name), getattr(model, name))
    board = Board.parse(TTT, "X--|-O-|---")
    assert back.evaluate(board) == model.evaluate(board)


def test_tictactoe_table_is_small(oracle):
    assert len(oracle.to_bytes()) < 50_000


@settings(max_examples=80, deadline=None)
@given(boards(["tictactoe"], playable=True))
def test_oracle_best_move_is_optimal_on_any_board(oracle, board):
    assert oracle.best_move(board).index in solve(board).optimal_moves


@settings(max_examples=40, deadline=None)
@given(boards(["tictactoe"], playable=True), st.data())
def test_values_follow_the_symmetry(oracle, board, data):
    sym = data.draw(st.integers(0, 7))
    perm = TTT.symmetries[sym]
    a = {m.index: m.value for m in oracle.evaluate(board).moves}
    b = {m.index: m.value for m in oracle.evaluate(board.transformed(sym)).moves}
    assert b == {perm[i]: v for i, v in a.items()}


@settings(max_examples=30, deadline=None)
@given(st.lists(boards(["tictactoe"], playable=True), min_size=1, max_size=20))
def test_batch_equals_one_by_one(oracle, batch):
    assert oracle.evaluate_batch(batch) == [oracle.evaluate(b) for b in batch]
    mlp = _mlp(TTT, exceptions=2)
    for one, many in zip([mlp.evaluate(b) for b in batch], mlp.evaluate_batch(batch),
                         strict=True):
        assert [m.index for m in one.moves] == [m.index for m in many.moves]
        assert np.allclose([m.value for m in one.moves], [m.value for m in many.moves],
                           atol=1e-6)


def test_evaluate_orders_moves_and_names_the_mover(oracle):
    ev = oracle.evaluate(Board.parse(TTT, "XO-|-O-|--X"))
    assert ev.to_move == "X" and ev.best.index == 7 and ev.value == ev.best.value
    values = [m.value for m in ev.moves]
    assert values == sorted(values, reverse=True)
    assert {m.index for m in ev.moves} == {2, 3, 5, 6, 7}


def test_unknown_position_gets_draw_values():
    empty = TableModel(TTT, ModelInfo(game="tictactoe", algorithm="none"),
                       np.zeros(0, np.uint64), np.zeros((0, 9), np.float32))
    ev = empty.evaluate(Board.empty(TTT))
    assert [m.value for m in ev.moves] == [0.0] * 9 and ev.best.index == 0


def test_exceptions_override_the_network():
    model = _mlp(TTT)
    board = Board.parse(TTT, "X--|-O-|---")
    key = model.canonical_key(board)
    perm_values = np.full((1, 9), -0.5, np.float32)
    with_exc = MlpModel(TTT, model.info, w1=model.w1, b1=model.b1, w2=model.w2, b2=model.b2,
                        exception_keys=np.array([key], np.uint64),
                        exception_values=perm_values)
    assert [m.value for m in with_exc.evaluate(board).moves] == [-0.5] * 7


def test_finished_and_foreign_boards_are_refused(oracle):
    with pytest.raises(GameOver):
        oracle.evaluate(Board.parse(TTT, "XXX|OO-|---"))
    with pytest.raises(GameError, match="plays tictactoe"):
        oracle.evaluate(Board.empty(get_game("four-in-a-row")))


# -- corruption: nothing damaged or forged ever loads -----------------------------------


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_flipped_byte_is_refused(oracle, data):
    payload = bytearray(oracle.to_bytes())
    i = data.draw(st.integers(0, len(payload) - 1))
    payload[i] ^= data.draw(st.integers(1, 255))
    with pytest.raises(CorruptModel):
        load_model(bytes(payload))


@pytest.mark.parametrize("cut", [0, 10, 40, 100, -1, -33])
def test_truncated_payloads_are_refused(oracle, cut):
    payload = oracle.to_bytes()
    with pytest.raises(CorruptModel):
        load_model(payload[:cut])


def test_a_pickle_is_refused_without_being_unpickled(tmp_path):
    class Boom:
        def __reduce__(self):
            return (open, (str(tmp_path / "pwned"), "w"))

    with pytest.raises(CorruptModel, match="bad magic"):
        load_model(pickle.dumps(Boom()))
    assert not (tmp_path / "pwned").exists()


def _forge(header: dict, body: bytes) -> bytes:
    import json

    raw = json.dumps(header).encode()
    head = struct.pack("<8sHHI", MAGIC, 1, 0, len(raw)) + raw + zlib.compress(body)
    return head + hashlib.sha256(head).digest()


def test_forged_header_with_valid_checksum_is_refused():
    meta = {"kind": "table", "game": "tictactoe", "algorithm": "x"}
    object_array = _forge({"metadata": meta, "arrays": [
        {"name": "keys", "dtype": "|O", "shape": [1]}], "body_length": 8}, b"\0" * 8)
    with pytest.raises(CorruptModel, match="forbidden dtype"):
        load_model(object_array)
    lying_size = _forge({"metadata": meta, "arrays": [
        {"name": "keys", "dtype": "<u8", "shape": [1000]}], "body_length": 8000}, b"\0" * 8)
    with pytest.raises(CorruptModel, match="inflates"):
        load_model(lying_size)
    unknown_kind = encode({**meta, "kind": "pickle"}, {})
    with pytest.raises(CorruptModel, match="unknown model kind"):
        load_model(unknown_kind)
    bad_game = encode({**meta, "game": "chess"}, {"keys": np.zeros(0, np.uint64),
                                                  "values": np.zeros((0, 9), np.float32)})
    with pytest.raises(CorruptModel, match="metadata"):
        load_model(bad_game)


def test_inflation_is_capped():
    bomb = _forge({"metadata": {}, "arrays": [{"name": "a", "dtype": "|u1", "shape": [10]}],
                   "body_length": 10}, b"\0" * 50_000_000)
    with pytest.raises(CorruptModel, match="inflates"):
        decode(bomb)


def test_values_out_of_range_are_refused():
    with pytest.raises(CorruptModel, match=r"\[-1, 1\]"):
        TableModel(TTT, ModelInfo(game="tictactoe", algorithm="x"), np.array([5], np.uint64),
                   np.full((1, 9), 2.0, np.float32))


def test_with_info_restamps_without_copying_and_encodes_exactly():
    from gameai.models import container

    game = get_game("tictactoe")
    model = solver_model(game)
    stamped = model.with_info(model.info.with_updates(algorithm="restamped", seed=9))
    assert stamped.keys is model.keys and stamped.values is model.values
    assert stamped.info.algorithm == "restamped" and model.info.algorithm == "solver"
    with pytest.raises(ValueError, match="four-in-a-row"):
        model.with_info(ModelInfo(game="four-in-a-row", algorithm="x"))
    first = stamped.to_bytes()  # the body is remembered now ...
    other = solver_model(get_game("mnk-3x4-3")).to_bytes()  # ... and replaced
    container._last_body = (b"", b"")
    fresh = stamped.to_bytes()
    assert first == fresh and other != fresh
    again = load_model(model.with_info(model.info.with_updates(seed=11)).to_bytes())
    assert again.info.seed == 11 and np.array_equal(again.values, model.values, equal_nan=True)


def test_a_large_body_is_compressed_faster_and_reads_back_exactly():
    from gameai.models import container

    rng = np.random.default_rng(5)
    big = {"keys": np.arange(300_000, dtype=np.uint64),  # 2.4 MB: over SMALL_BODY
           "values": rng.integers(0, 3, 300_000).astype(np.int8)}
    data = encode({"kind": "test"}, big)
    back = decode(data)
    assert back.metadata == {"kind": "test"}
    assert all(np.array_equal(back.arrays[k], v) for k, v in big.items())
    assert sum(a.nbytes for a in big.values()) > container.SMALL_BODY
