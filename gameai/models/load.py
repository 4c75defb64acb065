"""Reading a model back from its bytes, whatever its kind: the one place that knows every
kind (tables and seed 004's network in :mod:`gameai.models.model`, n-tuple networks in
:mod:`gameai.models.ntuple`). Never unpickles anything."""

from __future__ import annotations

from gameai.games import GameError, get_game
from gameai.models.container import CorruptModel, decode
from gameai.models.info import ModelInfo
from gameai.models.model import MlpModel, Model, TableModel, short
from gameai.models.ntuple import NtupleModel

KIND_NAMES = ("table", "mlp", "ntuple")


def load_model(data: bytes) -> Model:
    """The model in ``data`` (bytes from :meth:`Model.to_bytes`). Never unpickles anything.

    Raises:
        CorruptModel: the bytes are damaged, forged, or describe an impossible model.
    """
    container = decode(data)
    meta = dict(container.metadata)
    kind = meta.pop("kind", None)
    try:
        info = ModelInfo.from_json(meta)
        game = get_game(info.game)
    except (GameError, ValueError, TypeError, KeyError) as e:
        raise CorruptModel(f"model metadata is not valid: {str(e)[:200]}") from e
    arrays = container.arrays
    try:
        if kind == "table":
            return TableModel(game, info, arrays["keys"], arrays["values"])
        if kind == "mlp":
            return MlpModel(game, info, w1=arrays["w1"], b1=arrays["b1"], w2=arrays["w2"],
                            b2=arrays["b2"], exception_keys=arrays["exception_keys"],
                            exception_values=arrays["exception_values"])
        if kind == "ntuple":
            return NtupleModel(game, info, tuples=arrays["tuples"], weights=arrays["weights"])
    except KeyError as e:
        raise CorruptModel(f"model of kind {kind!r} lacks the array {e}") from e
    raise CorruptModel(f"unknown model kind {short(kind)}; known kinds are {', '.join(KIND_NAMES)}")
