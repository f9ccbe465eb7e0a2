"""The demo's and demo-real's report.md: the comparison table, the data-efficiency table and the live closed-loop
table with its reading, from the typed results of :mod:`.results`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .report import fmt_joints, num
from .report_pick import fraction_cell
from .results import ClosedLoopResult, CompareReport, DemoReport

__all__ = ["compare_table", "dead_zone_line", "demo_markdown", "real_markdown"]

def compare_table(report: CompareReport) -> list[str]:
    """Markdown rows: per method torque RMSE per joint, mean ± std over seeds, nRMSE, usable data; the noise floor."""
    lines = [f"| method | torque RMSE per joint [N·m] ({' / '.join(report.joint_names)}) | mean ± std over seeds | "
             "normalized RMSE | usable data |", "|---|---|---|---|---|"]
    for name, m in report.methods.items():
        lines.append(f"| {name} | {fmt_joints(m.rmse_per_joint, digits=4)} | {num(m.rmse_mean, '.4f')} ± "
                     f"{num(m.rmse_mean_std, '.4f')} | {num(m.nrmse_mean, '.3f')} | "
                     f"{num(m.usable_fraction, '.1%')} |")
    floor = report.noise_floor
    if floor:
        lines.append(f"| *noise floor (simulator's own inverse dynamics)* | "
                     f"{fmt_joints(floor.rmse_per_joint, digits=4)} | {np.mean(floor.rmse_per_joint):.4f} | | |")
    return lines


def _efficiency_table(report: CompareReport) -> list[str]:
    """Rows of the data-efficiency curve: training share, samples, mean RMSE and usable data of each method."""
    eff = report.data_efficiency
    if eff is None:
        return []
    methods = [m for m in ("masked", "conventional") if m in eff.curves]
    head = "| training data | samples | " + " | ".join(f"{m} RMSE [N·m] | {m} usable" for m in methods) + " |"
    lines = [head, "|" + "---|" * (2 + 2 * len(methods))]
    for k in range(len(eff.fractions)):
        cells = [fraction_cell(report, k), str(eff.train_samples[k])]
        for m in methods:
            c = eff.curves[m]
            cells += [f"{num(c.rmse_mean[k], '.4f')} ± {num(c.rmse_mean_std[k], '.4f')}", str(c.usable_samples[k])]
        lines.append("| " + " | ".join(cells) + " |")
    note = eff.usable_samples_note
    return lines + (["", f"Usable: {note}."] if note else [])


def _closed_loop_lines(closed: dict[str, ClosedLoopResult]) -> list[str]:
    if not closed:
        return ["(no closed-loop run)"]
    joints = next(iter(closed.values())).joint_names
    lines = [f"| controller | tracking RMSE [mrad] ({' / '.join(joints)}) | mean [mrad] | max error [mrad] | "
             "torque RMS [N·m] |", "|---|---|---|---|---|"]
    for label, r in closed.items():
        lines.append(f"| {label} | {fmt_joints(r.tracking_rmse_per_joint, 1e3, 2)} | "
                     f"{r.tracking_rmse_mean * 1e3:.2f} | {fmt_joints(r.max_abs_error_per_joint, 1e3, 1)} | "
                     f"{fmt_joints(r.effort_rms_per_joint)} |")
    return lines


def _closed_loop_reading(closed: dict[str, ClosedLoopResult]) -> list[str]:
    if len(closed) < 2:
        return []
    ranked = sorted(closed, key=lambda k: closed[k].tracking_rmse_mean)
    best, worst = ranked[0], ranked[-1]
    lines = [f"Best tracking: **{best}** ({closed[best].tracking_rmse_mean * 1e3:.2f} mrad RMS); worst: {worst} "
             f"({closed[worst].tracking_rmse_mean * 1e3:.2f} mrad)."]
    if "ctc_dob + masked" in closed and "ctc_dob + conventional" in closed:
        m, c = closed["ctc_dob + masked"].tracking_rmse_mean, closed["ctc_dob + conventional"].tracking_rmse_mean
        lines.append(f"The masked-loss model tracks {'better' if m < c else 'worse'} than the conventional one "
                     f"({m * 1e3:.2f} vs {c * 1e3:.2f} mrad RMS, {abs(100 * (c - m) / c):.0f}% "
                     f"{'lower' if m < c else 'higher'}).")
    lines.append("The DOB absorbs most model error at low frequency, so differences between feedforward models show "
                 "mainly in fast phases and at velocity reversals, where the dead zone acts. One run per controller: "
                 "treat differences of a few percent as noise.")
    return lines


def demo_markdown(report: DemoReport, out: Path) -> str:
    """The demo's report.md (paths relative to ``out``, the demo's folder)."""
    cfg = report.config
    rel = lambda p: Path(p).resolve().relative_to(out.resolve()).as_posix()  # noqa: E731
    compare_dir = Path(report.compare_dir)
    lines = [
        "# deadzone_id_ros demo report",
        "",
        "Inverse dynamics tau = f(q, dq, ddq) of the simulated 3-DOF arm with dead zones (static friction), learned "
        "with the dead-zone loss of Inami, Yamane and Sakaino (arXiv 2402.00393) and compared with the conventional "
        "method (drops every sample with a stuck joint), plain MSE on all samples, an identified Newton–Euler "
        "rigid-body model and a hybrid (rigid body + masked-loss residual).",
        "",
        f"Run {'--quick' if cfg['quick'] else 'full'}, {report.seconds:.0f} s. Data: {len(cfg['sim_seeds'])} offline "
        f"episodes x {cfg['sim_duration']:g} s (`deadzone-id simulate`) and one live ROS 2 recording of "
        f"{cfg['live_duration']:g} s excitation through `sim_feedforward.launch.yaml`.",
        "",
        "## Torque prediction on held-out data (where the joint moves)",
        "",
        *compare_table(report.compare),
        "",
        f"Full comparison: [{rel(compare_dir / 'report.md')}]({rel(compare_dir / 'report.md')}) — dead-zone "
        "behaviour, per-seed numbers and plots.",
        "",
        "Usable data is what each method trains on: the masked loss keeps every (sample, joint) pair whose joint "
        "moves; the conventional method keeps only samples where all joints move.",
        "",
    ]
    if report.compare.data_efficiency is not None and report.compare.data_efficiency.fractions:
        lines += ["## Data efficiency (masked vs conventional)", "", *_efficiency_table(report.compare), "",
                  f"![data efficiency]({rel(compare_dir / 'plots' / 'data_efficiency.png')})", ""]
    lines += [
        f"![per-joint RMSE]({rel(compare_dir / 'plots' / 'rmse_per_joint.png')})",
        "",
        "## Live closed loop on a held-out reference",
        "",
        f"Excitation seed {cfg['closed_loop_seed']} (not in any training data), {cfg['closed_loop_duration']:g} s, "
        "sim_arm + feedforward_controller as separate processes over DDS at 1 kHz, in simulated time with the "
        "simulator in lockstep with the controller (each 1 ms tick waits for the command answering the last state), "
        "so the numbers do not depend on CPU load. Every controller uses the same PD gains and DOB; ctc modes add "
        "the model's torque as feedforward. `rbd (URDF)` is the controller's rigid-body model with the URDF's nominal "
        "parameters (no rotor inertia, no friction: what a user has before identifying anything); the learned "
        "models are the seed-0 artifacts of the comparison above.",
        "",
        *_closed_loop_lines(report.closed_loop),
        "",
        *_closed_loop_reading(report.closed_loop),
        "",
        "![closed loop](plots/closed_loop.png)",
        "",
        f"Best learned model exported to ONNX: `{rel(compare_dir / 'models' / report.best_learned)}`.",
        "",
    ]
    return "\n".join(lines)


def dead_zone_line(report: CompareReport) -> list[str]:
    """One line on how much of the data the dead zone takes (empty without masked and conventional)."""
    masked, conv = report.methods.get("masked"), report.methods.get("conventional")
    if masked is None or conv is None or masked.usable_fraction is None or conv.usable_fraction is None:
        return []
    return [f"Dead zone: the masked loss uses {masked.usable_fraction:.1%} of (sample, joint) pairs; the conventional "
            f"method keeps {conv.usable_fraction:.1%} of samples (those with every joint moving)."]


def real_markdown(reports: dict[str, CompareReport], titles: dict[str, str]) -> str:
    """demo-real's report.md: for each recording (name -> its compare report) the table and the dead-zone line."""
    lines = ["# deadzone_id_ros on real robot data", "",
             "Every method of `deadzone-id compare` on recordings made by other people on real robots "
             "(`../shared/data/real`). Torque RMSE on held-out time blocks, counted where each joint moves.", ""]
    for name, rep in reports.items():
        lines += [f"## {titles[name]}", "", *compare_table(rep), "", *dead_zone_line(rep), "",
                  f"Details, plots and the written verdict: [{name}/report.md]({name}/report.md)", ""]
    return "\n".join(lines)
