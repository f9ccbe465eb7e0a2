"""The report of ``deadzone-id sense`` (core, no ROS): sense.json, sense.md and plots/sense_estimate.png."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

import numpy as np

from ...sensing.friction import FRICTION_TERMS
from .metrics import beyond_calibration
from .params import write_sensing_params
from .results import EstimatorFigures, SenseResults


class EstimateTrace(Protocol):
    """What the plot reads of one run's per-tick logs (:func:`.run.run_sense`'s traces): t (N,) [s], truth (N, J)
    [N·m] and, per estimator name, its estimate and its band half width (N, J) [N·m]."""

    t: np.ndarray
    truth: np.ndarray
    est: dict[str, np.ndarray]
    half: dict[str, np.ndarray]

__all__ = ["markdown", "plot_estimate", "push_cells", "push_magnitudes", "write_sense"]


def _f(x: float, fmt: str = ".3g") -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def markdown(res: SenseResults) -> str:
    """The markdown table of every estimator (one row each)."""
    minutes = res.estimators[0].free_minutes if res.estimators else 0.0
    lines = [f"# Force sensing without a force sensor: {res.robot}", "",
             f"Model under test: {res.model}. Seeds {res.seeds} (thresholds from seed {res.calibration_seed}: "
             f"{res.margin:g} x the {res.quantile:g} quantile of the free-motion excess; a contact after {res.confirm} "
             f"consecutive sample(s) above it). Pushes at "
             f"{res.point} in {res.frame!r}; filter cutoff {res.cutoff:g} rad/s; simulator torque noise floor "
             f"{_f(res.noise_floor_mean)} N·m (mean std). Wall time {res.wall_s:.0f} s. RMSE moving: the push windows, "
             "joints that move (exact estimates); the filter's lag alone leaves "
             f"{[round(v, 4) for v in res.lag_rmse_moving]} N·m there "
             f"({_f(float(np.nanmean(res.lag_rmse_moving)) / res.noise_floor_mean)} x the noise floor).", "",
             f"| estimator | false contacts / min (free, {minutes:.1f} min) | false contacts in holds | RMSE in "
             "contact [N·m] | RMSE / noise floor | RMSE moving / noise floor | smallest force detected [N] | worst "
             "delay >= 1 N [ms] | interval coverage |",
             "|---|---|---|---|---|---|---|---|---|"]
    for e in res.estimators:
        lines.append(f"| {e.label} | {_f(e.false_contacts_per_min)} ({e.false_contacts}) | {e.hold_false_contacts} "
                     f"| {_f(e.rmse_contact_mean)} | {_f(e.rmse_over_noise)} | {_f(e.rmse_moving_over_noise)} "
                     f"| {_f(e.smallest_detected_force)} "
                     f"| {_f(e.max_delay_ms_at_1n)} | {_f(e.interval_coverage)} |")
    mags = push_magnitudes(res)
    lines += ["", "Pushes detected during the push (0.3 s step) by magnitude at the end-effector point, and the median "
              "detection delay of those detected [ms]; collisions: delay per seed [ms]:", "",
              "| estimator | " + " | ".join(f"{m:g} N" for m in mags) + " | collision |",
              "|---|" + "---|" * (len(mags) + 1)]
    for e in res.estimators:
        lines.append(f"| {e.label} | " + " | ".join(push_cells(e, mags)) + " | "
                     + ", ".join(_f(d, ".0f") for d in e.collision_delay_ms) + " |")
    held = [e for e in res.estimators if e.hold_push_force]
    if held:
        lines += ["", "Quasi-static push while the arm holds still (a ramp to 1 N over the second half of each hold, "
                  "the controller holding the pose: inside the dead zone): the force when a contact was first "
                  "flagged, per seed (— not flagged), and the share of the stuck (joint, tick) pairs whose interval "
                  "holds the true external torque:", "",
                  "| estimator | flagged at [N] | interval holds the truth |", "|---|---|---|"]
        for e in held:
            lines.append(f"| {e.label} | " + ", ".join("—" if math.isnan(f) else f"{f:.2f}" for f in e.hold_push_force)
                         + f" | {_f(e.hold_push_coverage)} |")
    events = [(e, f) for e in res.estimators for f in e.false_contact_events]
    if events:
        lines += ["", "False contact onsets in free motion (joints above their threshold; velocity [rad/s] and "
                  "excess / threshold per joint at the onset; at most 10 per estimator):", ""]
        for e in res.estimators:
            lines += [f"- {e.name}: seed {f.seed} ({f.scenario}) t = {f.t:.3f} s, {f.joints}, dq {f.dq}, "
                      f"ratio {f.ratio}" for f in e.false_contact_events[:10]]
    lines += ["", "Per joint thresholds [N·m]: " + "; ".join(
        f"{e.name} {[round(v, 3) for v in e.threshold]}" for e in res.estimators), ""]
    banded = [e for e in res.estimators if any(e.band)]
    lines += [f"Band of {e.name}: tau_s {[round(v, 4) for v in e.band]} N·m, fade velocity "
              f"{[round(v, 4) for v in e.fade_velocity]} rad/s, load gain {[round(v, 4) for v in e.load_gain]} "
              "(the nodes' sensing_band, sensing_fade_velocity, sensing_band_load_gain)"
              for e in banded] + ([""] if banded else [])
    lines += _coverage_lines(res)
    lines += [f"Friction correction of the residual, per joint {list(FRICTION_TERMS)}: "
              f"{[round(v, 4) for v in res.friction]}, Stribeck velocity and exponent "
              f"{[round(v, 4) for v in res.friction_stribeck]} (the nodes' sensing_friction, "
              "sensing_friction_stribeck; all of them in sensing.yaml)", ""]
    return "\n".join(lines)


def push_magnitudes(res: SenseResults) -> list[float]:
    """The push magnitudes [N] of every estimator's pushes, ascending (the columns of the detection tables)."""
    return sorted({p.magnitude for e in res.estimators for p in e.pushes})


