"""The n-tuple worker's gates (issue 14, point 5): solver-based measures of the policy a
server plays, compared with confidence intervals (no regression against production), and
the worker that trains, judges, publishes and promotes n-tuple networks on a real Redis."""

from __future__ import annotations

import logging

import pytest

from gameai.models import NtupleModel
from gameai.models.ntuple import DEFAULT_DEPTH
from gameai.store import ModelStore
from gameai.trainer.evaluation.evaluate import evaluate
from gameai.trainer.evaluation.judge import GateJudge, served_policy
from gameai.trainer.training import make_learner
from gameai.trainer.worker.gates import check_gates, check_judged, compare_measure
from gameai.trainer.worker.main import main
from gameai.trainer.worker.settings import load_settings


def _judged(judge: GateJudge, model):
    report = evaluate(model, random_games=100)
    report["judged"] = judge.measures(model, report)
    return report


@pytest.fixture(scope="module")
def weak_and_strong(ttt):
    """An n-tuple network after 30 games and the exact solver's table, judged by one judge
    in the games mode (perfect and noisy opponents) and one in the exhaustive mode."""
    from gameai.models.oracle import solver_model

    learner = make_learner(ttt, "ntuple", seed=3, params={"tuples": "2", "length": "3"})
    learner.play(30)
    network, strong = learner.export(), solver_model(ttt)
    table = make_learner(ttt, "td", seed=1)  # a table is served as it is: no search
    table.play(40)
    weak = table.export()
    games = GateJudge(ttt, games=60, seed=1, matches=True)
    lines = GateJudge(ttt)
    return {
        "games": (_judged(games, weak), _judged(games, strong), games, weak),
        "lines": (_judged(lines, network), _judged(lines, strong)),
    }


def test_the_served_policy_is_the_network_with_its_default_search(ttt):
    model = make_learner(ttt, "ntuple", seed=1).export()
    policy, name = served_policy(model)
    assert isinstance(policy, NtupleModel) and policy.policy_depth == model.default_depth
    assert name == f"depth {model.default_depth}"


def test_exhaustive_measures_are_exact_and_rank_lines_before_the_rate(weak_and_strong):
    weak, strong = weak_and_strong["lines"]
    names = [m["name"] for m in strong["judged"]["measures"]]
    assert names == ["lines_lost", "optimal_move_rate"]
    lines, rate = strong["judged"]["measures"]
    assert lines["value"] == 0 and rate["value"] == 1.0
    assert weak["judged"]["measures"][1]["value"] < 1.0
    # the strong one passes over the weak one; the weak one regresses
    assert check_judged(strong, {**weak, "optimal_move_rate": 0.5}).passed
    result = check_judged(weak, {**strong, "optimal_move_rate": 0.5})
    assert not result.passed and "a regression against production" in result.reasons[0]


def test_games_measures_carry_intervals_that_tell_models_apart(weak_and_strong):
    weak, strong, judge, model = weak_and_strong["games"]
    names = [m["name"] for m in strong["judged"]["measures"]]
    assert names == [
        "vs_perfect_as_x",
        "vs_noisy_0.1_as_o",
        "vs_noisy_0.2_as_o",
        "vs_noisy_0.3_as_o",
    ]
    perfect_x = strong["judged"]["measures"][0]
    assert (perfect_x["wins"], perfect_x["draws"], perfect_x["losses"]) == (0, 60, 0)
    assert weak["judged"]["measures"][0]["losses"] > 0
    # repeated lines are not independent samples: the band counts distinct lines only
    from gameai.trainer.evaluation.calibrate import Tally

    for m in weak["judged"]["measures"]:
        assert 1 <= m["distinct_games"] <= m["games"] == 60
        naive = Tally(m["wins"], m["draws"], m["losses"]).score_variance
        assert m["variance"] == pytest.approx(naive * 60 / m["distinct_games"])
        assert m["score"]["high"] - m["score"]["low"] >= 2 * 1.959964 * naive**0.5 - 1e-9 or (
            m["score"]["high"] == 1.0 or m["score"]["low"] == 0.0
        )
    # the perfect table is better, the weak network a regression, each against the other
    sign, why = compare_measure(strong["judged"]["measures"][0], weak["judged"]["measures"][0])
    assert sign == 1 and "+-" in why
    imperfect = {**strong, "optimal_move_rate": 0.9}  # not perfect, so it can be replaced
    result = check_gates(weak, imperfect)
    assert not result.passed and "vs_perfect_as_x" in result.reasons[0]
    # the same model judged again by the same judge: the same games, indistinguishable,
    # and a tie keeps production
    again = _judged(judge, model)
    assert again["judged"]["measures"] == weak["judged"]["measures"]
    tie = check_gates(again, {**weak, "optimal_move_rate": 0.9})
    assert not tie.passed and "a tie keeps production" in tie.reasons[0]
    assert weak["judged"]["policy"] == "table"


