"""The training loop shared by ``gameai train`` and the benchmarks: play, export, evaluate.

Training runs in rounds (100 games at first, then a quarter of the games played so far, up
to ``eval_every``); after each round the learner's model is exported and evaluated, and the
figures are kept as a :class:`Checkpoint` (the learning curves of ``--plot``). Rounds are
counted in games, never in seconds, so the same seed stops at the same game and yields the
same model bytes.

With ``eval_share`` (what ``gameai train`` does unless ``--eval-every`` is given) a round
is evaluated only while evaluation has used at most that share of the time so far (after
its first 5 seconds, spent freely), so a board whose evaluation costs seconds (four-in-a-row)
is not slowed down by its own checkpoints; the model bytes for a number of games stay the
same, only the checkpoints (and so where ``until`` stops) then depend on the machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gameai.games import Game
from gameai.models import Model
from gameai.trainer.evaluation.evaluate import evaluate, perfect, unbeatable, with_random_games
from gameai.trainer.evaluation.judge import GateJudge
from gameai.trainer.learners.base import Learner, Params, RoundStats, build_params
from gameai.trainer.learners.defaults import defaults_for
from gameai.trainer.learners.ntuple import NtupleLearner
from gameai.trainer.learners.qlearning import QLearner
from gameai.trainer.learners.tally import TallyLearner
from gameai.trainer.learners.td import TdLearner

# each algorithm is one learner, on whichever walker the game asks for (its params_type_for)
LEARNERS: dict[str, type[Learner]] = {"tally": TallyLearner, "td": TdLearner,
                                      "qlearning": QLearner, "ntuple": NtupleLearner}
# games between evaluations
EVAL_EVERY = {"tally": 50_000, "td": 1_000, "qlearning": 2_000, "ntuple": 10_000}
FIRST_ROUND = 100  # games before the first evaluation
TRAINING_RANDOM_GAMES = 200  # games against random play at each checkpoint
EVAL_SHARE = 0.1  # gameai train's default share of its time spent on checkpoints
# ... with --until-unbeatable or --until-perfect, whose checkpoints are the stop rule itself:
# a checkpoint of four-in-a-row's n-tuple network (the served policy's trees included) costs
# about 40 s, so at 0.1 the run could stop only after 9 x 40 s more of self-play (issue 28)
UNTIL_EVAL_SHARE = 0.25
EVAL_FREE_SECONDS = 5.0  # checkpoint evaluation spent before the share applies
MEMORY_BUDGET = "memory budget"  # why training stopped: the table reached the memory limit


class CannotTrain(ValueError):
    """The request cannot be trained as asked; the message says why."""


def make_learner(game: Game, algorithm: str, *, seed: int = 0,
                 params: dict[str, Any] | None = None) -> Learner:
    """A fresh learner of ``algorithm`` for ``game``, with the game's defaults
    (:mod:`gameai.trainer.learners.defaults`) under ``params``.

    Raises:
        CannotTrain: unknown algorithm, or a board too large for the tables.
        BadParameter: a parameter is unknown or out of range.
    """
    cls = LEARNERS.get(algorithm)
    if cls is None:
        raise CannotTrain(f"unknown algorithm {algorithm!r}: self-play learners are "
                          f"{', '.join(LEARNERS)} (mlp distils a trained table: --teacher)")
    try:
        params_type = cls.params_type_for(game)
    except ValueError as e:
        raise CannotTrain(str(e)) from e
    defaults = defaults_for(game, algorithm, params_type)
    checked: Params = build_params(params_type, {**defaults, **(params or {})})
    try:
        return cls(game, seed=seed, params=checked)
    except ValueError as e:
        raise CannotTrain(str(e)) from e


@dataclass
class Checkpoint:
    games: int
    seconds: float  # training time so far, evaluation excluded
    games_per_second: float  # over the last round
    exploration: float
    evaluation: dict[str, Any]
    opening_values: list[float | None]  # each first move's value (None: not a legal move)

    def to_json(self) -> dict[str, Any]:
        return {"games": self.games, "seconds": round(self.seconds, 4),
                "games_per_second": round(self.games_per_second, 1),
                "exploration": self.exploration, "evaluation": self.evaluation,
                "opening_values": self.opening_values}


@dataclass
class TrainResult:
    model: Model
    evaluation: dict[str, Any]
    history: list[Checkpoint] = field(default_factory=list)
    # "games" | "unbeatable" | "perfect" | "interrupted" | "memory budget"
    stopped: str = "games"
    why: str | None = None  # the reason in words, where the name is not enough
    seconds: float = 0.0  # self-play time, evaluation excluded
    eval_seconds: float = 0.0  # the checkpoints' evaluation
    final_eval_seconds: float = 0.0  # the final model's evaluation
    rounds: int = 0  # rounds played (each one a checkpoint unless the budget skipped it)

    def timing(self) -> dict[str, Any]:
        """Where the time went: self-play, checkpoints, the final evaluation."""
        total = self.seconds + self.eval_seconds + self.final_eval_seconds
        return {"selfplay_seconds": round(self.seconds, 3),
                "checkpoint_seconds": round(self.eval_seconds, 3),
                "final_evaluation_seconds": round(self.final_eval_seconds, 3),
                "checkpoints": len(self.history), "rounds": self.rounds,
                "evaluation_share": round((total - self.seconds) / total, 3) if total else 0.0,
                "checkpoint_share": round(self.eval_seconds / total, 3) if total else 0.0}


def opening_values(model: Model) -> list[float | None]:
    values: list[float | None] = [None] * model.game.cells
    for move in model.evaluate(model.game.initial()).moves:
        values[move.index] = move.value
    return values


def train(learner: Learner, *, games: int, until_unbeatable: bool = False,
          until_perfect: bool = False, eval_every: int | None = None,
          eval_share: float | None = None, random_games: int = TRAINING_RANDOM_GAMES,
          on_round: Callable[[RoundStats, Checkpoint | None], None] | None = None,
          should_stop: Callable[[], bool] | None = None, record_time: bool = True,
          created_at: str | None = None, judge: GateJudge | None = None,
          judge_every: int = 0) -> TrainResult:
    """Train ``learner`` for ``games`` more games, or until unbeatable (or perfect:
    unbeatable and the optimal move everywhere), ``games`` being then the most it may play.

    Args:
        eval_share: evaluate a round only while checkpoints have used at most this share
            of the time (``None``: every round, so the checkpoints are the same on every
            machine).
        on_round: called after every round with its stats and checkpoint (``None`` where
            the budget skipped the evaluation).
        should_stop: asked between rounds; True ends training after the finished round.
        record_time: put the training time into the model's metadata (off for byte-for-byte
            reproducible files).
        created_at: the creation time to record (default: now).
        judge: also judge every checkpoint as served by the solver-based measures of the
            gates (``evaluation["judged"]``: the strength curves against the perfect
            player of ``--plot``), within the same time budget.
        judge_every: judge a checkpoint only once this many games have passed since the
            last judged one (0: every checkpoint); the final model is always judged.
    Raises:
        CannotTrain: ``until_unbeatable`` for a game whose exhaustive test is omitted, or
            ``until_perfect`` for one the solver cannot settle.
    """
    every = eval_every or EVAL_EVERY.get(learner.algorithm, 1000)
    learner.play(0)  # compile first, so the timings are of self-play
    target = learner.games_played + games
    result = TrainResult(learner.export(), {})
    report: dict[str, Any] | None = None
    rate = 0.0
    judged_at = None  # games at the last judged checkpoint
    while learner.games_played < target:
        step = round_games(learner.games_played, every)
        stats = learner.play(min(step, target - learner.games_played))
        result.seconds += stats.seconds
        result.rounds += 1
        point = None
        rate = stats.games_per_second
        if _evaluation_due(result, eval_share):
            started = time.perf_counter()
            model = learner.export()
            report = evaluate(model, random_games=random_games, seed=learner.seed)
            if judge is not None and (judged_at is None or learner.games_played - judged_at
                                      >= judge_every):
                report["judged"] = judge.measures(model, report)
                judged_at = learner.games_played
            point = Checkpoint(learner.games_played, result.seconds, stats.games_per_second,
                               learner.exploration, report, opening_values(model))
            result.history.append(point)
            result.eval_seconds += time.perf_counter() - started
        if on_round is not None:
            on_round(stats, point)
        if report is not None and point is not None:
            # the same functions (of the same evaluator) as the final report's verdicts
            _check_until(learner, report, until_unbeatable or until_perfect, until_perfect)
            if until_perfect and perfect(report):
                result.stopped = "perfect"
                break
            if until_unbeatable and unbeatable(report):
                result.stopped = "unbeatable"
                break
        if should_stop is not None and should_stop():
            result.stopped = "interrupted"
            break
        if learner.full is not None:  # the table may not grow: export what it holds
            result.stopped, result.why = MEMORY_BUDGET, learner.full
            break
    started = time.perf_counter()
    exported = learner.export()
    if result.stopped in ("unbeatable", "perfect") and report is not None:
        # the model the stop rule judged: its figures and verdicts are the final report's
        # (one measure, one computation), against random play with the full game count
        final = with_random_games(exported, report, seed=learner.seed)
    else:
        final = evaluate(exported, seed=learner.seed)
    if judge is not None:
        final["judged"] = judge.measures(exported, final)
    stamp = {"created_at": created_at} if created_at is not None else {}
    taken = round(result.seconds, 3) if record_time else 0.0
    result.model = with_evaluation(
        lambda report: exported.with_info(learner.info(training_seconds=taken,
                                                       evaluation=report, **stamp)), final)
    result.evaluation = result.model.info.evaluation
    result.final_eval_seconds = time.perf_counter() - started
    if not result.history or result.history[-1].games != learner.games_played:
        # the budget skipped the last round's checkpoint: the final evaluation is it
        result.history.append(Checkpoint(learner.games_played, result.seconds, rate,
                                         learner.exploration, final, opening_values(exported)))
    return result


def _evaluation_due(result: TrainResult, share: float | None) -> bool:
    """Whether the round just played gets a checkpoint under the time budget."""
    if share is None:
        return True
    spent = result.eval_seconds
    return spent <= EVAL_FREE_SECONDS or spent <= share * (result.seconds + spent)


def _check_until(learner: Learner, report: dict[str, Any], needs_tree: bool,
                 needs_solver: bool) -> None:
    omitted = report["omitted"]
    if needs_tree and ("losses_as_x" in omitted or "losses_as_o" in omitted):
        raise CannotTrain("--until-unbeatable and --until-perfect need the exhaustive "
                          f"opponent, which is omitted for {learner.game.name}: "
                          f"{omitted.get('losses_as_x') or omitted.get('losses_as_o')}")
    served = report.get("served") or {}
    if needs_tree and "omitted" in served:
        raise CannotTrain("--until-unbeatable and --until-perfect judge the policy a server "
                          f"plays ({served['policy']}), whose exhaustive test is omitted for "
                          f"{learner.game.name}: {served['omitted']}")
    if needs_solver and "optimal_move_rate" in omitted:
        raise CannotTrain("--until-perfect needs the exact solver, which is omitted for "
                          f"{learner.game.name}: {omitted['optimal_move_rate']}")


def round_games(played: int, every: int) -> int:
    """Games until the next evaluation: a quarter of those played so far, from 100 up to
    ``every``, so the curves are dense where learning is fast and the cost stays small."""
    return max(min(every, FIRST_ROUND), min(every, played // 4))


def with_evaluation(build: Callable[[dict[str, Any]], Model], report: dict[str, Any]) -> Model:
    """``build(report)`` with ``model_bytes`` equal to the size of the model carrying it."""
    model = build(report)
    for _ in range(4):  # the size's own digits can change the size: settle it
        size = len(model.to_bytes())
        if report.get("model_bytes") == size:
            break
        report = {**report, "model_bytes": size}
        model = build(report)
    return model
