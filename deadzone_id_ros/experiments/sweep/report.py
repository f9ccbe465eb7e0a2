"""The sweep's results (typed, JSON round trip) and its one table: report.json, report.md and a plot of the mean test
RMSE against alpha and data fraction per method (plots/rmse_vs_alpha.png)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...jsonrecord import JsonRecord
from ...training.evaluate import json_clean

__all__ = ["CELL_FILE", "CellMethod", "SweepCell", "SweepReport", "write_sweep_report"]

#: Each finished or failed cell's own record, in its folder (cells/<key>/cell.json).
CELL_FILE = "cell.json"


@dataclass
class CellMethod(JsonRecord):
    """One method's figures in one cell (from the cell's report.json).

    Attributes:
        rmse_mean: test torque RMSE [N·m, or the data's torque unit], mean over joints and seeds (None: not measured).
        rmse_mean_std: its std over seeds.  usable_fraction: share of (sample, joint) pairs the method trains on.
    """

    rmse_mean: float | None
    rmse_mean_std: float | None
    usable_fraction: float


@dataclass
class SweepCell(JsonRecord):
    """One cell: a data set x an alpha x a data fraction, all methods x seeds.

    Attributes:
        key: the cell's name and folder (cells/<key>).  data / alpha / fraction: its place in the grid.
        status: "done" or "failed".  seconds: wall time of the cell [s] (with Ray: from submission).
        error: why it failed ("" when done).  pick: the method its compare picked ("" when none).
        methods: {method: figures}.  unit: the torque unit of the RMSE.
        settings: fingerprint of what decided the cell (training configuration, methods, data set): a re-run skips
            the cell only when it is unchanged.
    """

    key: str
    data: str
    alpha: float
    fraction: float
    status: str
    seconds: float
    error: str = ""
    pick: str = ""
    unit: str = "N·m"
    methods: dict[str, CellMethod] = field(default_factory=dict)
    settings: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The cell's JSON form (``dataclasses.asdict``, NaN as null)."""
        return json_clean(dataclasses.asdict(self))


@dataclass
class SweepReport(JsonRecord):
    """The whole sweep: every cell (grid order), how it ran, what was skipped as finished earlier.

    Attributes:
        cells: one record per cell.  engine: "local" or "ray".  seconds: wall time of this run [s].
        ran / skipped / failed: cell keys run now, found finished and skipped, failed now.
    """

    cells: list[SweepCell]
    engine: str
    seconds: float
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """report.json (``dataclasses.asdict``, NaN as null)."""
        return json_clean(dataclasses.asdict(self))


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.4f}"


def _markdown(report: SweepReport) -> str:
    methods = sorted({m for c in report.cells for m in c.methods})
    unit = next((c.unit for c in report.cells if c.status == "done"), "N·m")
    lines = ["# Sweep", "",
             f"{len(report.cells)} cells ({len(report.ran)} run now on the {report.engine} engine, "
             f"{len(report.skipped)} finished earlier and skipped, {len(report.failed)} failed) in "
             f"{report.seconds:.1f} s. Mean test RMSE over joints ± std over seeds [{unit}]; each cell's own report "
             "is in cells/<cell>/report.md.", "",
             "| cell | data | alpha | fraction | " + " | ".join(methods) + " | pick | s |",
             "|---|---|---|---|" + "---|" * len(methods) + "---|---|"]
    for c in report.cells:
        if c.status != "done":
            figures = [f"failed: {c.error.splitlines()[0] if c.error else '?'}"] + [""] * (len(methods) - 1)
        else:
            figures = [f"{_fmt(e.rmse_mean)} ± {_fmt(e.rmse_mean_std)}" if (e := c.methods.get(m)) else "—"
                       for m in methods]
        link = f"[{c.key}](cells/{c.key}/report.md)" if c.status == "done" else c.key
        lines.append(f"| {link} | {c.data} | {c.alpha:g} | {c.fraction:g} | " + " | ".join(figures)
                     + f" | {c.pick} | {c.seconds:.0f} |")
    return "\n".join(lines + ["", "![RMSE against alpha](plots/rmse_vs_alpha.png)", ""])


def _plot(report: SweepReport, path: Path) -> None:
    """One panel per method: mean test RMSE against alpha, one line per (data set, fraction), seed std as bars."""
    from ..compare.plots import _pyplot, _save

    done = [c for c in report.cells if c.status == "done"]
    methods = sorted({m for c in done for m in c.methods})
    plt = _pyplot()
    fig, axes = plt.subplots(1, max(len(methods), 1), figsize=(4.0 * max(len(methods), 1), 3.4), squeeze=False,
                             sharey=True)
    for ax, m in zip(axes[0], methods):
        for data, frac in sorted({(c.data, c.fraction) for c in done}):
            pts = sorted((c.alpha, e.rmse_mean, e.rmse_mean_std or 0.0) for c in done if (c.data, c.fraction) ==
                         (data, frac) and (e := c.methods.get(m)) is not None and e.rmse_mean is not None)
            if pts:
                xs, ys, es = zip(*pts)
                ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=f"{data}, {frac:.0%} of data")
        ax.set_title(m)
        ax.set_xlabel("alpha (dead-zone threshold / velocity std)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"test RMSE [{done[0].unit if done else 'N·m'}]")
    axes[0][0].legend(fontsize=7)
    _save(fig, path, 110)


def write_sweep_report(out: str | Path, report: SweepReport) -> None:
    """Write ``out``/report.json, report.md and plots/rmse_vs_alpha.png."""
    out = Path(out)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    (out / "report.md").write_text(_markdown(report))
    _plot(report, out / "plots" / "rmse_vs_alpha.png")