def test_a_tie_keeps_production_and_a_distinguishable_drop_is_a_regression():
    def score(wins, draws, losses):
        from gameai.trainer.evaluation.calibrate import Tally

        t = Tally(wins, draws, losses)
        return {
            "name": "vs_perfect_as_x",
            "kind": "score",
            **t.to_json(),
            "variance": t.score_variance,
        }

    def report(*measures):
        return {"judged": {"measures": list(measures)}}

    # 52 against 48 wins of 100: the 95% interval of the difference holds 0: a tie, and a
    # tie keeps production
    close = check_judged(report(score(48, 0, 52)), report(score(52, 0, 48)))
    assert not close.passed and "a tie keeps production" in close.reasons[0]
    assert close.comparisons[0]["verdict"] == "same"
    sign, why = compare_measure(score(48, 0, 52), score(52, 0, 48))
    assert sign == 0 and "difference -0.040" in why
    # 30 against 70 wins of 100 is a regression
    assert not check_judged(report(score(30, 0, 70)), report(score(70, 0, 30))).passed
    # no production yet: the first judged candidate passes
    assert check_judged(report(score(0, 0, 100)), None).passed
    # a production judged by other measures cannot be compared
    other = {"judged": {"measures": [{"name": "lines_lost", "kind": "lines", "value": 3}]}}
    assert not check_judged(report(score(90, 0, 10)), other).passed


def _settings(redis_url, **kw):
    base = dict(
        game="connect-four",
        algorithm="ntuple",
        store_url=redis_url,
        store_file=None,
        store_prefix=None,
        data_dir=None,
        publish_every=1000,
        publish_min_seconds=0,
        metrics_port=0,
        host=None,
        from_version=None,
        resume=False,
        promote="auto",
        seed=1,
        params={},
        max_games=2000,
        log_level="warning",
        eval_share=1.0,
        judge_games=4,
        judge_time=0.05,
    )
    return load_settings({**base, **kw})


def test_the_worker_trains_judges_publishes_and_promotes_connect_four(redis_url, caplog):
    caplog.set_level(logging.INFO, logger="gameai.trainer")
    assert main(_settings(redis_url)) == 0
    with ModelStore.from_url(redis_url) as store:
        versions = store.versions(game="connect-four")
        assert versions, caplog.text
        production = store.rollout(game="connect-four").production
        assert production == versions[-1].version  # each promoted as it passed the gates
        judged = versions[-1].evaluation["judged"]
        assert versions[-1].evaluation["gates"]["passed"] is True  # its gates, in its report
        assert judged["policy"] == f"depth {DEFAULT_DEPTH['connect-four']}"
        assert judged["time_limit"] == 0.05
        assert [m["games"] for m in judged["measures"]] == [4, 4, 4, 4]
        model = store.load(game="connect-four", version=production)
        assert isinstance(model, NtupleModel)
        # a restart with another seed resumes from production (adopting its tuples)
        assert main(_settings(redis_url, seed=2, resume=True, max_games=1000)) == 0
        latest = store.versions(game="connect-four")[-1]
    assert f"candidate judged (depth {DEFAULT_DEPTH['connect-four']})" in caplog.text
    assert "warm start from connect-four version" in caplog.text
    assert (
        latest.info["games_played"] > versions[0].info["games_played"]
        or "candidate not published" in caplog.text
    )


def test_judge_settings_are_checked(redis_url):
    from gameai.trainer.worker.settings import SettingsError

    with pytest.raises(SettingsError, match="--judge-time"):
        _settings(redis_url, judge_time=0)
    with pytest.raises(SettingsError, match="--judge-games"):
        _settings(redis_url, judge_games=0)
    assert _settings(redis_url, judge_games=None, judge_time=None).judge_time == 2.0


