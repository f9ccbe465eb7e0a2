"""Reports in one place: the comparison's report.md (tables, verdict) and the number formatting every report
shares. Everything here reads the typed results of :mod:`.compare.results`; the demo's and demo-real's report.md are in
:mod:`.demo.report`, the plots in :mod:`.compare.plots`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...models.methods import CONSISTENT_RIGID_BODY, CONSTANT, GRAVITY, method_with_role
from ...training.blocks import MISSING
from .pick import PREDICTABLE_RATIO
from .pick_report import fraction_cell, pick_section
from .plots import compare_plots
from .results import CONV, NAIVE_M, PROP, RIGID, CompareReport, DataDiagnosis, MethodResult

if TYPE_CHECKING:
    from ...training.fit import Stacked

__all__ = ["baseline_lines", "compare_markdown", "data_origin", "efficiency_reading", "fmt_joints", "num", "verdict",
           "write_report"]


def write_report(out: Path, report: CompareReport, test: Stacked, preds: dict[str, np.ndarray],
                 band: Any = None) -> int:
    """Draw the plots into ``out``/plots and write ``out``/report.md; returns the number of plots."""
    plots = compare_plots(out / "plots", report, test, preds, band)
    (out / "report.md").write_text(compare_markdown(report, plots))
    return len(plots)


def _fmt(v: object, std: object = None, digits: int = 4) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return MISSING
    s = f"{v:.{digits}f}"
    if std is not None and isinstance(std, (int, float)) and math.isfinite(std):
        s += f" ± {std:.{digits}f}"
    return s


def fmt_joints(values: Sequence[float | None], scale: float = 1.0, digits: int = 3) -> str:
    """Per-joint values joined by " / " (None: n/a), each times ``scale``."""
    return " / ".join("n/a" if v is None else f"{v * scale:.{digits}f}" for v in values)


def num(v: float | None, spec: str) -> str:
    """``v`` formatted with ``spec``, or "n/a" for None."""
    return "n/a" if v is None else format(v, spec)


def mean_std(mean: float | None, std: float | None, n_seeds: int, spec: str) -> str:
    """``mean ± std`` over ``n_seeds`` seeds, each formatted with ``spec``; ``mean (1 seed)`` for one seed, where a
    spread of 0 would only say that nothing was repeated."""
    if n_seeds <= 1:
        return f"{num(mean, spec)} (1 seed)"
    return f"{num(mean, spec)} ± {num(std, spec)}"


def data_origin(simulator: bool | None) -> str:
    """What the report calls its data, from the comparison's simulator flag (True: this project's simulator)."""
    if simulator:
        return "simulated arm (this project's simulator)"
    return "recorded data, not marked as simulator data (no noise floor, friction band unknown)"


# --- compare: report.md ---------------------------------------------------------------------------------------------

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
        lines.append(f"| {n} | {_fmt(float(dz.dead_zone.sigma[j]))} | {_fmt(float(dz.dead_zone.threshold[j]))} | "
                     f"{_fmt(dz.moving_fraction_train_per_joint[j], digits=3)} | "
                     f"{_fmt(dz.moving_fraction_test_per_joint[j], digits=3)} |")
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
        cells = " | ".join(_fmt(v, s) for v, s in zip(e.rmse_per_joint, e.rmse_per_joint_std))
        lines.append(f"| {m} | {e.usable_fraction:.1%} | {cells} | {_fmt(e.rmse_mean, e.rmse_mean_std)} | "
                     f"{_fmt(e.nrmse_mean, digits=3)} |")
    if nf:
        cells = " | ".join(_fmt(v) for v in nf.rmse_per_joint)
        lines.append(f"| noise floor (simulator ID) | — | {cells} | {_fmt(nf.rmse_mean)} | "
                     f"{_fmt(float(np.nanmean([v for v in nf.nrmse_per_joint if v is not None])), digits=3)} |")
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
        cells = " | ".join(_fmt(de.curves[m].rmse_mean[i], de.curves[m].rmse_mean_std[i]) for m in dm)
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
    ranked = sorted((m for m in ms if ms[m].rmse_mean is not None), key=lambda m: _num(ms[m].rmse_mean))
    if PROP in ms and ranked and ranked[0] != PROP:
        out.append(f"The table compares masked with conventional only: on the full training set {ranked[0]} has "
                   f"the lowest test error ({_fmt(ms[ranked[0]].rmse_mean)} vs masked {_fmt(ms[PROP].rmse_mean)} "
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
        row = f"| {m} | " + " | ".join(_fmt(v) for v in e.dead_zone.rmse_vs_measured_per_joint)
        if nf:
            row += " | " + " | ".join(_fmt(v, digits=2) for v in e.dead_zone.pred_within_band_per_joint or [])
        lines.append(row + " |")
    if nf and nf.measured_within_band_per_joint:
        lines.append("| (measured torque) | " + " | ".join("—" for _ in names) + " | "
                     + " | ".join(_fmt(v, digits=2) for v in nf.measured_within_band_per_joint) + " |")
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
              "`noise_floor.rmse_per_joint`, `data_efficiency`, `pick`, `data_diagnosis`); the model to deploy is in "
              f"`pick/`. Total time: {report.seconds:.0f} s.", ""]
    return "\n".join(lines)


def _num(value: float | None) -> float:
    """A figure that may be missing (None: no moving test pair) as a float, NaN when missing."""
    return float("nan") if value is None else float(value)


# --- compare: the verdict -------------------------------------------------------------------------------------------

def _worse_than(report: CompareReport, ref: str) -> list[tuple[str, float, bool]]:
    """(method, its mean test RMSE over ``ref``'s - 1, beyond twice the seed spread) of every other method whose
    mean test RMSE is above ``ref``'s."""
    ms = report.methods
    r = ms[ref]
    out = []
    for m, e in ms.items():
        if m == ref or e.rmse_mean is None or r.rmse_mean is None or not e.rmse_mean > r.rmse_mean:
            continue
        spread = 2 * math.hypot(e.rmse_mean_std or 0.0, r.rmse_mean_std or 0.0)
        out.append((m, e.rmse_mean / max(r.rmse_mean, 1e-300) - 1, e.rmse_mean - r.rmse_mean > spread))
    return out


def baseline_lines(report: CompareReport) -> list[str]:
    """The verdict's plain words on the simple references: every method worse than the constant baseline (each
    joint's mean training torque) and every method worse than the identified rigid body, by name, on the mean test
    RMSE; and the URDF's gravity torque and the physically consistent rigid body where they ran."""
    ms, unit = report.methods, report.torque_unit
    out: list[str] = []
    const, rigid = method_with_role(CONSTANT), RIGID
    for ref, what in ((const, "the constant baseline (predicting each joint's mean training torque)"),
                      (rigid, "the identified rigid body alone")):
        if not ref or ref not in ms or ms[ref].rmse_mean is None:
            continue
        worse = [w for w in _worse_than(report, ref) if not (ref == rigid and w[0] == const)]
        if not worse:
            out.append(f"No method is worse than {what} ({ref}, {_fmt(ms[ref].rmse_mean)} {unit}).")
            continue
        names = ", ".join(f"{m} ({rel:+.0%}{'' if clear else ', within twice the seed spread'})"
                          for m, rel, clear in worse)
        out.append(f"**Worse than {what}** ({ref}, {_fmt(ms[ref].rmse_mean)} {unit} mean test RMSE): {names}. "
                   + ("A model worse than a constant has learned nothing that holds on the held-out blocks; do not "
                      "deploy it." if ref == const else
                      "Their learned part costs accuracy here; the rigid body alone is the better model."))
    grav, cons = method_with_role(GRAVITY), method_with_role(CONSISTENT_RIGID_BODY)
    if grav in ms and ms[grav].rmse_mean is not None:
        out.append(f"The URDF's gravity torque alone ({grav}, nothing fitted) reaches {_fmt(ms[grav].rmse_mean)} "
                   f"{unit}.")
    if cons in ms and ms[cons].rmse_mean is not None and rigid in ms and ms[rigid].rmse_mean is not None:
        out.append(f"The physically consistent rigid body ({cons}) reaches {_fmt(ms[cons].rmse_mean)} {unit} "
                   f"against {_fmt(ms[rigid].rmse_mean)} {unit} for the unconstrained {rigid}.")
    return out


def _masked_vs_conventional(report: CompareReport) -> list[str]:
    a, b = report.methods[PROP], report.methods[CONV]
    a_mean, b_mean = _num(a.rmse_mean), _num(b.rmse_mean)
    out: list[str] = []
    diff = (b_mean - a_mean) / b_mean if b_mean else float("nan")
    noise = math.hypot(a.rmse_mean_std or 0.0, b.rmse_mean_std or 0.0)
    one_seed = len(a.seeds or []) < 2 or len(b.seeds or []) < 2
    clear = not one_seed and abs(b_mean - a_mean) > 2 * noise
    if one_seed:
        out.append("One training seed only (--quick): there is no seed-to-seed spread to judge differences by.")
    dz = report.dead_zone
    const = method_with_role(CONSTANT)
    c_mean = _num(report.methods[const].rmse_mean) if const in report.methods else float("nan")
    if diff > 0 and clear:
        out.append(f"The masked (dead-zone) loss is {diff:.1%} more accurate than the conventional method "
                   "(beyond twice the seed-to-seed spread), while learning from "
                   f"{a.usable_fraction:.0%} of the pairs instead of {b.usable_fraction:.0%} of the samples"
                   + (f"; but both are worse than the constant baseline ({const}), so neither is worth deploying."
                      if a_mean > c_mean else "."))
    elif diff > 0:
        out.append(f"Masked and conventional are not clearly different here: masked is {diff:.1%} lower, but "
                   + ("one seed cannot show whether that is more than seed-to-seed variation" if one_seed else
                      "within twice the seed-to-seed spread")
                   + f" (it learns from {a.usable_fraction:.0%} of the pairs, conventional from "
                   f"{b.usable_fraction:.0%} of the samples).")
    else:
        spread = ("one seed: no spread to judge by" if one_seed else
                  f"{'beyond' if clear else 'within'} twice the seed-to-seed spread")
        out.append(f"The masked loss does NOT beat the conventional method here ({-diff:.1%} worse, {spread}).")
        why = []
        if dz.all_moving_fraction_train > 0.6:
            why.append(f"most samples have every joint moving ({dz.all_moving_fraction_train:.0%}), so "
                       "dropping the others costs little data")
        if report.data.samples.train > 50000:
            why.append("the training set is large, so the extra data of the masked loss adds little; see the "
                       "data-efficiency table for the small-data regime")
        out.append("Why: " + ("; ".join(why) if why else "the extra pairs the masked loss uses come from "
                   "samples where another joint is stuck, whose other inputs may be less informative; compare the "
                   "data-efficiency table") + ".")
    return out


def _mse_all_lines(masked: MethodResult, mse_all: MethodResult, diagnosis: DataDiagnosis | None) -> list[str]:
    """mse_all against masked on moving pairs and, when mse_all is not worse, whether stuck torques are predictable:
    the verdict of ``diagnosis`` (the report's one answer, :func:`~.compare.pick.diagnose_stuck`)
    when there is one, else mse_all's own stuck / moving ratio against the same threshold."""
    a, c = _num(masked.rmse_mean), _num(mse_all.rmse_mean)
    spread = 2 * math.hypot(masked.rmse_mean_std or 0.0, mse_all.rmse_mean_std or 0.0)
    seeds_ok = len(masked.seeds or []) >= 2 and len(mse_all.seeds or []) >= 2
    significant = seeds_ok and abs(c - a) > spread
    caveat = ("" if significant else " (not beyond twice the seed-to-seed spread)" if seeds_ok else
              " (one seed: no spread to judge by)")
    out = [f"Plain MSE on all samples (stuck labels included) has {(c - a) / a:+.1%} error relative to "
           "masked" + caveat + ": "
           + ("the stuck labels hurt, as the paper predicts." if c > a and significant else
              "no clear effect of the stuck labels here." if not significant else
              "here the stuck labels did not hurt on moving pairs.")]
    if c <= a:
        dz_err = mse_all.dead_zone.rmse_vs_measured_per_joint
        pairs = [(d, m) for d, m in zip(dz_err, mse_all.rmse_per_joint) if d is not None and m is not None and m > 0]
        if pairs:
            ratio = float(np.mean([d / m for d, m in pairs]))
            line = (f"Inside the dead zone mse_all's error against the measured torque is {ratio:.2f}× its error on "
                    "moving pairs (mean over joints). ")
            if diagnosis is not None:
                line += ("As the diagnosis below finds, the torques recorded while a joint is stuck are predictable "
                         "here, so masking them only discards data." if diagnosis.stuck_predictable else
                         "The diagnosis below finds the stuck torques not predictable from (q, dq, ddq), yet "
                         "including them did not hurt mse_all on moving pairs.")
            elif ratio <= PREDICTABLE_RATIO:
                line += (f"A ratio at or below {PREDICTABLE_RATIO} means the torques recorded while a joint is stuck "
                         "are as predictable as the others: this torque signal shows no friction band to mask, as "
                         "with a link-side joint-torque sensor, which measures after the gear friction.")
            else:
                line += (f"Above {PREDICTABLE_RATIO} the stuck labels are less predictable, yet including them did "
                         "not hurt the fit on moving pairs.")
            out.append(line)
    return out


def verdict(report: CompareReport) -> list[str]:
    """The written verdict: ranking, a caution when nothing generalizes, masked vs conventional and mse_all, rbd,
    the distance to the noise floor."""
    ms = report.methods
    if not ms:
        return ["No method could be run."]
    out: list[str] = []
    ranking = sorted(ms, key=lambda m: math.inf if ms[m].rmse_mean is None else _num(ms[m].rmse_mean))
    out.append("Ranking by mean test RMSE: " + ", ".join(f"{m} ({_fmt(ms[m].rmse_mean)})" for m in ranking) + ".")
    best_n = min([_num(ms[m].nrmse_mean) for m in ms if ms[m].nrmse_mean is not None], default=None)
    if best_n is not None and best_n >= 0.7:
        out.append(f"**Caution:** the best mean nRMSE is {best_n:.2f}"
                   + (" (worse than predicting each joint's mean torque)" if best_n >= 1 else "")
                   + ": no model generalizes well to the held-out blocks. With "
                   f"{report.data.samples.train} training samples for {len(report.joint_names)} joints "
                   "the test blocks visit states the training blocks do not cover, so the differences between "
                   "methods below say little about the loss functions.")
    out += baseline_lines(report)
    if PROP in ms and CONV in ms:
        out += _masked_vs_conventional(report)
    if NAIVE_M in ms and PROP in ms:
        out += _mse_all_lines(ms[PROP], ms[NAIVE_M], report.data_diagnosis)
    if RIGID in ms and PROP in ms:
        out.append(f"The rigid-body model (identified base parameters + friction) reaches {_fmt(ms[RIGID].rmse_mean)} "
                   f"{report.torque_unit} mean RMSE vs {_fmt(ms[PROP].rmse_mean)} for the masked MLP.")
    nf = report.noise_floor
    if nf and nf.rmse_mean:
        best = ranking[0]
        out.append(f"Best method {best} is {_num(report.floor_ratio(best)):.2f}× the simulator's own noise "
                   f"floor ({_fmt(nf.rmse_mean)} {report.torque_unit}).")
        rbd_ratio = report.floor_ratio(RIGID)
        if rbd_ratio is not None:
            out.append(f"rbd (identified) is {rbd_ratio:.2f}× the noise floor.")
    return out

