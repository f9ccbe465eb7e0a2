"""The demo's and demo-real's report.md: the comparison table, the data-efficiency table and the live closed-loop
table with its reading, from the typed results of :mod:`.compare.results`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...models.methods import METHODS
from ..closed_loop.report import closed_loop_markdown
from ..closed_loop.run import TRACKING_PLOT
from ..compare.formatting import fmt_joints, mean_std, num
from ..compare.pick_report import fraction_cell, per_tick_alternative
from ..compare.results import CONV, PROP, CompareReport
from ..compare.verdict import baseline_lines, consistency_lines, noise_lines
from .force_report import sense_lines, teleop_lines
from .results import DemoReport

__all__ = ["NEXT_LAUNCH_ARGS", "compare_table", "dead_zone_line", "demo_markdown", "launch_command", "pick_line",
           "real_markdown"]

def compare_table(report: CompareReport) -> list[str]:
    """Markdown rows: per method torque RMSE per joint, mean ± std over seeds, nRMSE, usable data; the measured
    torque's white noise and the simulator's noise floor."""
    lines = [f"| method | torque RMSE per joint [{report.torque_unit}] ({' / '.join(report.joint_names)}) | "
             "mean ± std over seeds | "
             "normalized RMSE | usable data |", "|---|---|---|---|---|"]
    for name, m in report.methods.items():
        lines.append(f"| {name} | {fmt_joints(m.rmse_per_joint, digits=4)} | "
                     f"{mean_std(m.rmse_mean, m.rmse_mean_std, len(m.seeds), '.4f')} | {num(m.nrmse_mean, '.3f')} | "
                     f"{num(m.usable_fraction, '.1%')} |")
    mn = report.measurement_noise
    if mn:
        lines.append(f"| *measured torque's white noise (estimate)* | {fmt_joints(mn.rmse_per_joint, digits=4)} | "
                     f"{num(mn.rmse_mean, '.4f')} | {num(mn.nrmse_mean, '.3f')} | |")
    floor = report.noise_floor
    if floor:
        lines.append(f"| *noise floor (simulator's own inverse dynamics)* | "
                     f"{fmt_joints(floor.rmse_per_joint, digits=4)} | "
                     f"{np.mean(np.asarray(floor.rmse_per_joint, dtype=float)):.4f} | | |")
    return lines


def _efficiency_table(report: CompareReport) -> list[str]:
    """Rows of the data-efficiency curve: training share, samples, mean RMSE and usable data of each method."""
    eff = report.data_efficiency
    if eff is None:
        return []
    methods = [m for m in (PROP, CONV) if m in eff.curves]
    head = "| training data | samples | " + " | ".join(f"{m} RMSE [{report.torque_unit}] | {m} usable"
                                                    for m in methods) + " |"
    lines = [head, "|" + "---|" * (2 + 2 * len(methods))]
    for k in range(len(eff.fractions)):
        cells = [fraction_cell(report, k), str(eff.train_samples[k])]
        for m in methods:
            c = eff.curves[m]
            n_seeds = len(report.methods[m].seeds) if m in report.methods else 2
            cells += [mean_std(c.rmse_mean[k], c.rmse_mean_std[k], n_seeds, '.4f'), str(c.usable_samples[k])]
        lines.append("| " + " | ".join(cells) + " |")
    note = eff.usable_samples_note
    return lines + (["", f"Usable: {note}."] if note else [])


def _quick_note(cfg: dict) -> list[str]:
    if not cfg.get("quick"):
        return []
    return ["**Quick mode: the learned models are under-trained** (at most 600 training steps, one seed, a fifth "
            "of the simulated data of the full demo), so the learned controllers below say little about the methods; "
            "run the full `make demo` for the comparison. The rigid-body rows do not depend on training length.", ""]


def _stage_lines(report: DemoReport) -> list[str]:
    if not report.stage_seconds:
        return []
    return ["Wall time per stage [s]: " + ", ".join(f"{k.split('_', 1)[1].replace('_', ' ')} {v:.0f}"
                                                   for k, v in report.stage_seconds.items())
            + f"; total {report.seconds:.0f}.", ""]


def _improve_lines(report: DemoReport) -> list[str]:
    """The improve stage's section: its settings, iteration table and targets, and where its report is."""
    if report.improve is None:
        return []
    from ..improve.report import PLOT, improve_settings_line, improve_table

    return ["## Learning from its own runs (deadzone-id improve)", "", improve_settings_line(report.improve), "",
            *improve_table(report.improve), "Full report: [improve/report.md](improve/report.md).", "",
            f"![held-out error against iteration](improve/plots/{PLOT})", ""]


def _arm(report: DemoReport) -> str:
    """"3-DOF arm" for the bundled arm, else "<name> (<J> joints)"."""
    joints = len(report.compare.joint_names)
    return "3-DOF arm" if report.robot in ("", "three_dof_arm") else f"{report.robot} arm ({joints} joints)"


