"""Learning curves over games played, like seed 002's convergence figures.

Three panels share the x axis (games of self-play): the opponent's winning lines against
the model as X and as O (seed 003's test; 0 is unbeatable, drawn on a symlog scale), the
optimal-move rate by the exact solver, and the value of each opening move (seed 002's
figure 4: the centre should stand out). Checkpoints judged as served (``gameai train
--judge-games N``, issue 14) add a fourth: strength against the perfect player (lines lost
by the network with its search where the exhaustive opponent fits; else the score as
first player against the perfect opponent with its 95% band, and against the noisy
solvers). Needs the ``plot`` extra (matplotlib).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from gameai.trainer.training import Checkpoint


class PlotUnavailable(RuntimeError):
    """matplotlib (the ``plot`` extra) is not installed."""


def require_matplotlib() -> ModuleType:
    """``matplotlib.pyplot`` drawing to files (no display), imported now so that a command
    can find out before any work that it will not be able to draw.

    Raises:
        PlotUnavailable: matplotlib is not installed; the message says how to get it.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise PlotUnavailable("plots need matplotlib: pip install 'gameai[plot]' (in a "
                              "checkout: pip install -c constraints.txt -e '.[plot]')") from e
    return plt


def plot_history(history: Sequence[Checkpoint], path: str | Path, *, title: str,
                 cols: int) -> None:
    """Write the learning curves of ``history`` to the image file ``path`` (PNG, or the
    format its suffix names).

    Raises:
        PlotUnavailable: matplotlib is not installed.
        OSError, ValueError: the file cannot be written, or its format is unknown.
    """
    plt = require_matplotlib()
    games = [c.games for c in history]
    judged = [c.evaluation.get("judged") for c in history]
    panels = 4 if any(judged) else 3
    fig, axes = plt.subplots(panels, 1, figsize=(8, 10 + 3 * (panels - 3)), sharex=True)
    ax_loss, ax_opt, ax_open = axes[:3]
    if panels == 4:
        _strength(axes[3], games, judged)
    for side, style in (("x", "-"), ("o", "--")):
        ys = [c.evaluation.get(f"losses_as_{side}") for c in history]
        if any(y is not None for y in ys):
            ax_loss.plot(games, [float("nan") if y is None else y for y in ys], style,
                         label=f"as {side.upper()}")
    ax_loss.set_yscale("symlog", linthresh=1)
    ax_loss.set_ylabel("opponent's winning lines")
    if ax_loss.get_legend_handles_labels()[0]:
        ax_loss.legend()
    else:  # Connect Four: no exhaustive opponent
        ax_loss.text(0.5, 0.5, "not measured: the exhaustive opponent does not fit",
                     ha="center", va="center", transform=ax_loss.transAxes)
    ax_loss.set_title(title)
    rates = [c.evaluation.get("optimal_move_rate") for c in history]
    if any(r is not None for r in rates):
        ax_opt.plot(games, [float("nan") if r is None else 100 * r for r in rates])
    ax_opt.set_ylabel("optimal moves (%)")
    cells = len(history[0].opening_values) if history else 0
    for cell in range(cells):
        ys = [c.opening_values[cell] for c in history]
        label = f"({cell // cols},{cell % cols})"
        ax_open.plot(games, [float("nan") if y is None else y for y in ys], label=label,
                     linewidth=2.5 if _central(cell, cells, cols) else 1.0)
    ax_open.set_ylabel("opening move value")
    axes[-1].set_xlabel("games of self-play")
    if cells <= 16:
        ax_open.legend(ncol=4, fontsize="small")
    for ax in axes:
        ax.grid(alpha=0.3)
    if games and games[-1] > 10 * games[0]:
        ax_open.set_xscale("log")  # checkpoints are spaced geometrically
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def strength_points(judged: Sequence[dict[str, Any] | None], games: Sequence[int]
                    ) -> dict[str, list[tuple[int, float, float, float]]]:
    """Per judged measure, its points ``(games, value, low, high)`` over the checkpoints
    that were judged: losing lines (low = high = value), a rate, or a mean score with its
    95% interval."""
    out: dict[str, list[tuple[int, float, float, float]]] = {}
    for n, report in zip(games, judged, strict=True):
        for m in (report or {}).get("measures", []):
            if m["kind"] == "score":
                point = (n, m["score"]["value"], m["score"]["low"], m["score"]["high"])
            else:
                v = float(m["value"])
                point = (n, v, v, v)
            out.setdefault(m["name"], []).append(point)
    return out


def _strength(ax: Any, games: Sequence[int], judged: Sequence[dict[str, Any] | None]) -> None:
    """The strength curve against the perfect player, as served (with search): the
    exhaustive opponent's lines where it fits, else the score against the perfect and the
    noisy solvers with its 95% band. Each line carries ``gid="strength-NAME"`` in an SVG."""
    policy = next(j["policy"] for j in judged if j)
    points = strength_points(judged, games)
    if "lines_lost" in points:
        lines = points["lines_lost"]
        ax.plot([p[0] for p in lines], [p[1] for p in lines], "o-", gid="strength-lines_lost",
                label=f"lines lost to the exhaustive opponent ({policy})")
        ax.set_yscale("symlog", linthresh=1)
        ax.set_ylabel("lines lost, as X + as O")
    else:
        for name, series in points.items():
            xs, ys, lows, highs = (list(t) for t in zip(*series, strict=True))
            main = name == "vs_perfect_as_x"
            ax.plot(xs, ys, "o-" if main else ".--", linewidth=2.0 if main else 1.0,
                    gid=f"strength-{name}", label=name.replace("_", " "))
            if main:
                ax.fill_between(xs, lows, highs, alpha=0.2)
        ax.set_ylim(-0.02, 1.02)
        ax.set_ylabel(f"score, {policy} (1 win, 1/2 draw)")
    ax.set_title("strength against the perfect player, as served", fontsize="medium")
    ax.legend(fontsize="small")


def _central(cell: int, cells: int, cols: int) -> bool:
    rows = cells // cols
    return cell // cols in ((rows - 1) // 2, rows // 2) and cell % cols in ((cols - 1) // 2,
                                                                             cols // 2)
