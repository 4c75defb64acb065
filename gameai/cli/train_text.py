"""The text ``gameai train``, ``gameai evaluate`` and the trainer's benchmarks print (their
``--json`` prints the same figures as JSON)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gameai.models import Model


_VALUES = {"x_wins": "won by X", "draw": "a draw", "o_wins": "won by O"}


def evaluation_text(model: Model, report: dict[str, Any]) -> str:
    info = model.info
    lines = [f"{model.game.describe()}: {model.kind} model by {info.algorithm}, "
             f"{info.games_played:,} games, {report['model_bytes']:,} bytes"]
    if "losses_as_x" in report and "losses_as_o" in report:
        from gameai.trainer.evaluation.evaluate import unbeatable

        verdict = "unbeatable" if unbeatable(report) else "beatable"
        what = report.get("opponent_counts", "lines")
        lines.append(f"  opponent's winning {what}: as X {report['losses_as_x']:,}, as O "
                     f"{report['losses_as_o']:,} ({verdict}; the game is "
                     f"{_VALUES.get(report.get('game_value', ''), 'unsolved')})")
    served = report.get("served")
    if served is not None:
        if "omitted" in served:
            lines.append(f"  served ({served['policy']}): omitted: {served['omitted']}")
        else:
            lines.append(f"  served ({served['policy']}, what a server plays): opponent's "
                         f"winning lines as X {served['losses_as_x']:,}, as O "
                         f"{served['losses_as_o']:,} (the verdict above is the served one)")
    if "optimal_move_rate" in report:
        positions = report.get("optimal_move_positions")
        every = f"all {positions:,} " if positions else ""
        lines.append(f"  optimal moves: {100 * report['optimal_move_rate']:.2f}% of "
                     f"{every}reachable positions (every orientation counted)")
    for side, r in report["vs_random"].items():
        lines.append(f"  vs random {side.replace('_', ' ')}: {r['win']} won, {r['draw']} "
                     f"drawn, {r['loss']} lost")
    for name, ok in report.get("checks", {}).items():
        lines.append(f"  {name.replace('_', ' ')}: {'yes' if ok else 'NO'}")
    for name, why in report["omitted"].items():
        lines.append(f"  omitted {name}: {why}")
    judged = report.get("judged")
    if judged:
        from gameai.models.info import describe_judged

        lines.append(f"  judged as the gates do, at {judged['policy']}: "
                     f"{describe_judged(judged)}")
    return "\n".join(lines)


def train_text(report: dict[str, Any]) -> str:
    from gameai.trainer.progress import summary

    head = (f"{report['algorithm']} on {report['game']}: {report['games_played']:,} games")
    if "stopped" in report:
        head += (f", stopped: {report['stopped']}, self-play {report['selfplay_seconds']} s "
                 f"({report['games_per_second']:,.0f} games/s)")
    lines = [head, "  " + summary(report["evaluation"])]
    if report.get("why"):
        lines.append(f"  why it stopped: {report['why']}")
    if "checkpoint_seconds" in report:
        lines.append(f"  evaluation: {report['checkpoints']} checkpoints of "
                     f"{report['rounds']} rounds {report['checkpoint_seconds']} s, final "
                     f"{report['final_evaluation_seconds']} s: "
                     f"{100 * report['evaluation_share']:.0f}% of the time")
    if "distillation" in report:
        lines.append("  distillation: " + json.dumps(report["distillation"]))
    if "out" in report:
        lines.append(f"  wrote {report['out']}")
    elif "published" not in report:
        lines.append("  model not saved (use --out FILE or --store URL)")
    if "published" in report:
        lines.append("  published: " + json.dumps(report["published"]))
    if "plot" in report:
        lines.append(f"  plot: {report['plot']}")
    return "\n".join(lines)


def figure_lines(figures: dict[str, Any]) -> str:
    return "\n".join(f"{k:>34}: {v}" for k, v in figures.items())


def learners_text(figures: dict[str, Any]) -> str:
    params = " ".join(f"{k}={v}" for k, v in figures["params"].items()) or "default parameters"
    goal = {"perfect": "perfect (unbeatable, every move optimal)"}.get(
        figures.get("until", "perfect"), "unbeatable as X and O")
    lines = [f"games and time until {goal} on {figures['game']}, {params} (wall: self-play "
             f"and evaluation; load average {figures['load_average']})"]
    for algorithm in ("td", "qlearning", "tally"):
        f = figures.get(algorithm)
        if f is None:
            continue
        reached = figures.get("until", "perfect")
        runs = ", ".join(
            f"seed {r['seed']}: {r['games']:,} games {r['seconds']:.2f} s"
            + (f" (still {reached} 3x later)" if r.get("still_there_at_4x") else
               f" (NOT {reached} 3x later)" if r["reached"] else
               f" (NOT {reached}" + (f": {r['positions_missed']} positions missed)"
                                  if r.get("positions_missed") is not None else ")"))
            for r in f["runs"])
        target = (f"of target {f['target_seconds']:.0f} s " if f["target_seconds"] is not None
                  else "")
        lines.append(f"  {algorithm:>9}: worst {f['worst_seconds']:.2f} s {target}"
                     f"[{'met' if f['met'] else 'MISSED'}]; {runs}")
    for r in figures["mlp"]["runs"]:
        lines.append(f"  mlp (seed {r['seed']} td teacher): {r['student_bytes']:,} bytes vs "
                     f"{r['teacher_bytes']:,}, {r['exceptions']} exceptions, network right "
                     f"{100 * r['network_accuracy']:.1f}%, perfect {r['perfect']}, "
                     f"{r['student_move_us']:.0f} us/move vs {r['teacher_move_us']:.0f}")
    return "\n".join(lines)
