"""The demo's and demo-real's report.md: the comparison table, the data-efficiency table and the live closed-loop
table with its reading, from the typed results of :mod:`.compare.results`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...models.methods import METHODS
from ..closed_loop.report import closed_loop_markdown
from ..closed_loop.run import TRACKING_PLOT
from ..compare.formatting import fmt_joints, mean_std, num
from ..compare.pick_report import fraction_cell, per_tick_alternative
from ..compare.results import CONV, PROP, CompareReport
from ..compare.verdict import baseline_lines, consistency_lines, noise_lines
from ..sense.report import push_cells, push_magnitudes
from .results import DemoReport

if TYPE_CHECKING:
    from ..teleop.results import CaseFigures, TeleopResults

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


def _sense_lines(report: DemoReport) -> list[str]:
    """The force-sensing stage's section: the sensor the nodes run, against the momentum observer on the URDF's
    nominal rigid body (the textbook baseline); empty without the stage."""
    res = report.sense
    if res is None:
        return (["## Sensing force without a force sensor", "", f"Not run: {report.sense_skipped}. `deadzone-id sense "
                 "--robot ... --calibration-duration S` with a longer calibration is the first thing to try "
                 "(docs/sensing.md).", ""] if report.sense_skipped else [])
    d, robot = report.sense_dir, report.config.get("robot")
    mags = push_magnitudes(res)
    lines = ["## Sensing force without a force sensor", "",
             f"`deadzone-id sense` on held-out seeds {res.seeds} of the simulated arm (calibrated on free motion of "
             f"seed {res.calibration_seed}), against the simulator's true external torques. Pushes at {res.point} in "
             f"{res.frame!r}, detected during the 0.3 s push (median delay):", "",
             "| estimator | " + " | ".join(f"{m:g} N" for m in mags) + " | false contacts (free motion, holds) | "
             "quasi-static push in a hold flagged at [N] | RMSE in contact / noise floor |",
             "|---|" + "---|" * (len(mags) + 3)]
    for e in (e for e in res.estimators if e.name in ("residual_band", "momentum")):
        held = ", ".join("—" if not np.isfinite(f) else f"{f:.2f}" for f in e.hold_push_force) or "n/a"
        lines.append(f"| {e.label} | " + " | ".join(push_cells(e, mags)) + f" | {e.false_contacts}, "
                     f"{e.hold_false_contacts} | "
                     f"{held} | {e.rmse_over_noise:.1f} |")
    launch = ("deadzone-id launch sim_feedforward.launch.yaml mode:=ctc_dob sensing:=true "
              f"sensing_params_file:={d}/sensing.yaml" + _robot_arg(str(robot or "")))
    return lines + ["", f"Every estimator and what each column means: [{d}/sense.md]({d}/sense.md) "
                    "(docs/sensing.md). The first row is the sensor the controller runs with `sensing:=true`; its "
                    f"calibrated settings are in `{d}/sensing.yaml`: `{launch}`.", "",
                    f"![estimate vs truth]({d}/plots/sense_estimate.png)", ""]


def _robot_arg(robot: str) -> str:
    """`` robot:=...`` for a launch line of the demo's robot ("" for the bundled arm; a profile file made absolute,
    so the line runs from the demo's folder: :func:`~deadzone_id_ros.launching.live.robot_launch_args`)."""
    from ...launching.live import robot_launch_args

    return "".join(f" {k}:={v}" for k, v in robot_launch_args(robot).items())


def _teleop_cells(res: TeleopResults, model: str) -> list[str]:
    """One row's cells of the teleoperation table: free-motion tracking, felt error in push and hold (each with its
    ratio to the nominal rigid body's), the hold's oscillation ratio, the stuck push and the faults."""
    from ..teleop.report import IMPROVEMENT_TARGET

    def case(scenario: str) -> CaseFigures | None:
        return res.case(model, "bilateral", scenario)

    def worst(c: CaseFigures | None, key: str, fmt: str, scale: float = 1.0) -> str:
        if c is None or not np.isfinite(c.worst[key]):
            return "n/a"
        return f"{format(c.mean[key] * scale, fmt)} ({format(c.worst[key] * scale, fmt)})"

    cells = [worst(case("free"), "tracking_rmse", ".2f", 1e3)]
    for scenario in ("push", "hold"):
        c, n = case(scenario), res.case("nominal", "bilateral", scenario)
        ratio = ""
        if model != "nominal" and c is not None and n is not None and c.mean["felt_error"] > 0:
            r = n.mean["felt_error"] / c.mean["felt_error"]
            ratio = f", {r:.2f}x" + ("" if r >= IMPROVEMENT_TARGET else f" (< {IMPROVEMENT_TARGET:g}x)")
        cells.append(worst(c, "felt_error", ".1%") + ratio)
    cells.append(worst(case("hold"), "oscillation_ratio", ".2g"))
    stuck = case("stuck")
    cells.append("n/a" if stuck is None or not stuck.worst["push_peak"] > 0 else
                 f"{stuck.worst['phantom']:.3g} / {stuck.worst['push_peak']:.3g} N·m, {stuck.worst['coverage']:.0%}")
    cells.append(str(sum(len(c.faults) for c in res.cases if c.model == model)))
    return cells