def _claim_lines(report: DemoReport) -> list[str]:
    """The paper's claim on this arm in one line: usable data and mean torque RMSE, masked vs conventional."""
    c = report.masked_vs_conventional()
    if c["usable_fraction_masked"] is None or c["usable_fraction_conventional"] is None:
        return []
    return [f"Masked vs conventional on {c['joints']} joints: usable data {num(c['usable_fraction_masked'], '.1%')} "
            f"vs {num(c['usable_fraction_conventional'], '.1%')} ({num(c['usable_ratio'], '.2f')}x), mean torque "
            f"RMSE {num(c['rmse_masked'], '.4f')} vs {num(c['rmse_conventional'], '.4f')} "
            f"({num(c['rmse_ratio'], '.2f')}x).", ""]


def _check_lines(report: DemoReport) -> list[str]:
    """The robot check's section: is the simulated arm trustworthy, and if not, each problem with its fix."""
    check = report.robot_check
    if check is None:
        return []
    lines = ["## Is the simulated arm trustworthy? (deadzone-id robot check)", "",
             f"**The simulated {check.robot} is {check.verdict}** ({check.duration:g} s closed loop with pd_dob, seed "
             f"{check.seed}; mean noise floor {check.noise_floor_mean:.3g} N·m against the URDF's nominal rigid body's "
             f"error of {check.nominal_rbd_mean:.3g} N·m on the same samples).", ""]
    for f in check.findings:
        lines += [f"- **{f.check}** ({', '.join(f.joints)}): {f.problem}. Fix: {f.fix}."]
    if check.findings:
        lines += ["", "Until these are fixed, the figures below describe a simulated arm that is not controlled well; "
                  f"`deadzone-id robot check {check.robot}` checks the profile again.", ""]
    return lines


def _torque_lines(report: DemoReport) -> list[str]:
    """The torque table, or why it is not shown (:meth:`DemoReport.comparison_refused`)."""
    why = report.comparison_refused()
    if not why:
        return compare_table(report.compare)
    return [f"**Not shown: {why}.** The numbers are in compare/report.md for diagnosis only; fix the robot profile "
            "(see the robot check above) and run the demo again."]


def demo_markdown(report: DemoReport, out: Path) -> str:
    """The demo's report.md (paths relative to ``out``, the demo's folder)."""
    cfg = report.config
    rel = lambda p: Path(p).resolve().relative_to(out.resolve()).as_posix()  # noqa: E731
    compare_dir = Path(report.compare_dir)
    lines = [
        "# deadzone_id_ros demo report",
        "",
        f"Inverse dynamics tau = f(q, dq, ddq) of the simulated {_arm(report)} with dead zones (static friction), "
        "learned with the dead-zone loss of Inami, Yamane and Sakaino (arXiv 2402.00393) and compared with the "
        "conventional method (drops every sample with a stuck joint), plain MSE on all samples, an identified "
        "Newton–Euler rigid-body model and a hybrid (rigid body + masked-loss residual).",
        "",
        f"Run {'--quick' if cfg['quick'] else 'full'}, {report.seconds:.0f} s. Data: {len(cfg['sim_seeds'])} offline "
        f"episodes x {cfg['sim_duration']:g} s (`deadzone-id simulate`) and "
        + (f"no live recording ({report.live_skipped})." if report.live_skipped else
           f"one live ROS 2 recording of {cfg['live_duration']:g} s excitation through "
           "`sim_feedforward.launch.yaml`."),
        "",
        *_check_lines(report),
        *([] if report.comparison_refused() else _claim_lines(report)),
        "## Torque prediction on held-out data (where the joint moves)",
        "",
        *_torque_lines(report),
        "",
        *baseline_lines(report.compare),
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
        "## Closed loop on held-out references",
        "",
        *_quick_note(cfg),
        *closed_loop_markdown(report.closed_loop, report.closed_loop_weak_dob, report.closed_loop_live,
                              report.closed_loop_settings, "plots/closed_loop_reversals.png",
                              f"plots/{TRACKING_PLOT}"),
        *(["![live closed loop](plots/closed_loop.png)", ""] if report.closed_loop_live else []),
        *_improve_lines(report),
        *sense_lines(report),
        *teleop_lines(report),
        *_stage_lines(report),
        *_deploy_lines(report, rel(compare_dir)),
    ]
    return "\n".join(lines)


#: Launch arguments docs/own-robot.md and docs/controller.md ask for, per launch file, beside the model's: on the
#: simulated arm lockstep in simulated time ("When you need lockstep"); on a robot the controller's own parameter
#: file ("Control").
NEXT_LAUNCH_ARGS: dict[str, dict[str, str]] = {
    "sim_feedforward.launch.yaml": {"use_sim_time": "true", "lockstep": "true"},
    "feedforward.launch.yaml": {"params_file": "my_controller.yaml"},
}


