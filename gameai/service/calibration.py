"""The measured strength of each level of play, as the server shows it.

``gameai bench levels --game G --save`` (:mod:`gameai.trainer.evaluation.calibrate`) records a
game's figures
in ``levels.json`` beside this module; the server reads the file once at start and shows a
game's figures with its levels (``GET /v1/games/{game}/levels``, ``ListLevels``, the web
board's level picker). A game without figures still has its levels, only not their
measured strength.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from gameai.models.levels import LEVELS, Level

log = logging.getLogger("gameai.service")

CALIBRATION_FILE = Path(__file__).parent / "levels.json"


def load_calibration(path: Path = CALIBRATION_FILE) -> dict[str, dict[str, Any]]:
    """Every calibrated game's report by game name; empty (and logged) if the file cannot
    be read."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        log.warning("cannot read the levels' calibration %s: %s", path, e)
        return {}
    return data if isinstance(data, dict) else {}


def summary(level: dict[str, Any], report: dict[str, Any] | None = None) -> str:
    """One level's figures in words, as the level picker shows them (``report``, the
    game's: whether its perfect opponent was a search, and how much of it was proved)."""
    def pct(tally: dict[str, Any], rate: str) -> str:
        return f"{round(100 * tally[rate]['value'])}%"

    random, perfect = level["random"], level["perfect"]
    opponent = "perfect play"
    how = (report or {}).get("perfect_opponent", {})
    if how.get("solver") == "search":
        opponent = (f"the solver's search (perfect in {round(100 * how['proved_share'])}% "
                    "of its moves)")
    return (f"wins {pct(random['X'], 'win_rate')} of games against a random player as X, "
            f"{pct(random['O'], 'win_rate')} as O; against {opponent} it loses "
            f"{pct(perfect['X'], 'loss_rate')} as X, {pct(perfect['O'], 'loss_rate')} as O")


def markdown(report: dict[str, Any]) -> str:
    """A game's calibration as the Markdown table docs/levels.md shows (``gameai bench
    levels --markdown``)."""
    model = report["model"]
    searched = f" searched {report['depth']} deep" if report.get("depth") is not None else ""
    lines = [f"**{report['game']}** ({model.get('algorithm', '?')} model{searched}; "
             f"{report['games']:,} games per cell, seed {report['seed']}, load "
             f"{report['load_average'][0]}): won / drawn / lost, %",
             "",
             "| level | vs perfect as X | vs perfect as O | vs random as X | vs random as O "
             "| score (95%) |",
             "|---|---|---|---|---|---|"]
    for name in (n for n in LEVELS if n in report["levels"]):  # the file sorts them by name
        level = report["levels"][name]
        cells = []
        for opponent in ("perfect", "random"):
            for side in ("X", "O"):
                t = level[opponent][side]
                cells.append(" / ".join(str(round(100 * t[k]["value"]))
                                        for k in ("win_rate", "draw_rate", "loss_rate")))
        s = level["score"]
        lines.append(f"| `{name}` | " + " | ".join(cells) +
                     f" | {s['value']:.3f} ({s['low']:.3f}-{s['high']:.3f}) |")
    order = ", ".join(f"{o['upper']} > {o['lower']} by {o['difference']['value']:+.3f} "
                      f"({o['difference']['low']:+.3f} to {o['difference']['high']:+.3f})"
                      for o in report["order"])
    verdict = ("ordered" if not report["unordered"]
               else f"NOT ordered: {', '.join(report['unordered'])}")
    lines += ["", f"Levels {verdict}: {order}."]
    perfect = report.get("perfect_opponent", {})
    if perfect.get("solver") == "search":
        lines.append(f"The perfect opponent is the search, {perfect['time_limit']:g} s a "
                     f"position: {100 * perfect['proved_share']:.1f}% of its "
                     f"{perfect['moves']:,} moves proved optimal, the others the move with the "
                     "best proved bound.")
    return "\n".join(lines)


def level_entries(levels: tuple[Level, ...], report: dict[str, Any] | None,
                  applies: bool = True) -> list[dict[str, Any]]:
    """Each level as the APIs show it: its policy and, where measured, its figures
    (``calibration``) and their ``summary`` in words. Figures measured with another model
    than the one served (``applies`` false) are never shown as the served one's: the
    summary says whose they are."""
    out = []
    for level in levels:
        entry = level.to_json()
        measured = (report or {}).get("levels", {}).get(level.name)
        if measured:
            entry["calibration"] = measured
            entry["summary"] = summary(measured, report) if applies else (
                f"measured with another model ({_whose(report or {})}), not the version "
                f"served now: it {summary(measured, report)}")
            entry["calibration_applies"] = applies
        out.append(entry)
    return out


def _whose(report: dict[str, Any]) -> str:
    model = report.get("model") or {}
    games = model.get("games_played")
    trained = f", {games:,} games" if games else ""
    return f"{model.get('algorithm', '?')}{trained}, made {model.get('created_at', '?')}"


def measured_how(report: dict[str, Any] | None) -> dict[str, Any] | None:
    """How a calibration was measured: the report without the levels' figures."""
    if not report:
        return None
    return {k: v for k, v in report.items() if k != "levels"}