#: felt-error difference [1] within which two models count as the same force sensor: the spread of a seed in the
#: teleop figures (docs/teleoperation.md: the same model's push and hold differ by 1 to 3 points between seeds)
_SAME_FELT = 0.02


def _pick_against_rigid_bodies(res: TeleopResults, learned: list[str], names: dict[str, str]) -> list[str]:
    """One sentence on whether the learned model pays as a force sensor: its felt error (mean of push and hold, over
    the seeds) against the identified rigid body's (below, about the same within :data:`_SAME_FELT`, or above: said
    plainly) and the nominal one's; empty without a learned model or without those cases."""

    def felt(model: str) -> float:
        v = [c.mean["felt_error"] for c in res.cases if c.model == model and c.scenario in ("push", "hold")]
        return float(np.mean(v)) if v and all(np.isfinite(v)) else math.nan

    if not learned:
        return []
    pick, ident, nom = felt(learned[0]), felt("identified"), felt("nominal")
    if not all(np.isfinite((pick, ident, nom))):
        return []
    if pick < ident - _SAME_FELT:
        verdict = "below the identified rigid body's ({:.1%}): as a force sensor it pays here"
    elif pick <= ident + _SAME_FELT:
        verdict = "about the identified rigid body's ({:.1%}): as a force sensor it adds nothing here"
    else:
        verdict = "above the identified rigid body's ({:.1%}): as a force sensor it does not pay here"
    versus = "below" if pick < nom else "not below"
    return [f"The felt error of {names[learned[0]]} ({pick:.1%}, push and hold) is {verdict.format(ident)}; it is "
            f"{versus} the nominal rigid body's ({nom:.1%}).", ""]


def _teleop_lines(report: DemoReport) -> list[str]:
    """The teleoperation stage's section: leader and follower with force feedback, the nominal rigid body against
    the dead-zone-aware models (the identified rigid body and the comparison's pick, named by its path in the demo's
    folder); empty without the stage."""
    from ..teleop.report import FELT_TARGET, plot_name

    res = report.teleop
    title = "## Teleoperation with force feedback (deadzone-id teleop)"
    if res is None:
        robot = str(report.config.get("robot") or "")
        command = "deadzone-id teleop --out teleop" + (f" --robot {robot}" if robot else "") + " --modes bilateral"
        return ([title, "", f"Not run: {report.teleop_skipped}. `{command} --models nominal identified` runs it "
                 "without the comparison's pick, `--models nominal` without a friction calibration "
                 "(docs/teleoperation.md).", ""] if report.teleop_skipped else [])
    d, robot = report.teleop_dir, str(report.config.get("robot") or "")
    pick = report.compare.pick
    learned = [m for m in dict.fromkeys(c.model for c in res.cases) if m not in ("nominal", "identified")]
    models = [m for m in ("nominal", "identified") if any(c.model == m for c in res.cases)] + learned
    names = {"nominal": "URDF nominal rigid body (no band)", "identified": "identified rigid body + band",
             **{m: f"the pick ({pick.method}) + band" if pick else f"{m} + band" for m in learned}}
    lines = [title, "",
             f"Two simulated {res.robot} arms as leader and follower, in bilateral control (the follower copies the "
             "leader, the operator feels the follower's contact), each arm's external torque sensed by its own "
             f"model (no force sensor). Seeds {res.seeds} x {res.duration:g} s per scenario; the scripted operator is "
             f"a joint impedance of {res.hand_stiffness:.3g} N·m/rad. Felt error: RMS of the torque the operator feels "
             "minus the true contact torque, over the RMS contact torque, all joints; mean over seeds (worst seed), "
             "and how many times smaller than the nominal rigid body's.", "",
             "| model | free motion: tracking RMSE [mrad] | push: felt error | hold: felt error | hold: oscillation "
             "(last / first) | stuck joint, gentle push: reflected / push, interval holds it | faults |",
             "|---|---|---|---|---|---|---|"]
    lines += [f"| {names[m]} | " + " | ".join(_teleop_cells(res, m)) + " |" for m in models]
    model = learned[0] if learned else "identified"
    felt = [c.worst["felt_error"] for c in res.cases if c.model == model and c.scenario in ("push", "hold")]
    met = bool(felt) and max(felt) <= FELT_TARGET
    lines += ["", *_pick_against_rigid_bodies(res, learned, names)]
    lines += [f"The target of {FELT_TARGET:.0%} felt error is {'met' if met else 'not met'} with "
              f"{names[model]}." + ("" if met else " In a held contact both arms' joints stick: a stuck joint's static "
                                    "friction hides the contact torque from any force-sensorless estimate, and the "
                                    "band says by how much (docs/teleoperation.md, \"Measured\"; teleop/teleop.md "
                                    "splits the error by cause)."), ""]
    live = f"deadzone-id launch teleop.launch.yaml scenario:=hold model:={model}" + _robot_arg(robot)
    lines += [f"Every case and why the felt force misses: [{d}/teleop.md]({d}/teleop.md). The same pair live over "
              f"DDS, from this folder: `{live}`.", "",
              f"![{names[model]}, hold]({d}/plots/{plot_name(model, 'bilateral', 'hold')})", ""]
    return lines


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
        *_sense_lines(report),
        *_teleop_lines(report),
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
