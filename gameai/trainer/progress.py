"""Progress bars for long work: games (or epochs) done, the rate, the ETA and the latest
evaluation, on stderr so a command's stdout stays clean for ``--json``."""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm


class Progress:
    """A tqdm bar; ``total=None`` when the end is not known (``--until-unbeatable``)."""

    def __init__(self, *, total: int | None, unit: str = "game", desc: str = "",
                 enabled: bool = True) -> None:
        self._bar = tqdm(total=total, unit=unit, unit_scale=True, desc=desc, file=sys.stderr,
                         dynamic_ncols=True, disable=not enabled, smoothing=0.3)

    def set_total(self, total: int) -> None:
        """The end, once it is known (the ETA follows from it)."""
        self._bar.total = total
        self._bar.refresh()

    def advance(self, n: int, *, note: str = "") -> None:
        if note:
            self._bar.set_postfix_str(note, refresh=False)
        self._bar.update(n)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def summary(report: dict[str, Any]) -> str:
    """The latest evaluation in a few characters: ``lost X 0 O 4 optimal 97.3%``."""
    parts = []
    if "losses_as_x" in report and "losses_as_o" in report:
        parts.append(f"lost X {report['losses_as_x']:,} O {report['losses_as_o']:,}")
    served = report.get("served") or {}
    if "losses_as_x" in served and "losses_as_o" in served:
        parts.append(f"{served['policy']} lost X {served['losses_as_x']:,} "
                     f"O {served['losses_as_o']:,}")
    if "unbeatable" in report:
        parts.append("unbeatable" if report["unbeatable"] else "beatable")
    if "optimal_move_rate" in report:
        parts.append(f"optimal {100 * report['optimal_move_rate']:.1f}%")
    vs = report.get("vs_random")
    if vs:
        games = sum(vs["as_x"].values()) + sum(vs["as_o"].values())
        lost = vs["as_x"]["loss"] + vs["as_o"]["loss"]
        parts.append(f"vs random lost {100 * lost / max(games, 1):.1f}%")
    return " · ".join(parts)