def test_shadow_gate_settings_are_checked(redis_url):
    from gameai.trainer.worker.settings import SettingsError

    default = _settings(redis_url)
    assert (default.shadow_gate, default.shadow_share) == (0, 100)  # off unless asked
    chosen = _settings(redis_url, shadow_gate=5000, shadow_share=25)
    assert (chosen.shadow_gate, chosen.shadow_share) == (5000, 25)
    with pytest.raises(SettingsError, match="--shadow-share: must be a whole number from 1"):
        _settings(redis_url, shadow_gate=10, shadow_share=0)
    with pytest.raises(SettingsError, match="--shadow-gate"):
        _settings(redis_url, shadow_gate=-1)


def test_judged_measures_become_the_evaluation_gauge(weak_and_strong):
    """The strength curve on the training dashboard: each judged measure is a value of
    ``gameai_trainer_evaluation{metric="judged_..."}``."""
    from prometheus_client import CollectorRegistry

    from gameai.trainer.worker.metrics import TrainerMetrics

    registry = CollectorRegistry()
    metrics = TrainerMetrics(registry, game="tictactoe", algorithm="ntuple")
    weak, strong, _, _ = weak_and_strong["games"]
    metrics.evaluated(weak)

    def sample(metric):
        return registry.get_sample_value(
            "gameai_trainer_evaluation",
            {"game": "tictactoe", "algorithm": "ntuple", "metric": metric},
        )

    perfect_x = weak["judged"]["measures"][0]
    assert sample("judged_vs_perfect_as_x") == perfect_x["score"]["value"] < 0.5
    metrics.evaluated(strong)
    assert sample("judged_vs_perfect_as_x") == 0.5
    assert sample("judged_vs_noisy_0.3_as_o") is not None


def test_the_judge_says_what_it_plays_as_it_goes(ttt):
    """A judgement takes a minute on Connect Four: ``progress`` hears each game of each
    match (what ``/healthz``'s ``activity`` and ``gameai up`` show meanwhile)."""
    from gameai.models.oracle import solver_model

    heard: list[str] = []
    model = solver_model(ttt)
    GateJudge(ttt, games=3, seed=1, matches=True).measures(
        model, evaluate(model, random_games=10), progress=heard.append)
    assert len(heard) == 4 * 3  # four matches of three games
    assert heard[0] == "judging: game 1 of 12 (4 matches; vs_perfect_as_x, local)"
    assert heard[-1] == "judging: game 12 of 12 (4 matches; vs_noisy_0.3_as_o, local)"


def _score(name, wins, draws, losses):
    from gameai.trainer.evaluation.calibrate import Tally

    t = Tally(wins, draws, losses)
    return {"name": name, "kind": "score", **t.to_json(), "variance": t.score_variance}


def test_a_candidate_better_as_x_that_collapsed_as_o_is_held_back():
    """The promotion the issue saw: better against the perfect opponent as X (0/9/91 to
    0/27/73), while against the 0.1-noisy solver as O it fell from 44/51/5 to 0/0/100. The
    first measure no longer decides: every measure is held to production's."""
    production = {"judged": {"measures": [_score("vs_perfect_as_x", 0, 9, 91),
                                          _score("vs_noisy_0.1_as_o", 44, 51, 5)]}}
    collapsed = {"judged": {"measures": [_score("vs_perfect_as_x", 0, 27, 73),
                                         _score("vs_noisy_0.1_as_o", 0, 0, 100)]}}
    result = check_judged(collapsed, production)
    assert not result.passed
    assert [c["verdict"] for c in result.comparisons] == ["better", "worse"]
    assert result.reasons == [f"a regression against production: "
                              f"{result.comparisons[1]['detail']}"]
    assert result.to_json()["comparisons"] == result.comparisons
    # better on one measure and no worse on the other: promoted
    steady = {"judged": {"measures": [_score("vs_perfect_as_x", 0, 27, 73),
                                      _score("vs_noisy_0.1_as_o", 46, 50, 4)]}}
    assert check_judged(steady, production).passed