def push_cells(e: EstimatorFigures, magnitudes: list[float]) -> list[str]:
    """One table cell per magnitude [N]: pushes detected / applied, and the median delay of the detected ones."""
    cells = []
    for m in magnitudes:
        got = [p for p in e.pushes if p.magnitude == m]
        hit = [p.delay_ms for p in got if p.detected]
        cells.append(f"{len(hit)}/{len(got)}" + (f" ({float(np.median(hit)):.0f} ms)" if hit else ""))
    return cells


def _coverage_lines(res: SenseResults) -> list[str]:
    """The calibration run's speed coverage against the evaluation runs' (nothing for results without it)."""
    if not res.calibration_speed or not res.evaluation_speed:
        return []
    over = beyond_calibration(res.joint_names, res.calibration_speed, res.evaluation_speed)
    line = (f"Speed coverage: the calibration run reached {[round(v, 2) for v in res.calibration_speed]} rad/s per "
            f"joint, the evaluation runs {[round(v, 2) for v in res.evaluation_speed]} rad/s. ")
    if over:
        line += (f"Beyond the calibrated speeds on {over}: there the friction correction and the thresholds are "
                 "extrapolated, and a false contact at those speeds says the calibration run was too slow "
                 "(`--calibration-duration` longer, or an excitation that reaches them).")
    else:
        line += "Every joint stayed within the calibrated speeds."
    return [line, ""]


def plot_estimate(trace: EstimateTrace, path: Path, names: list[str]) -> None:
    """Estimate vs truth over time on the joint with the largest true torque, band shaded (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    j = int(np.argmax(np.abs(trace.truth).max(axis=0)))
    k = int(np.argmax(np.abs(trace.truth[:, j])))
    a, b = max(0, k - 1500), min(len(trace.t), k + 1500)
    t = trace.t[a:b]
    fig, ax = plt.subplots(figsize=(9, 4))
    ax.plot(t, trace.truth[a:b, j], "k", lw=2, label="true J^T F")
    for name in names:
        ax.plot(t, trace.est[name][a:b, j], lw=1, label=name)
    est, half = trace.est["residual_band"][a:b, j], trace.half["residual_band"][a:b, j]
    ax.fill_between(t, est - half, est + half, where=half > 0, alpha=0.25, color="tab:blue",
                    label="dead-zone band (stuck)")
    ax.set_xlabel("simulated time [s]")
    ax.set_ylabel(f"external torque, joint {j + 1} [N·m]")
    ax.legend(fontsize=7, loc="upper left")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_sense(out: Path, res: SenseResults, traces: Mapping[str, EstimateTrace]) -> str:
    """Write sense.json, sense.md, the plot and sensing.yaml (the nodes' parameters, :mod:`.params`) under ``out``;
    return the markdown."""
    from ...training.evaluate import json_clean

    out.mkdir(parents=True, exist_ok=True)
    (out / "sense.json").write_text(json.dumps(json_clean(res.to_dict()), indent=1))
    md = markdown(res)
    if "pushes" in traces:
        plot_estimate(traces["pushes"], out / "plots" / "sense_estimate.png", [e.name for e in res.estimators])
        md += "\n![estimate vs truth](plots/sense_estimate.png)\n"
    if "hold" in traces:
        plot_estimate(traces["hold"], out / "plots" / "sense_hold.png", [e.name for e in res.estimators])
        md += "\n![estimate vs truth, the quasi-static push of a hold](plots/sense_hold.png)\n"
    (out / "sense.md").write_text(md)
    write_sensing_params(out / "sensing.yaml", res)
    return md
