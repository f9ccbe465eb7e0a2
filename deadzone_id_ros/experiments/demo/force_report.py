"""The demo's report.md sections on force: sensing force without a force sensor (the sense stage) and
teleoperation with force feedback (the teleop stage), from the typed results of :mod:`.sense.results` and
:mod:`.teleop.results`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..sense.report import push_cells, push_magnitudes
from .results import DemoReport

if TYPE_CHECKING:
    from ..teleop.results import CaseFigures, TeleopResults

__all__ = ["sense_lines", "teleop_lines"]


def sense_lines(report: DemoReport) -> list[str]:
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


def teleop_lines(report: DemoReport) -> list[str]:
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
