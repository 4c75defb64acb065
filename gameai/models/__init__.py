"""The model artifact: values of moves over canonical positions, stored safely.

``load_model(bytes)`` reads any form; ``model.to_bytes()`` writes one. See
:mod:`gameai.models.container` for the file format and :mod:`gameai.models.model` for the
forms and their interface.
"""

from gameai.models.container import CorruptModel
from gameai.models.info import ModelInfo
from gameai.models.load import load_model
from gameai.models.model import (
    Evaluation,
    MlpModel,
    Model,
    MoveValue,
    SearchReport,
    TableModel,
)
from gameai.models.ntuple import NtupleModel

__all__ = [
    "CorruptModel",
    "Evaluation",
    "MlpModel",
    "Model",
    "ModelInfo",
    "MoveValue",
    "NtupleModel",
    "SearchReport",
    "TableModel",
    "load_model",
]
