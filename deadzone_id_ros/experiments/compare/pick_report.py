"""report.md sections of the pick (which model to deploy and why), the data diagnosis and the band loss."""

from __future__ import annotations

import math

from ...data.effort_units import FIX_HINT
from ...models.methods import BAND, METHODS, method_with_role
from .results import PROP, CompareReport

__all__ = ["band_lines", "fraction_cell", "per_tick_alternative", "pick_section"]


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
    data_warnings = [str(w).rstrip(".") for w in (report.data.loader_report.get("warnings") or [])]
    warn = [f"**Warning:** {w}." for w in [*report.split_warnings, *data_warnings]]
    warn += [""] if warn else []
    p = report.pick
    if p is None:
        return ["## Which model to deploy", "", *warn] if warn else []
    offline = METHODS[p.method].history if p.method in METHODS else False
    if p.onnx:
        onnx = f", ONNX `{p.onnx}`"
    elif offline:
        onnx = ", no ONNX: it reads the joint-state history"
    elif report.torque_unit != "N·m":
        onnx = f", no ONNX: it predicts {report.torque_unit}, not N·m"
    elif p.method in METHODS and METHODS[p.method].per_joint:
        onnx = (", no ONNX: its per-joint network reads the rigid-body torque besides q, dq, ddq; load it with "
                "`load_artifact`")
    else:
        onnx = ", no network: load it with `load_artifact`"
    lines = ["## Which model to deploy", "", *warn,
             f"**{'Best model (offline only)' if offline else 'Deploy'} `{p.method}`** (seed {p.seed}, exported to "
             f"`{p.artifact}/`{onnx}): "
             f"{p.reason}. Its test RMSE, measured after the choice, is **{_f(p.test_rmse_mean)} "
             f"{report.torque_unit}** (nRMSE {_f(p.test_nrmse_mean, 3)}).", "",
             *([f"**The controller refuses this model**: the effort was recorded in {report.torque_unit}, not N·m. "
                f"Train again with {FIX_HINT}.", ""] if report.torque_unit != "N·m" else []),
             _leaving(p.method, p.artifact, per_tick_alternative(report) if offline else None), "",
             f"How sure: {p.confidence}.", "", *_cv_intro(report), *_table(report)]
    chosen = "the validation split only" if p.cv is None else "cross-validation over train+validation blocks only"
    lines += ["", f"The pick uses {chosen}; the test column is the honest estimate of what the "
              "picked model will do, not a second chance to choose.", ""]
    d = report.data_diagnosis
    if d is not None:
        lines += ["### Are stuck torques predictable?", "", d.note, ""]
    return lines + band_lines(report)


def per_tick_alternative(report: CompareReport) -> str | None:
    """What the pick rule (:func:`~.pick.choose_pick`, on cross-validation when the pick used it, else validation,
    a simpler method preferred within the spread) chooses among the methods of ``report`` that a controller can run
    one state per tick (no joint-state history); None when none has a score."""
    from .pick import choose_pick

    p = report.pick
    cv = p.cv if p is not None else None
    keep = [m for m in report.methods if not (m in METHODS and METHODS[m].history)]
    try:
        if cv is not None:
            return choose_pick({m: cv.rmse_mean.get(m) for m in keep}, report.torque_unit,
                               scores={m: cv.rmse_per_fold[m] for m in keep if m in cv.rmse_per_fold},
                               basis="cross-validation").method
        return choose_pick({m: report.methods[m].validation_rmse_mean for m in keep}, report.torque_unit,
                           scores={m: [report.methods[m].validation_rmse_per_seed] for m in keep}).method
    except ValueError:  # no method without history has a score
        return None


