"""Per-game defaults of the learners: schedules that scale with the game.

A learner's parameter is, in order of precedence: the user's ``--param``; this module's
value for the game; the parameter's own default (tic-tac-toe's, where the seeds tuned
them). Exploration halving every 2,000 games suits tic-tac-toe's 765 canonical positions
but not four-in-a-row's 1,217,977: td's temperature is then at its floor after a few
hundred thousand games, long before most positions have been met
(docs/trainer.md, "Per-game defaults", has the measurements).

So the games' exploration half-lives scale with the number of canonical positions
(estimated before anything is allocated, :mod:`gameai.games.mnk.sizes`): ``HALFLIFE_PER_POSITION``
games of half-life a position, never below the parameter's own default. The games whose
values were measured keep the measured values (:data:`MEASURED`); games played along a
state graph (morris) keep the defaults they were measured perfect with.
"""

from __future__ import annotations

from typing import Any

from gameai.games import Game
from gameai.games.mnk.game import as_mnk
from gameai.games.mnk.keys import MAX_VECTOR_CELLS
from gameai.games.mnk.sizes import estimate_layers
from gameai.trainer.learners.base import Params

# games of exploration half-life per canonical position: four-in-a-row's measured best
# (tau_halflife 2,000,000 for 1,217,977 positions) rounded
HALFLIFE_PER_POSITION = 1.6
# the parameters that are exploration half-lives, per algorithm, and their defaults
HALFLIVES: dict[str, tuple[str, ...]] = {"td": ("tau_halflife", "epsilon_halflife"),
                                         "qlearning": ("epsilon_halflife",)}
MEASURED: dict[tuple[str, str], dict[str, Any]] = {
    ("tictactoe", "td"): {}, ("tictactoe", "qlearning"): {}, ("tictactoe", "tally"): {},
    # tau_end 0.03 (not 0.01): unbeatable as X and O after 4.3M games where 0.01 lost 13 / 30
    # lines after 5.1M (gameai bench schedules, docs/trainer.md)
    ("four-in-a-row", "td"): {"tau_halflife": 2_000_000.0, "epsilon_halflife": 2_000_000.0,
                              "tau_end": 0.03},
    # one set of tables a player (Connect Four's threats are not worth the same to both),
    # traces that reach the opening (lam 0.8, exploration down to 2%), and exploring starts
    # spent on the opening (at most 10 random moves): 92% wins as first player against
    # perfect play after 4M games where the learner's own defaults won 0-40%
    # (docs/ntuple.md, "Connect Four")
    # docs/ntuple.md's measured recipe: 16 tuples, alpha down to 0.02, 10% exploration and
    # exploring starts; the served policy (the default depth-2 search) was unbeatable after
    # 10 minutes of self-play where the learner's own defaults stayed thousands of lines
    # short (issue 28: --until-unbeatable then stops by itself; docs/ntuple.md, "Figures")
    ("four-in-a-row", "ntuple"): {"tuples": 16, "alpha_end": 0.02, "epsilon_end": 0.1,
                                  "exploring_starts": 0.5},
    ("connect-four", "ntuple"): {"sides": 2, "lam": 0.8, "epsilon_end": 0.02,
                                 "epsilon_halflife": 200_000.0, "exploring_starts": 0.5,
                                 "opening_plies": 10},
}


def defaults_for(game: Game, algorithm: str, params_type: type[Params]) -> dict[str, Any]:
    """The parameters ``algorithm`` (whose parameters are ``params_type``) takes by default
    on ``game``, beyond their own defaults."""
    measured = MEASURED.get((game.name, algorithm))
    if measured is not None:
        return dict(measured)
    names = HALFLIVES.get(algorithm, ())
    if not names or not game.cell_kernels or game.cells > MAX_VECTOR_CELLS:
        return {}
    positions = estimate_layers(as_mnk(game)).total
    halflife = float(round(HALFLIFE_PER_POSITION * positions, -3))
    return {name: halflife for name in names if halflife > getattr(params_type, name)}
