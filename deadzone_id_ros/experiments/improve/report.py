"""The report of ``deadzone-id improve``: its targets (:func:`targets`), report.json, report.md and the plot
of held-out error against iteration (:func:`write_improve`)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from .results import MAX_PICK_RATIO, MAX_STEP_WORSENING, MIN_GAIN, compare_faulted, targets

if TYPE_CHECKING:
    from ..closed_loop.results import ClosedLoopSummary
    from .results import ImproveRun

__all__ = ["PLOT", "RECORD", "held_out_text", "improve_markdown", "improve_plot", "improve_settings_line",
           "improve_table", "write_improve"]

#: The plot's file under the output's plots/.
PLOT = "improve_iterations.png"
#: The full-precision record under the output folder (:meth:`ImproveRun.record`; a resumed demo reads it back).
RECORD = "improve.json"


def _mrad(v: float) -> str:
    return "n/a" if not math.isfinite(v) else f"{v * 1e3:.3f}"


def held_out_text(h: ClosedLoopSummary) -> str:
    """A held-out score's mean tracking RMSE and spread [mrad]: "0.123 ± 0.004", or "0.123 (1 seed)" (one seed has
    no spread to show)."""
    spread = f" ± {_mrad(h.tracking_rmse_std)}" if len(h.seeds) > 1 else " (1 seed)"
    return _mrad(h.tracking_rmse_mean) + spread


def _verdict(met: bool | None) -> str:
    return "n/a" if met is None else ("met" if met else "MISSED")


def improve_table(run: ImproveRun) -> list[str]:
    """The iteration table (held-out figures per iteration and of the compare model) and the targets, in markdown
    lines: the part of report.md the demo's report shows too."""
    joints = " / ".join(run.joint_names)
    lines = [f"| iteration | model | held-out tracking RMSE, mean ± std over seeds [mrad] | per joint ({joints}) "
             "[mrad] | at reversals [mrad] | DOB mean abs estimate [N·m] |", "|---|---|---|---|---|---|"]
    rows = [(f"{it.index}", it.method + (" (kept: candidate refused)" if it.training and not it.training.accepted
                                         else ""), it.held_out) for it in run.iterations]
    if run.compare is not None:
        rows.append(("dedicated excitation", run.compare.label, run.compare))
    for name, model, h in rows:
        per_joint = " / ".join(_mrad(v) for v in h.tracking_rmse_per_joint)
        dob = sum(h.dob_mean_abs_per_joint) / max(len(h.dob_mean_abs_per_joint), 1)
        if h.faults:
            model += f" (**FAULT** on {len(h.faults)} of {len(h.seeds)} runs)"
        lines.append(f"| {name} | {model} | {held_out_text(h)} | "
                     f"{per_joint} | {_mrad(h.reversal_rmse_mean)} | {dob:.4f} |")
    tg = targets(run)
    if compare_faulted(run):
        assert run.compare is not None
        pick = (f"- last iteration vs the dedicated-excitation model: not compared: that model ran away (fault "
                f"latched) on {len(run.compare.faults)} of {len(run.compare.seeds)} held-out runs "
                f"({run.compare.faults[0]}), so its RMSE is no yardstick")
    else:
        pick = (f"- last iteration vs the dedicated-excitation model: {_ratio(tg.pick_ratio)} (target <= "
                f"{MAX_PICK_RATIO:g}x): {_verdict(tg.pick_met)}")
    return lines + ["", "Targets:", "",
                    f"- last iteration vs iteration 0: {_pct(tg.gain)} lower (target >= {MIN_GAIN:.0%}): "
                    f"{_verdict(tg.gain_met)}",
                    pick,
                    f"- worst step between iterations: {_pct(tg.worst_step, signed=True)} (target <= "
                    f"+{MAX_STEP_WORSENING:.0%}): {_verdict(tg.steps_met)}", ""]


def improve_settings_line(run: ImproveRun) -> str:
    """One sentence: the arm, the DOB, the task and held-out references, the iterations, the wall time."""
    s = run.settings
    where = ("task runs live over DDS in lockstep (the nodes; trial runs and held-out scoring in-process)"
             if s.live else "in-process")
    arm = f"`{s.robot}`" if s.robot else "the bundled arm"
    return (f"Simulated arm: {arm} (joint effects profile `{run.sim_profile}`), {where}; DOB cutoff "
            f"x{s.dob_cutoff_scale:g}; task references: "
            f"seeds {list(s.task_seeds)}, {s.task_duration_s:g} s each, recorded every iteration; held-out "
            f"references (never run for training): seeds {list(s.held_out_seeds)}, {s.held_out_duration_s:g} s "
            f"each; {s.iterations} iteration(s); candidates {list(s.methods) or 'every method'}; warm start "
            f"{'on' if s.warm_start else 'off'}; {run.seconds:.0f} s wall time.")


