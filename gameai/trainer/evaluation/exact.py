"""The exact solver's model, evaluated like any learned one: what ``gameai models
publish-exact`` and ``gameai up --exact`` publish.

It is :func:`gameai.models.oracle.solver_model` (every live position's move values from
the solver's scores) with the evaluator's report in its metadata, labelled so nobody takes
it for a learned model: algorithm ``solver``, ``params.exact`` true, no games played.
"""

from __future__ import annotations

from gameai.games import Game
from gameai.models import Model, ModelInfo
from gameai.models.oracle import solver_model
from gameai.trainer.evaluation.evaluate import evaluate
from gameai.trainer.training import with_evaluation

LABEL = "the exact solver's values (gameai models publish-exact), not learned"


def exact_model(game: Game, *, seed: int = 0) -> Model:
    """``game``'s exact model with its evaluation.

    Raises:
        TooLarge: the game's solver table would not fit the memory limit (``OverBudget``,
            refused before it is built) or the game cannot be solved whole.
    """
    info = ModelInfo(game=game.name, algorithm="solver", params={"exact": True,
                                                                  "source": LABEL})
    model = solver_model(game, info=info)
    report = evaluate(model, seed=seed)
    return with_evaluation(lambda r: model.with_info(info.with_updates(evaluation=r)), report)
