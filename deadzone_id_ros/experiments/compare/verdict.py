"""The comparison's written verdict (report.md's "Verdict" section): the ranking, the simple references every method
is held against (the constant baseline, the identified rigid body), masked against conventional and mse_all, the
distance to the noise floor and to the measured torque's own noise; all from the typed results of
:mod:`.compare.results`."""

from __future__ import annotations

import math

import numpy as np

from ...models.methods import CONSISTENT_RIGID_BODY, CONSTANT, GRAVITY, METHODS, method_with_role
from .formatting import as_float, fmt, fmt_joints
from .pick import PREDICTABLE_RATIO
from .results import CONV, NAIVE_M, PROP, RIGID, CompareReport, DataDiagnosis, MethodResult

__all__ = ["baseline_lines", "consistency_lines", "noise_lines", "verdict"]


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
            out.append(f"No method is worse than {what} ({ref}, {fmt(ms[ref].rmse_mean)} {unit}).")
            continue
        names = ", ".join(f"{m} ({rel:+.0%}{'' if clear else ', within twice the seed spread'})"
                          for m, rel, clear in worse)
        if ref == const:
            why = ("A model worse than a constant has learned nothing that holds on the held-out blocks; do not "
                   "deploy it.")
        else:  # a learned method pays for its network; a simpler physical reference (gravity alone) has none
            learned = [m for m, _, _ in worse if m in METHODS and METHODS[m].needs.network]
            why = (f"The learned part of {', '.join(learned)} costs accuracy here; the identified rigid body is the "
                   "better model." if learned else "The identified rigid body is the better model.")
        out.append(f"**Worse than {what}** ({ref}, {fmt(ms[ref].rmse_mean)} {unit} mean test RMSE): {names}. {why}")
    grav, cons = method_with_role(GRAVITY), method_with_role(CONSISTENT_RIGID_BODY)
    if grav in ms and ms[grav].rmse_mean is not None:
        out.append(f"The URDF's gravity torque alone ({grav}, nothing fitted) reaches {fmt(ms[grav].rmse_mean)} "
                   f"{unit}.")
    if cons in ms and ms[cons].rmse_mean is not None and rigid in ms and ms[rigid].rmse_mean is not None:
        out.append(f"The physically consistent rigid body ({cons}) reaches {fmt(ms[cons].rmse_mean)} {unit} "
                   f"against {fmt(ms[rigid].rmse_mean)} {unit} for the unconstrained {rigid}.")
    return out


def consistency_lines(report: CompareReport) -> list[str]:
    """Whether each identified rigid body's bodies are physically consistent, and which model a URDF can hold;
    empty when no method identified a rigid body (the URDF's own, ``identification="urdf"``, is not listed)."""
    ms = report.methods
    fitted = [m for m in ms if ms[m].n_bodies and m in METHODS and METHODS[m].identification != "urdf"
              and ms[m].inconsistent_bodies is not None]
    if not fitted:
        return []
    counts = ", ".join(f"{m} {(ms[m].n_bodies or 0) - len(ms[m].inconsistent_bodies or [])} of {ms[m].n_bodies}"
                       for m in fitted)
    whole = [m for m in fitted if ms[m].urdf_refusal == ""]
    cons = method_with_role(CONSISTENT_RIGID_BODY)
    refusals = {m: ms[m].urdf_refusal or "" for m in fitted}
    if whole:
        tail = (f"`deadzone-id export --urdf` writes the rigid body of {', '.join(whole)} (`models/<method>/`) as a "
                "URDF.")
    elif cons not in fitted and all("not physically consistent" in r for r in refusals.values()):
        tail = (f"No identified rigid body here can be written as a URDF (`deadzone-id export --urdf` refuses an "
                f"inconsistent body): fit {cons} (`compare --methods ... {cons}`) for one.")
    else:  # another cause (locked joints, friction a URDF cannot hold, a malformed file): say which
        m = cons if cons in fitted else fitted[0]
        tail = f"`deadzone-id export --urdf` writes none of them here; for {m}: {refusals[m]}."
    return [f"Physically consistent bodies of the identified rigid bodies (each body's pseudo-inertia positive "
            f"definite: a mass, centre of mass and inertia that a body can have; Wensing, Kim and Slotine 2018): "
            f"{counts}. {tail}"]