def launch_command(launch_file: str, model_path: str, robot: str = "") -> str:
    """``deadzone-id launch FILE ...`` running a learned model (``model_path``: its artifact directory or .onnx)
    with ``mode:=ctc_dob model:=learned``, the file's :data:`NEXT_LAUNCH_ARGS` and, for a demo on a robot profile
    (``robot``: its name or file; "" for the bundled arm), ``robot:=`` (a file as an absolute path), without which
    the controller's joints are the bundled arm's and the model is refused; ``model_path`` comes last.

    Raises:
        KeyError: ``launch_file`` is not in :data:`NEXT_LAUNCH_ARGS`.
    """
    from ...launching.live import robot_launch_args

    args = {**NEXT_LAUNCH_ARGS[launch_file], **robot_launch_args(robot), "mode": "ctc_dob", "model": "learned",
            "model_path": model_path}
    return f"deadzone-id launch {launch_file} " + " ".join(f"{k}:={v}" for k, v in args.items())


def _deploy_lines(report: DemoReport, compare_dir: str) -> list[str]:
    """What to deploy: the comparison's pick (chosen on validation) and its folder; else the best learned model."""
    pick = report.compare.pick
    if pick is None:
        return [f"Best learned model exported to ONNX: `{compare_dir}/models/{report.best_learned}`.", ""]
    onnx = f" (ONNX `{compare_dir}/{pick.onnx}`)" if pick.onnx else ""
    model = f"{compare_dir}/{pick.artifact}"
    robot = str(report.config.get("robot") or "")
    return ["## Next", "",
            f"The model to deploy is **{pick.method}** in `{model}/`{onnx}: {pick.reason}. Run it on the simulated "
            f"arm, from this folder, with `{launch_command('sim_feedforward.launch.yaml', model, robot)}`; on your "
            f"own arm, with `{launch_command('feedforward.launch.yaml', model, robot)}` once `my_controller.yaml` "
            "names its joints, URDF and gains (docs/own-robot.md; its model must be trained on "
            "that arm's recording).", ""]


def dead_zone_line(report: CompareReport) -> list[str]:
    """One line on how much of the data the dead zone takes (empty without masked and conventional)."""
    masked, conv = report.methods.get(PROP), report.methods.get(CONV)
    if masked is None or conv is None or masked.usable_fraction is None or conv.usable_fraction is None:
        return []
    return [f"Dead zone: the masked loss uses {masked.usable_fraction:.1%} of (sample, joint) pairs; the conventional "
            f"method keeps {conv.usable_fraction:.1%} of samples (those with every joint moving)."]


def real_markdown(reports: dict[str, CompareReport], titles: dict[str, str]) -> str:
    """demo-real's report.md: for each recording (name -> its compare report) the table and the dead-zone line."""
    simulated = [name for name, rep in reports.items() if rep.data.simulator]
    real = "recordings" if simulated else "recordings made by other people on real robots"
    lines = [f"# deadzone_id_ros on {'recorded' if simulated else 'real robot'} data", "",
             f"Every method of `deadzone-id compare` on {real} (`../shared/data/real`). Torque RMSE on held-out time "
             "blocks, counted where each joint moves.", ""]
    for name, rep in reports.items():
        origin = " (simulated arm: this project's simulator)" if rep.data.simulator else ""
        lines += [f"## {titles[name]}{origin}", "", *compare_table(rep), ""]
        for part in (baseline_lines(rep), noise_lines(rep), consistency_lines(rep)):
            lines += [*part, ""] if part else []
        lines += [*dead_zone_line(rep), "", *pick_line(rep, name),
                  f"Details, plots and the written verdict: [{name}/report.md]({name}/report.md)", ""]
    return "\n".join(lines)


def pick_line(report: CompareReport, name: str) -> list[str]:
    """The model to deploy for one recording (chosen on validation), its test error and where it was exported; empty
    without a pick."""
    p = report.pick
    if p is None:
        return []
    where = f"{name}/{p.onnx}" if p.onnx else f"{name}/{p.artifact}/"
    offline = p.method in METHODS and METHODS[p.method].history
    per_tick = per_tick_alternative(report) if offline else None
    instead = (f"for the controller deploy `{per_tick}` (`{name}/models/{per_tick}/`), the pick among the methods "
               "without history" if per_tick else "no method without history has a score here")
    tail = f" It reads the recent joint states, so it is for offline use: a controller refuses it; {instead}." \
        if offline else ""
    return [f"**{'Best model (offline only)' if offline else 'Deploy'}: {p.method}** (seed {p.seed}): {p.reason}. "
            f"Its test RMSE {num(p.test_rmse_mean, '.4f')} {report.torque_unit} "
            f"(normalized {num(p.test_nrmse_mean, '.3f')}), exported to `{where}`.{tail}", ""]