def _leaving(method: str, artifact: str, per_tick: str | None = None) -> str:
    """How the picked model runs here and how it leaves the product, for ``method`` (its registry entry);
    ``per_tick``: the best method a controller can run, named when ``method`` cannot be."""
    entry = METHODS.get(method)
    here = (f"The feedforward controller runs it as it is (`model:=learned model_path:={artifact}`). Outside this "
            "product: ")
    if entry is None:
        return here + "see docs/onnx.md."
    if entry.history:
        alternative = f"`{per_tick}` (its model: `models/{per_tick}/`)" if per_tick else \
            "a method without history (none of this comparison has a score)"
        return ("It reads the recent joint states (model.json's `history`), so it is for offline use (analysis, "
                "logs, the torque of a recorded motion: `predict_sequence` of the loaded artifact): the feedforward "
                "controller and the force sensor evaluate one state per tick and refuse it, and ONNX does not carry "
                f"the window. For the controller, deploy {alternative}.")
    if entry.identification == "friction":
        return here + ("its Stribeck and load-dependent friction has no URDF element and no network, so a C++ "
                       "controller cannot run it as is; `deadzone-id export --urdf` takes an rbd_consistent fit "
                       "(docs/identification.md).")
    if entry.rigid_body and entry.loss is None and not entry.baseline:
        return here + ("`deadzone-id export --model DIR --urdf --out FILE` writes it as a URDF when every body is "
                       "physically consistent (fit `rbd_consistent` for that; docs/identification.md).")
    if entry.rigid_body and entry.loss is not None:
        return here + ("its rigid-body part as a URDF (`export --urdf`, consistent bodies only) plus its network "
                       "residual as ONNX (`export --onnx`; the sum is the model)" + (", but a per-joint residual "
                       "takes the rigid-body torques as inputs, which the ONNX format here does not" if entry.per_joint
                       else "") + ".")
    return here + "`deadzone-id export --model DIR --onnx --out FILE` (docs/onnx.md)."


def _cv_intro(report: CompareReport) -> list[str]:
    """The sentence on the cross-validation, when the pick was made by it."""
    cv = report.pick.cv if report.pick is not None else None
    if cv is None:
        return []
    return [f"Chosen by cross-validation because {cv.reason}. Train+validation were cut into {cv.folds} folds of "
            f"contiguous time blocks ({', '.join(map(str, cv.held_out_samples))} held-out samples; the test blocks "
            f"untouched), every method refitted per fold with seeds {cv.seeds}; the CV column is the mean ± std of "
            "the held-out RMSE over folds and seeds.", ""]


def _table(report: CompareReport) -> list[str]:
    """The methods' validation (and cross-validation) and test RMSE, best pick criterion first."""
    p = report.pick
    assert p is not None
    cv = p.cv

    def key(m: str) -> float:
        v = cv.rmse_mean.get(m) if cv is not None else report.methods[m].validation_rmse_mean
        return math.inf if v is None else v

    head = "| method | validation RMSE (mean over seeds) | test RMSE |"
    lines = [head.replace(" | test", " | CV RMSE (mean ± std) | test") if cv else head,
             "|---|---|---|---|" if cv else "|---|---|---|"]
    for m in sorted(report.methods, key=key):
        e = report.methods[m]
        mark = " **(pick)**" if m == p.method else ""
        cv_cell = f" {_f(cv.rmse_mean.get(m))} ± {_f(cv.rmse_std.get(m))} |" if cv else ""
        lines.append(f"| {m}{mark} | {_f(e.validation_rmse_mean)} |{cv_cell} {_f(e.rmse_mean)} |")
    return lines


def band_lines(report: CompareReport) -> list[str]:
    """Whether the band loss helped: band vs masked (and mse_all) mean test RMSE against the seed spread."""
    ms = report.methods
    band_m = method_with_role(BAND)
    if band_m not in ms or PROP not in ms:
        return []
    b, m = ms[band_m], ms[PROP]
    if b.rmse_mean is None or m.rmse_mean is None:
        return []
    spread = 2 * math.hypot(b.rmse_mean_std or 0.0, m.rmse_mean_std or 0.0)
    diff = (m.rmse_mean - b.rmse_mean) / m.rmse_mean
    clear = len(b.seeds) >= 2 and len(m.seeds) >= 2 and abs(m.rmse_mean - b.rmse_mean) > spread
    band = (b.per_seed[0].train.band_halfwidth or []) if b.per_seed else []
    verdict = ("helps" if diff > 0 and clear else "hurts" if diff < 0 and clear else "makes no clear difference")
    unit = report.torque_unit
    return ["### The band loss", "",
            f"band (stuck pairs penalized only outside ±tau_s,j; tau_s = {', '.join(_f(v, 3) for v in band)} {unit}) "
            f"vs masked: mean test RMSE {_f(b.rmse_mean)} ± {_f(b.rmse_mean_std)} vs {_f(m.rmse_mean)} ± "
            f"{_f(m.rmse_mean_std)} {unit} ({diff:+.1%} in band's favour): the band loss **{verdict}** here "
            + ("(clear = beyond twice the seed-to-seed spread)." if len(b.seeds) >= 2 and len(m.seeds) >= 2 else
               "(one seed: no spread to judge a difference by)."), ""]