def improve_markdown(run: ImproveRun, plot: str | None = f"plots/{PLOT}") -> list[str]:
    """report.md's lines: settings, the iteration table, the training decisions, the targets, the label."""
    lines = ["# deadzone-id improve: learning from its own runs", "", improve_settings_line(run), "",
             *improve_table(run), "Training per iteration (on every run recorded so far; pick by validation torque "
             "RMSE):", ""]
    for it in run.iterations[1:]:
        t = it.training
        assert t is not None  # every iteration after 0 trained
        val = ", ".join(f"{m} {v:.4f}" for m, v in t.validation_rmse.items() if v is not None)
        lines.append(f"- iteration {it.index}: {len(t.bags)} runs, {t.samples[0]} training samples; validation "
                     f"RMSE [N·m] {val}; pick {t.pick} vs the running model's {t.running_validation_rmse:.4f}"
                     + (f"; trial run {_mrad(t.trial_tracking_rmse)} vs {_mrad(t.running_trial_tracking_rmse)} mrad"
                        if t.trial_tracking_rmse is not None and t.running_trial_tracking_rmse is not None else "")
                     + (": accepted" if t.accepted else f": refused ({t.refusal})")
                     + (f"; warm start: {', '.join(t.warm_started)}" if t.warm_started else ""))
    lines += ["", "Label: the applied torque (recorded effort) with the dead-zone mask of training; the applied torque "
              "minus the DOB's estimate is about the running model's own prediction, so it would teach the model "
              "itself (see `deadzone_id_ros/experiments/improve/run.py`)."]
    if plot:
        lines += ["", f"![held-out error against iteration]({plot})"]
    return lines


def _pct(v: float | None, signed: bool = False) -> str:
    return "n/a" if v is None else (f"{v:+.1%}" if signed else f"{v:.1%}")


def _ratio(v: float | None) -> str:
    return "n/a (no --compare-model)" if v is None else f"{v:.2f}x"


def improve_plot(run: ImproveRun, path: Path) -> None:
    """Held-out tracking RMSE (mean ± std over seeds) and at reversals [mrad] against iteration, with the
    dedicated-excitation model as a horizontal line when there is one."""
    from ..compare.plots import _pyplot, _save

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    k = [it.index for it in run.iterations]
    ax.errorbar(k, [it.held_out.tracking_rmse_mean * 1e3 for it in run.iterations],
                yerr=[it.held_out.tracking_rmse_std * 1e3 for it in run.iterations], marker="o", capsize=3,
                label="tracking RMSE")
    ax.plot(k, [it.held_out.reversal_rmse_mean * 1e3 for it in run.iterations], marker="s", ls="--",
            label="at reversals")
    if run.compare is not None:
        ax.axhline(run.compare.tracking_rmse_mean * 1e3, color="black", ls=":", label="dedicated excitation")
    ax.set(xlabel="iteration", ylabel="held-out error [mrad]", xticks=k,
           title=f"improve: DOB cutoff x{run.settings.dob_cutoff_scale:g}")
    ax.set_ylim(bottom=0)
    ax.legend()
    _save(fig, path, 120)


def write_improve(out: Path, run: ImproveRun) -> str:
    """Write ``out``/report.json (:meth:`ImproveRun.to_dict`), ``out``/:data:`RECORD` (:meth:`ImproveRun.record`,
    read back by :meth:`ImproveRun.read`), ``out``/report.md and ``out``/plots/:data:`PLOT`; returns the markdown.

    Raises:
        ValueError: a non-finite number left in the JSON document (NaN is written as null).
    """
    out = Path(out)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    improve_plot(run, out / "plots" / PLOT)
    (out / "report.json").write_text(json.dumps(run.to_dict(), indent=2, allow_nan=False) + "\n")
    (out / RECORD).write_text(json.dumps(run.record(), indent=2, allow_nan=False) + "\n")
    text = "\n".join(improve_markdown(run))
    (out / "report.md").write_text(text + "\n")
    return text
