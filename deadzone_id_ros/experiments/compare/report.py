"""The comparison's report.md (data and dead zone, accuracy, data efficiency, inside the dead zone, plots) from the
typed results of :mod:`.compare.results`; its verdict is :mod:`.compare.verdict`, the number formatting every report
shares :mod:`.compare.formatting` (both re-exported here), the demo's and demo-real's report.md :mod:`.demo.report`, the
plots :mod:`.compare.plots`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...training.blocks import MISSING
from .formatting import as_float, data_origin, fmt, fmt_joints, mean_std, num
from .pick_report import fraction_cell, pick_section
from .plots import Band, compare_plots
from .results import CONV, PROP, CompareReport
from .verdict import baseline_lines, verdict

if TYPE_CHECKING:
    from ...training.fit import Stacked

__all__ = ["baseline_lines", "compare_markdown", "data_origin", "efficiency_reading", "fmt_joints", "mean_std", "num",
           "verdict", "write_report"]


def write_report(out: Path, report: CompareReport, test: Stacked, preds: dict[str, np.ndarray],
                 band: Band | None = None) -> int:
    """Draw the plots into ``out``/plots and write ``out``/report.md; returns the number of plots."""
    plots = compare_plots(out / "plots", report, test, preds, band)
    (out / "report.md").write_text(compare_markdown(report, plots))
    return len(plots)


def _dead_zone_section(report: CompareReport) -> list[str]:
    names, dz, data, cfg = report.joint_names, report.dead_zone, report.data, report.config
    src = ", ".join(f"`{s.path}`" for s in data.sources) or "(in-memory episodes)"
    rule = (f"|dq| > alpha·sigma with alpha = {dz.dead_zone.alpha} (sigma: velocity std on the training split)"
            if dz.dead_zone.alpha is not None else "|dq| exceeds the per-joint thresholds set in the configuration "
            "(dead_zone.absolute_thresholds)")
    lines = [
        f"Data: {src}; {data_origin(data.simulator)}; joints {', '.join(names)}.",
        f"Split by time blocks of {data.split.block_seconds_used} s "
        f"(seed {cfg.split_seed}; {data.split.note}): "
        f"{data.samples.train} train / {data.samples.val} validation / {data.samples.test} test "
        "samples. Nothing was tuned on the test split.",
        "",
        "## The dead zone in this data",
        "",
        f"A joint counts as moving when {rule}. Only those (sample, joint) pairs carry a meaningful torque label.",
        "",
        "| joint | sigma [rad/s] | threshold [rad/s] | moving (train) | moving (test) |",
        "|---|---|---|---|---|",
    ]
    for j, n in enumerate(names):
        lines.append(f"| {n} | {fmt(float(dz.dead_zone.sigma[j]))} | {fmt(float(dz.dead_zone.threshold[j]))} | "
                     f"{fmt(dz.moving_fraction_train_per_joint[j], digits=3)} | "
                     f"{fmt(dz.moving_fraction_test_per_joint[j], digits=3)} |")
    return lines + ["", f"Pairs with r = 1 (what the masked loss uses): **{dz.pairs_moving_fraction_train:.1%}**; "
                    f"samples with every joint moving (what the conventional method keeps): "
                    f"**{dz.all_moving_fraction_train:.1%}** (the paper reports about 70% vs 34%).", ""]


def _accuracy_section(report: CompareReport) -> list[str]:
    names, nf = report.joint_names, report.noise_floor
    lines = ["## Accuracy on held-out samples where the joint moves", "",
             f"Torque RMSE [{report.torque_unit}] on test pairs with r_ij = 1, mean ± std over seeds "
             f"({report.config.seeds} seeds; rbd is deterministic). nRMSE = RMSE / std of the measured torque "
             "of that joint on the same pairs.", ""]
    head = "| method | usable data | " + " | ".join(f"RMSE {n}" for n in names) + " | mean RMSE | mean nRMSE |"
    lines += [head, "|" + "---|" * (len(names) + 4)]
    for m, e in report.methods.items():
        # one seed (or a deterministic fit) has no spread: no "± 0.0000", which would read as a measured zero
        spread = len(e.seeds or []) > 1
        cells = " | ".join(fmt(v, s if spread else None) for v, s in zip(e.rmse_per_joint, e.rmse_per_joint_std))
        lines.append(f"| {m} | {e.usable_fraction:.1%} | {cells} | "
                     f"{fmt(e.rmse_mean, e.rmse_mean_std if spread else None)} | "
                     f"{fmt(e.nrmse_mean, digits=3)} |")
    if nf:
        cells = " | ".join(fmt(v) for v in nf.rmse_per_joint)
        lines.append(f"| noise floor (simulator ID) | — | {cells} | {fmt(nf.rmse_mean)} | "
                     f"{fmt(float(np.nanmean([v for v in nf.nrmse_per_joint if v is not None])), digits=3)} |")
    mn = report.measurement_noise
    if mn:
        cells = " | ".join(fmt(v) for v in mn.rmse_per_joint)
        lines.append(f"| measured torque's white noise (estimate) | — | {cells} | {fmt(mn.rmse_mean)} | "
                     f"{fmt(mn.nrmse_mean, digits=3)} |")
    for m, why in report.skipped_methods.items():
        lines.append(f"| {m} | skipped: {why} |" + " |" * (len(names) + 2))
    missing = report.data.split.missing
    if missing:
        lines += [""] + [f"{MISSING} {joint}: {why}." for joint, why in missing.items()]
    lines += ["", "Usable data: masked/hybrid = fraction of (sample, joint) pairs with r = 1; conventional = fraction "
              "of samples with all joints moving; mse_all = everything (stuck labels included); rbd = per-joint "
              "moving rows.", ""]
    steps = [f"{m} {'/'.join(map(str, e.steps_per_seed))}" for m, e in report.methods.items() if e.steps_per_seed]
    if steps:
        lines += [f"Training steps per network, per seed (each stops when its validation loss has not improved for "
                  f"{report.config.patience} evaluations {report.config.eval_interval} steps apart, "
                  f"at most {report.config.max_steps}): {'; '.join(steps)}.", ""]
    if mn:
        lines += ["The measured torque's white noise is estimated from its second differences, (tau[i-1] - 2 tau[i] + "
                  "tau[i+1]) / sqrt(6) within each test block, on the same pairs (Gasser, Sroka and Jennen-Steinmetz "
                  "1986): no model of the state can predict it, so no method's RMSE goes much below it. A torque "
                  "that changes fast between samples makes the estimate too high, a filtered torque signal too low.",
                  ""]
    if nf:
        lines += [
            "The noise floor is the simulator's own inverse dynamics (exact rigid body, armature, viscous and "
            "dry friction with the configured Stribeck and load terms) evaluated on the same *measured* q, dq, "
            "ddq. It is not zero because ddq is "
            "estimated by Savitzky–Golay filtering, dq is noisy and the torque ripple is not measured; the "
            "distance of each method above it is what remains to learn.",
            "",
        ]
    return lines


def _efficiency_section(report: CompareReport) -> list[str]:
    de = report.data_efficiency
    dm = [m for m in (PROP, CONV) if de is not None and m in de.curves]
    if de is None or not dm:
        return []
    lines = ["## Data efficiency", "",
             f"Mean test RMSE [{report.torque_unit}] when training on a fraction of the training blocks (same "
             "validation and test sets).", "",
             "| fraction | train samples | " + " | ".join(dm) + (" | masked gain |" if len(dm) == 2 else " |"),
             "|" + "---|" * (2 + len(dm) + (len(dm) == 2))]
    for i in range(len(de.fractions)):
        cells = " | ".join(fmt(de.curves[m].rmse_mean[i], de.curves[m].rmse_mean_std[i]) for m in dm)
        gain = ""
        if len(dm) == 2:
            a, b = de.curves[PROP].rmse_mean[i], de.curves[CONV].rmse_mean[i]
            gain = f" {(b - a) / b:+.1%} |" if a is not None and b not in (None, 0) else " n/a |"
        lines.append(f"| {fraction_cell(report, i)} | {de.train_samples[i]} | {cells} |{gain}")
    for m in dm:
        fails = [x for x in de.curves[m].failed if x]
        if fails:
            lines.append(f"\n{m} could not train at some fractions: {fails[0]}")
    return lines + ["", *efficiency_reading(report, dm), ""]


def efficiency_reading(report: CompareReport, methods: Sequence[str]) -> list[str]:
    """What the data-efficiency table says, from its numbers: the gain's sign per fraction (masked vs conventional
    only) and, when another method beats masked on the full test, that method; empty without both curves."""
    de = report.data_efficiency
    if de is None or len(methods) != 2:
        return []
    rows: list[tuple[str, float, float]] = []
    for i in range(len(de.fractions)):
        a, b = de.curves[PROP].rmse_mean[i], de.curves[CONV].rmse_mean[i]
        if a is not None and b is not None:
            rows.append((fraction_cell(report, i), a, b))
    lower = [f for f, a, b in rows if a < b]
    higher = [f for f, a, b in rows if a > b]
    out = ["Gain = (conventional − masked) / conventional: positive where the masked loss has the lower error. "
           + (f"Masked is lower at {len(lower)} of {len(rows)} training shares"
              + (f" ({', '.join(lower)})" if lower and higher else "")
              + (f", conventional at {len(higher)} ({', '.join(higher)})" if higher else "") + "."
              if rows else "No training share has both errors.")]
    ms = report.methods
    ranked = sorted((m for m in ms if ms[m].rmse_mean is not None), key=lambda m: as_float(ms[m].rmse_mean))
    if PROP in ms and ranked and ranked[0] != PROP:
        out.append(f"The table compares masked with conventional only: on the full training set {ranked[0]} has "
                   f"the lowest test error ({fmt(ms[ranked[0]].rmse_mean)} vs masked {fmt(ms[PROP].rmse_mean)} "
                   f"{report.torque_unit}).")
    return out


def _inside_dead_zone_section(report: CompareReport) -> list[str]:
    names, nf = report.joint_names, report.noise_floor
    lines = ["## Inside the dead zone", "",
             "While a joint is stuck its measured torque can be anything in the friction band, so no model can "
             "match it; a good model stays near the band (on simulator data the band is known: rigid-body + viscous "
             "torque ± (static friction + the exact model's RMSE on moving pairs, for measurement noise)). RMSE "
             f"against the measured torque on stuck test pairs [{report.torque_unit}]"
             + (", and the fraction of predictions inside the band:" if nf else ":"), ""]
    head = "| method | " + " | ".join(f"{n} RMSE" for n in names)
    if nf:
        head += " | " + " | ".join(f"{n} in band" for n in names)
    lines += [head + " |", "|" + "---|" * (1 + len(names) * (2 if nf else 1))]
    for m, e in report.methods.items():
        row = f"| {m} | " + " | ".join(fmt(v) for v in e.dead_zone.rmse_vs_measured_per_joint)
        if nf:
            row += " | " + " | ".join(fmt(v, digits=2) for v in e.dead_zone.pred_within_band_per_joint or [])
        lines.append(row + " |")
    if nf and nf.measured_within_band_per_joint:
        lines.append("| (measured torque) | " + " | ".join("—" for _ in names) + " | "
                     + " | ".join(fmt(v, digits=2) for v in nf.measured_within_band_per_joint) + " |")
    return lines + [""]


def compare_markdown(report: CompareReport, plots: list[str]) -> str:
    """The comparison's report.md: data and dead zone, accuracy, verdict, data efficiency, inside the dead zone,
    plots (paths relative to the report) and how to reproduce."""
    lines: list[str] = ["# Dead-zone loss comparison", ""]
    lines += _dead_zone_section(report)
    lines += _accuracy_section(report)
    lines += ["## Verdict", ""] + verdict(report) + [""]
    lines += pick_section(report)
    lines += _efficiency_section(report)
    lines += _inside_dead_zone_section(report)
    if plots:
        lines += ["## Plots", ""] + [f"![{p}]({p})" for p in plots] + [""]
    lines += ["## How to reproduce", "",
              f"Models of seed {report.config.seed} are in `models/<method>/` (load with "
              "`deadzone_id_ros.models.load_artifact`); every number above is in `report.json` under stable keys "
              "(`methods.<name>.rmse_per_joint`, `.rmse_mean`, `.validation_rmse_mean`, `.usable_fraction`, "
              "`noise_floor.rmse_per_joint`, `measurement_noise`, `data_efficiency`, `pick`, "
              "`data_diagnosis`); the model to deploy is in "
              f"`pick/`. Total time: {report.seconds:.0f} s.", ""]
    return "\n".join(lines)
