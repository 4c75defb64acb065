"""Learning curves of strength against the perfect player (issue 14, point 6): ``gameai
train --judge-games N --plot FILE.svg`` judges every checkpoint as served and draws the
curve; the SVG's line holds one vertex per judged checkpoint, placed by its value."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

from gameai.cli import main
from gameai.trainer.plot import strength_points


def _vertices(svg: str, gid: str) -> list[tuple[float, float]]:
    """The (x, y) vertices of the path in the group ``gid`` of a matplotlib SVG."""
    group = re.search(rf'<g id="{re.escape(gid)}">\s*<path d="([^"]*)"', svg)
    assert group, f"no line {gid} in the SVG"
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", group.group(1))]
    return list(zip(numbers[::2], numbers[1::2], strict=True))


def _train(tmp_path: Path, capsys, *args: str) -> tuple[dict, str]:
    plot = tmp_path / "curves.svg"
    assert main(["train", "--algorithm", "ntuple", "--seed", "1", "--plot", str(plot),
                 "--json", "--quiet", *args]) == 0
    return json.loads(capsys.readouterr().out), plot.read_text()


def test_the_served_networks_lost_lines_are_drawn_over_games(tmp_path, capsys):
    report, svg = _train(tmp_path, capsys, "--game", "tictactoe", "--games", "400",
                         "--eval-every", "100", "--judge-games", "10")
    judged = report["evaluation"]["judged"]
    assert judged["policy"] == "depth 4" and judged["measures"][0]["name"] == "lines_lost"
    vertices = _vertices(svg, "strength-lines_lost")
    assert len(vertices) == report["checkpoints"] == 4  # 100, 200, 300, 400 games
    xs = [x for x, _ in vertices]
    assert xs == sorted(xs) and len(set(xs)) == 4


def test_connect_four_scores_against_the_perfect_player_are_drawn_with_their_band(
        tmp_path, capsys):
    report, svg = _train(tmp_path, capsys, "--game", "connect-four", "--games", "300",
                         "--eval-every", "100", "--judge-games", "3", "--judge-time", "0.05")
    names = [m["name"] for m in report["evaluation"]["judged"]["measures"]]
    assert names[0] == "vs_perfect_as_x" and len(names) == 4
    for name in names:
        vertices = _vertices(svg, f"strength-{name}")
        assert len(vertices) == report["checkpoints"] == 3
    measure = report["evaluation"]["judged"]["measures"][0]
    assert measure["games"] == 3 and measure["score"]["low"] <= measure["score"]["value"]


def test_strength_points_carry_each_measures_interval():
    judged = [None, {"policy": "depth 2", "measures": [
        {"name": "vs_perfect_as_x", "kind": "score",
         "score": {"value": 0.5, "low": 0.3, "high": 0.7}},
        {"name": "lines_lost", "kind": "lines", "value": 7}]}]
    points = strength_points(judged, [100, 200])
    assert points == {"vs_perfect_as_x": [(200, 0.5, 0.3, 0.7)],
                      "lines_lost": [(200, 7.0, 7.0, 7.0)]}


def test_judge_every_spaces_the_judged_checkpoints(ttt):
    from gameai.trainer.evaluation.judge import GateJudge
    from gameai.trainer.training import make_learner, train

    learner = make_learner(ttt, "ntuple", seed=1)
    result = train(learner, games=3000, eval_every=200, judge=GateJudge(ttt), judge_every=1000)
    judged = [c.games for c in result.history if c.evaluation.get("judged")]
    assert len(judged) >= 3 and len(result.history) > len(judged)
    assert all(b - a >= 1000 for a, b in itertools.pairwise(judged))
    assert result.evaluation.get("judged")  # the final model always is