def noise_lines(report: CompareReport) -> list[str]:
    """How far the best method (lowest mean nRMSE) is above the measured torque's white noise on the test pairs
    (:attr:`~.compare.results.CompareReport.measurement_noise`); empty without that estimate or a scored method."""
    mn, ms = report.measurement_noise, report.methods
    scored = [m for m in ms if ms[m].nrmse_mean is not None]
    if mn is None or not mn.nrmse_mean or not scored:
        return []
    best = min(scored, key=lambda m: as_float(ms[m].nrmse_mean))
    ratio = as_float(ms[best].nrmse_mean) / mn.nrmse_mean
    return [f"The measured torque's own white noise, estimated from its second differences on the test pairs, is "
            f"{mn.nrmse_mean:.3f} normalized ({fmt_joints(mn.nrmse_per_joint)} per joint); the best method by "
            f"normalized RMSE, {best} "
            f"({as_float(ms[best].nrmse_mean):.3f}), is {ratio:.2f}× it. No model of the state predicts white "
            "noise: near 1× what is left is the sensor's noise, and neither a larger model nor more data of this "
            "kind will lower the error much; far above it the torque holds something the models miss."]


def _masked_vs_conventional(report: CompareReport) -> list[str]:
    a, b = report.methods[PROP], report.methods[CONV]
    a_mean, b_mean = as_float(a.rmse_mean), as_float(b.rmse_mean)
    out: list[str] = []
    diff = (b_mean - a_mean) / b_mean if b_mean else float("nan")
    noise = math.hypot(a.rmse_mean_std or 0.0, b.rmse_mean_std or 0.0)
    one_seed = len(a.seeds or []) < 2 or len(b.seeds or []) < 2
    clear = not one_seed and abs(b_mean - a_mean) > 2 * noise
    if one_seed:
        out.append("One training seed only (--quick): there is no seed-to-seed spread to judge differences by.")
    dz = report.dead_zone
    const = method_with_role(CONSTANT)
    c_mean = as_float(report.methods[const].rmse_mean) if const in report.methods else float("nan")
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
    a, c = as_float(masked.rmse_mean), as_float(mse_all.rmse_mean)
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
    ranking = sorted(ms, key=lambda m: math.inf if ms[m].rmse_mean is None else as_float(ms[m].rmse_mean))
    out.append("Ranking by mean test RMSE: " + ", ".join(f"{m} ({fmt(ms[m].rmse_mean)})" for m in ranking) + ".")
    best_n = min([as_float(ms[m].nrmse_mean) for m in ms if ms[m].nrmse_mean is not None], default=None)
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
        out.append(f"The rigid-body model (every inertial parameter identified with the URDF's as a prior, + Coulomb "
                   f"and viscous friction) reaches {fmt(ms[RIGID].rmse_mean)} {report.torque_unit} mean RMSE vs "
                   f"{fmt(ms[PROP].rmse_mean)} for the masked MLP.")
    nf = report.noise_floor
    if nf and nf.rmse_mean:
        best = ranking[0]
        out.append(f"Best method {best} is {as_float(report.floor_ratio(best)):.2f}× the simulator's own noise "
                   f"floor ({fmt(nf.rmse_mean)} {report.torque_unit}).")
        rbd_ratio = report.floor_ratio(RIGID)
        if rbd_ratio is not None:
            out.append(f"rbd (identified) is {rbd_ratio:.2f}× the noise floor.")
    return out + noise_lines(report) + consistency_lines(report)
