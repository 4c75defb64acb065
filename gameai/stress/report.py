"""What a suite prints: one row per check, with the figure measured, the goal, and
whether it held; plus the figures as JSON for scripts and the machine's load."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Row:
    check: str
    figure: str
    goal: str
    ok: bool


@dataclass
class Report:
    """The rows of one suite run; :attr:`ok` when every check held."""

    suite: str
    command: str
    rows: list[Row] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)
    load_before: float = field(default_factory=lambda: os.getloadavg()[0])

    def check(self, check: str, figure: object, goal: str, ok: bool) -> bool:
        """Add a row; returns ``ok`` so callers can chain."""
        self.rows.append(Row(check, str(figure), goal, bool(ok)))
        return bool(ok)

    def note(self, check: str, figure: object) -> None:
        """A figure reported without a goal (it informs, it cannot fail)."""
        self.rows.append(Row(check, str(figure), "", True))

    @property
    def ok(self) -> bool:
        return all(row.ok for row in self.rows)

    @property
    def failures(self) -> list[Row]:
        return [row for row in self.rows if not row.ok]

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "command": self.command, "ok": self.ok,
                "load_average_before": self.load_before,
                "load_average_after": os.getloadavg()[0], "cpus": os.cpu_count(),
                "rows": [asdict(r) for r in self.rows], "figures": self.figures}

    def render(self) -> str:
        """The table as text: check, figure, goal, and PASS/FAIL."""
        header = ("check", "figure", "goal", "")
        lines = [(r.check, r.figure, r.goal, ("PASS" if r.ok else "FAIL") if r.goal else "")
                 for r in self.rows]
        widths = [min(60, max(len(str(x[i])) for x in [header, *lines])) for i in range(3)]
        out = [f"== gameai stress {self.suite}: {'PASS' if self.ok else 'FAIL'}  "
               f"(reproduce: {self.command})"]
        for row in [header, *lines]:
            out.append("  ".join(str(cell).ljust(w) for cell, w in zip(row, widths, strict=False))
                       + "  " + row[3])
        out.append(f"load average before/after: {self.load_before:.2f}/"
                   f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
        return "\n".join(out)

    def print(self, as_json: bool = False) -> None:
        print(json.dumps(self.to_json(), indent=2, default=str) if as_json else self.render(),
              flush=True)
