"""Learning curves over games played, like seed 002's convergence figures.

Three panels share the x axis (games of self-play): the opponent's winning lines against
the model as X and as O (seed 003's test; 0 is unbeatable, drawn on a symlog scale), the
optimal-move rate by the exact solver, and the value of each opening move (seed 002's
figure 4: the centre should stand out). Needs the ``plot`` extra (matplotlib).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from trainer.training import Checkpoint


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
    fig, (ax_loss, ax_opt, ax_open) = plt.subplots(3, 1, figsize=(8, 10), sharex=True)
    for side, style in (("x", "-"), ("o", "--")):
        ys = [c.evaluation.get(f"losses_as_{side}") for c in history]
        if any(y is not None for y in ys):
            ax_loss.plot(games, [float("nan") if y is None else y for y in ys], style,
                         label=f"as {side.upper()}")
    ax_loss.set_yscale("symlog", linthresh=1)
    ax_loss.set_ylabel("opponent's winning lines")
    ax_loss.legend()
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
    ax_open.set_xlabel("games of self-play")
    if cells <= 16:
        ax_open.legend(ncol=4, fontsize="small")
    for ax in (ax_loss, ax_opt, ax_open):
        ax.grid(alpha=0.3)
    if games and games[-1] > 10 * games[0]:
        ax_open.set_xscale("log")  # checkpoints are spaced geometrically
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def _central(cell: int, cells: int, cols: int) -> bool:
    rows = cells // cols
    return cell // cols in ((rows - 1) // 2, rows // 2) and cell % cols in ((cols - 1) // 2,
                                                                             cols // 2)
