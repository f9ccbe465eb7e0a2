"""report.md sections of the pick (which model to deploy and why), the data diagnosis and the band loss."""

from __future__ import annotations

import math

from ..data.effort_units import FIX_HINT
from .compare_results import CompareReport

__all__ = ["band_lines", "fraction_cell", "pick_section"]


def _f(v: float | None, digits: int = 4) -> str:
    return "n/a" if v is None or not math.isfinite(v) else f"{v:.{digits}f}"


def fraction_cell(report: CompareReport, i: int) -> str:
    """The data-efficiency table's fraction cell of row ``i``: "10%", or "10% = 30%" for rows a merge joined."""
    de = report.data_efficiency
    assert de is not None
    merged = de.merged[i] if i < len(de.merged) else []
    if merged:
        return " = ".join(f"{f:.0%}" for f in merged) + f" (same {de.train_blocks[i]} blocks, trained once)"
    return f"{de.fractions[i]:.0%}"


def pick_section(report: CompareReport) -> list[str]:
    """"## Which model to deploy": the pick, the validation errors it was chosen by, its test error, the export,
    and the data diagnosis."""
    p = report.pick
    if p is None:
        return []
    if p.onnx:
        onnx = f", ONNX `{p.onnx}`"
    elif report.torque_unit != "N·m":
        onnx = f", no ONNX: it predicts {report.torque_unit}, not N·m"
    else:
        onnx = ", no network: load it with `load_artifact`"
    lines = ["## Which model to deploy", "",
             f"**Deploy `{p.method}`** (seed {p.seed}, exported to `{p.artifact}/`{onnx}): "
             f"{p.reason}. Its test RMSE, measured after the choice, is **{_f(p.test_rmse_mean)} "
             f"{report.torque_unit}** (nRMSE {_f(p.test_nrmse_mean, 3)}).", "",
             *([f"**The controller refuses this model**: the effort was recorded in {report.torque_unit}, not N·m. "
                f"Train again with {FIX_HINT}.", ""] if report.torque_unit != "N·m" else []),
             "| method | validation RMSE (mean over seeds) | test RMSE |", "|---|---|---|"]
    def val(m: str) -> float:
        v = report.methods[m].validation_rmse_mean
        return math.inf if v is None else v

    order = sorted(report.methods, key=val)
    for m in order:
        e = report.methods[m]
        mark = " **(pick)**" if m == p.method else ""
        lines.append(f"| {m}{mark} | {_f(e.validation_rmse_mean)} | {_f(e.rmse_mean)} |")
    lines += ["", "The pick uses the validation split only; the test column is the honest estimate of what the "
              "picked model will do, not a second chance to choose.", ""]
    d = report.data_diagnosis
    if d is not None:
        lines += ["### Are stuck torques predictable?", "", d.note, ""]
    return lines + band_lines(report)


def band_lines(report: CompareReport) -> list[str]:
    """Whether the band loss helped: band vs masked (and mse_all) mean test RMSE against the seed spread."""
    ms = report.methods
    if "band" not in ms or "masked" not in ms:
        return []
    b, m = ms["band"], ms["masked"]
    if b.rmse_mean is None or m.rmse_mean is None:
        return []
    spread = 2 * math.hypot(b.rmse_mean_std or 0.0, m.rmse_mean_std or 0.0)
    diff = (m.rmse_mean - b.rmse_mean) / m.rmse_mean
    clear = len(b.seeds) >= 2 and len(m.seeds) >= 2 and abs(m.rmse_mean - b.rmse_mean) > spread
    band = b.per_seed[0].train.get("band_halfwidth") or [] if b.per_seed else []
    verdict = ("helps" if diff > 0 and clear else "hurts" if diff < 0 and clear else "makes no clear difference")
    unit = report.torque_unit
    return ["### The band loss", "",
            f"band (stuck pairs penalized only outside ±tau_s,j; tau_s = {', '.join(_f(v, 3) for v in band)} {unit}) "
            f"vs masked: mean test RMSE {_f(b.rmse_mean)} ± {_f(b.rmse_mean_std)} vs {_f(m.rmse_mean)} ± "
            f"{_f(m.rmse_mean_std)} {unit} ({diff:+.1%} in band's favour): the band loss **{verdict}** here "
            + ("(clear = beyond twice the seed-to-seed spread)." if len(b.seeds) >= 2 and len(m.seeds) >= 2 else
               "(one seed: no spread to judge a difference by)."), ""]
