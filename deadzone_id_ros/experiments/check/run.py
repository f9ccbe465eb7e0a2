"""The robot check (``deadzone-id robot check PROFILE``; core, no ROS): a short in-process closed-loop test of a robot
profile in the simulator, saying what is wrong and what to change in the profile.

It runs the profile's simulated arm (:class:`~deadzone_id_ros.sim.SimArm`) under its excitation with its pd_dob
controller for a few simulated seconds (:func:`run_check`; the same objects as :func:`~deadzone_id_ros.sim.offline.
simulate`), and evaluates the profile's full-length excitation without simulating it. Per joint:

- chatter: the RMS of the true joint acceleration above the band edge ``f_c = 2 max(w, g) / (2 pi)`` [Hz] (w the
  closed-loop bandwidth, g the DOB cutoff: nothing the controller asks for lies above it), against the excitation's
  acceleration bound; a decentralized PD + DOB loop that sees a much lighter arm than its nominal inertia
  (:mod:`deadzone_id_ros.robot.inertia`) shakes at tens to hundreds of Hz there;
- the fraction of ticks on which the torque-rate limit and the effort clamp act;
- the tracking RMSE against the spread of the reference;
- whether the joint moves: the fraction of samples outside the dead zone (the masked loss's usable pairs,
  ``|dq| > alpha sigma``), and how much of its range the full excitation sweeps;
- the excitation's peak torque (the simulator's inverse dynamics with friction) against the effort limit;
- loop bound (static, from the profile alone): a DOB cutoff or a kd that a profile sets by hand above its joint's own
  stability bound, ``g_j <= w_max / m_j`` and ``kd_j <= w_max / m_j`` with ``m_j = max_q Jn_j (M(q)^-1)_jj`` (the
  mismatch of :func:`~deadzone_id_ros.robot.inertia.inertia_spread`) and w_max the delay's crossover limit
  (:mod:`deadzone_id_ros.robot.derived`). The derived values never exceed it (they use the largest eigenvalue,
  ``kappa >= m_j``); an override can, and its chatter may need a pose the short run does not reach (the bundled arm's
  joint1 at 150 rad/s against a bound of 90: clean on this check's seed, at the rate limit on 3 of 11 held-out
  excitations);
- the simulator's noise floor: its own inverse dynamics fed the measured q, dq and Savitzky–Golay ddq (as
  ``compare`` does) against the recorded torque, on moving samples, set against the spread of that torque and the
  error of the URDF's nominal rigid body. A floor near the torques themselves makes every torque comparison noise.

Each problem becomes a :class:`Finding` naming the joints and the profile key to change. A profile with no finding is
trustworthy: data from its simulated arm can carry a comparison of methods.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .results import (
    CHATTER_FRACTION,
    EFFORT_FRACTION,
    LIMIT_FRACTION,
    MOVING_FRACTION,
    NOISE_FLOOR_FRACTION,
    RANGE_FRACTION,
    STUCK_VELOCITY,
    TRACKING_FLOOR,
    TRACKING_FRACTION,
    CheckSettings,
    Finding,
    JointFigures,
    RobotCheck,
)

if TYPE_CHECKING:
    from ...robot.derived import DerivedRobot
    from ...sim.config import SimArmConfig

__all__ = ["run_check", "write_check"]


def _high_pass_rms(x: np.ndarray, rate_hz: float, edge_hz: float) -> np.ndarray:
    """(J,) RMS of the part of ``x`` (N, J) above ``edge_hz`` [Hz] (FFT mask, mean removed)."""
    spec = np.fft.rfft(x - x.mean(axis=0), axis=0)
    freq = np.fft.rfftfreq(len(x), 1.0 / rate_hz)
    spec[freq <= edge_hz] = 0.0
    return np.sqrt(np.mean(np.fft.irfft(spec, n=len(x), axis=0) ** 2, axis=0))


def _rmse(a: np.ndarray, b: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(J,) RMS of a - b over the samples where ``mask`` (N, J) holds (NaN for a joint without any)."""
    sq = np.where(mask, (a - b) ** 2, 0.0)
    n = mask.sum(axis=0)
    return np.where(n > 0, np.sqrt(sq.sum(axis=0) / np.maximum(n, 1)), np.nan)


def _masked_std(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(J,) standard deviation of ``x`` (N, J) over the samples where ``mask`` holds."""
    return np.array([float(np.std(x[mask[:, j], j])) if mask[:, j].any() else float("nan")
                     for j in range(x.shape[1])])


@dataclass(frozen=True)
class _Excitation:
    """The full-length excitation's figures per joint (J,): range swept and usable [rad], peak velocity and torque
    over their limits [1]."""

    swept: np.ndarray
    usable: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


def _excitation_figures(robot: DerivedRobot, sim_config: SimArmConfig, settings: CheckSettings) -> _Excitation:
    from ...control import generate_excitation
    from ...robot_configs import excitation_config
    from ...sim.arm import SimArm
    from ...sim.robot_configs import arm_values

    cfg = dataclasses.replace(excitation_config(robot, **arm_values(sim_config)), duration=settings.excitation_duration,
                              seed=settings.seed)
    points = generate_excitation(cfg, start=robot.values("home"))
    desc = robot.description
    margin = 2 * cfg.position_margin
    span = np.where(desc.continuous | ~np.isfinite(desc.upper - desc.lower), 2 * math.pi,
                    desc.upper - desc.lower - margin)
    usable = np.minimum(np.maximum(span, 0.0), 2 * np.asarray(cfg.amplitude))
    arm = SimArm(sim_config)
    assert points.velocity is not None and points.acceleration is not None  # the excitation gives both
    tau = arm.inverse_dynamics(points.position, points.velocity, points.acceleration, friction=True)
    return _Excitation(np.ptp(points.position, axis=0), usable,
                       np.max(np.abs(points.velocity), axis=0) / desc.velocity_limit,
                       np.max(np.abs(tau), axis=0) / arm.effort_limit)  # the limit the simulated drives hold


def run_check(robot: DerivedRobot, settings: CheckSettings | None = None) -> RobotCheck:
    """Check ``robot`` (a resolved profile) in the simulator: closed loop with pd_dob for ``settings.duration``
    simulated seconds, plus its full-length excitation evaluated without simulation (module docstring).

    Args:
        robot: the profile resolved against its URDF (:func:`deadzone_id_ros.robot.derived.derive_robot`).
        settings: duration, seed, excitation length, dead-zone alpha (default :class:`CheckSettings`).

    Returns:
        the figures per joint and the findings; ``trustworthy`` when there are none.

    Raises:
        FileNotFoundError, RobotDescriptionError: the URDF cannot be read or compiled by MuJoCo.
        ValueError: a bad ``settings.sim_overrides`` value.
    """
    # a profile's friction beside the URDF's is said once per joint and process (FrictionSourceWarning): here, when
    # the check is the first to build the arm; hiding it here would hide it from the command that runs the check
    return _run_check(robot, settings or CheckSettings())


def _run_check(robot: DerivedRobot, settings: CheckSettings) -> RobotCheck:
    from ...control import build_controller, generate_excitation
    from ...data.dataset_config import DatasetConfig
    from ...models.runtime import load_model
    from ...robot.inertia import inertia_spread, mass_matrices, sample_poses
    from ...robot_configs import controller_config, excitation_config, sim_config
    from ...sim.arm import SimArm
    from ...sim.offline import _run_ticks, _substeps, _Trace
    from ...sim.robot_configs import arm_values
    from ...stamps import NS_PER_S

    t0 = time.perf_counter()
    rate = robot.profile.control_rate
    sim_cfg = dataclasses.replace(sim_config(robot, **settings.sim_overrides), seed=settings.seed)
    ctrl_cfg = controller_config(robot, mode="pd_dob", model="rbd", **arm_values(sim_cfg))
    exc_cfg = dataclasses.replace(excitation_config(robot, **arm_values(sim_cfg)), duration=settings.duration,
                                  seed=settings.seed)
    arm = SimArm(sim_cfg)
    controller = build_controller(ctrl_cfg, arm.description)
    controller.set_reference(generate_excitation(exc_cfg, start=sim_cfg.initial_position))
    q0 = controller.reference.sample(0.0)[0]  # type: ignore[union-attr]
    arm.reset(q0)
    n = int(round(settings.duration * rate))
    trace = _Trace.empty(n, arm.n_joints)
    _run_ticks(arm, controller, trace, int(round(NS_PER_S / rate)), _substeps(rate, sim_cfg.timestep), False)

    band = min(2 * max(float(np.max(robot.dob_cutoff)), float(np.max(robot.bandwidth))) / (2 * math.pi), rate / 4)
    true_ddq = np.diff(trace.true_dq, axis=0) * rate
    chatter = _high_pass_rms(true_ddq, rate, band)
    err = trace.ref_q - trace.pos
    # outside the dead zone: the masked loss's rule on the true velocity, and faster than the simulator's creep
    moving = np.abs(trace.true_dq) > np.maximum(settings.alpha * trace.true_dq.std(axis=0), STUCK_VELOCITY)

    # the noise floor as compare measures it: the simulator's inverse dynamics on measured q, dq, Savitzky-Golay ddq
    from scipy.signal import savgol_filter

    dcfg = DatasetConfig()
    window = dcfg.window_samples(rate)
    ddq = savgol_filter(trace.vel, window, dcfg.savgol_order, deriv=1, delta=1.0 / rate, axis=0, mode="interp")
    keep = np.zeros(n, dtype=bool)
    keep[window: n - window] = True
    mask = moving & keep[:, None]
    floor = _rmse(arm.inverse_dynamics(trace.pos, trace.vel, ddq, friction=True), trace.eff, mask)
    nominal = load_model(ctrl_cfg).predict(trace.pos, trace.vel, ddq)
    exc = _excitation_figures(robot, sim_cfg, settings)

    poses = sample_poses(robot.description.lower, robot.description.upper, robot.home)
    spread = inertia_spread(robot.joint_names, mass_matrices(robot.urdf_path, robot.joint_names,
                                                             robot.profile.locked, poses),
                            robot.armature, robot.nominal_inertia, poses)
    joints = [JointFigures(
        joint=name, chatter_accel_rms=float(chatter[j]), acceleration_limit=float(robot.acceleration_limit[j]),
        rate_limit_fraction=float(controller.status.rate_limit_events[j]) / n,
        clamp_fraction=float(controller.status.clamp_events[j]) / n,
        tracking_rmse=float(np.sqrt(np.mean(err[:, j] ** 2))), reference_std=float(np.std(trace.ref_q[:, j])),
        moving_fraction=float(moving[:, j].mean()), range_swept=float(exc.swept[j]),
        range_usable=float(exc.usable[j]), peak_velocity_fraction=float(exc.velocity[j]),
        peak_effort_fraction=float(exc.effort[j]), noise_floor=float(floor[j]),
        torque_std=float(_masked_std(trace.eff, mask)[j]),
        nominal_rbd_rmse=float(_rmse(nominal, trace.eff, mask)[j])) for j, name in enumerate(robot.joint_names)]
    return RobotCheck(robot=robot.profile.name, duration=float(settings.duration), seed=int(settings.seed),
                      band_hz=float(band), inertia_gain_max=spread.gain_max, joints=joints,
                      findings=_findings(robot, joints, spread, band, _fault(controller)),
                      seconds=time.perf_counter() - t0)


def _fault(controller) -> Finding | None:
    """The controller's latched fault (tracking error or position limit: it then held and dropped the torque)."""
    safety = controller.safety
    if not safety.tripped:
        return None
    joints = [j for j in controller.joint_names if j in safety.fault]
    return Finding("fault", joints or list(controller.joint_names),
                   f"the controller's safety stopped the arm at {safety.fault_time:.2f} s: {safety.fault}",
                   "see the other problems; the figures after the fault are of an arm without torque")


def _findings(robot: DerivedRobot, joints: list[JointFigures], spread, band: float,
              fault: Finding | None) -> list[Finding]:
    """The problems of the figures, each with the profile key to change (thresholds: the module's constants)."""
    p = robot.profile
    out: list[Finding] = [fault] if fault else []
    names = [j.joint for j in joints]

    def where(pred) -> list[str]:
        return [j.joint for j in joints if pred(j)]

    shaking = where(lambda j: j.chatter_accel_rms > CHATTER_FRACTION * j.acceleration_limit)
    dob_key = (f"overrides.dob_cutoff (now {np.max(robot.dob_cutoff):.3g} rad/s)"
               if "override" in robot.origin.get("dob_cutoff", ())
               else f"dob_cutoff_ratio (now {p.dob_cutoff_ratio:g})")
    if shaking:
        bound = robot.loop_crossover_limit / robot.inertia_gain
        at_bound = ("override" not in robot.origin.get("dob_cutoff", ())
                    and float(np.max(robot.dob_cutoff)) >= bound * (1 - 1e-9))
        lead = spread.leading_joints() or shaking
        worst = max(joints, key=lambda j: j.chatter_accel_rms / j.acceleration_limit)
        mism = ", ".join(f"{names[i]} {spread.mismatch[i]:.0f}x" for i in np.argsort(-spread.mismatch)[:3])
        out.append(Finding("chatter", shaking, (
            f"the arm shakes: true acceleration above {band:.0f} Hz up to {worst.chatter_accel_rms:.3g} rad/s^2 RMS "
            f"at {worst.joint} (the excitation asks at most {worst.acceleration_limit:.3g}). Over the workspace the "
            f"arm looks up to {spread.gain_max:.0f}x lighter to its joint loops than their nominal inertia "
            f"(diag(Jn) M(q)^-1; worst joints {', '.join(lead)}; per joint {mism}), which its PD + DOB loops "
            f"(DOB cutoff {np.max(robot.dob_cutoff):.0f} rad/s, {p.control_rate:g} Hz) cannot take with the "
            "actuation delay"), (
            f"give settings.{lead[0]}.armature (and the other joints' armature): the reflected rotor inertia of "
            f"the drive, rotor inertia x gear ratio^2 [kg*m^2], from its datasheet; or lower {dob_key} (the "
            f"derived bound at this spread is w_max / kappa = {bound:.3g} rad/s"
            + (f"; the DOB cutoff is already at it: a ratio above {bound / float(np.min(robot.bandwidth)):.3g} changes "
               "nothing, and a loop within the bound that still shakes points at the actuation delay "
               "(actuation_delay) or at forces the joint-space model lacks" if at_bound else "") + ")")))
    loop_finding = _loop_bound(robot, spread)
    if loop_finding is not None:
        out.append(loop_finding)
    rated = where(lambda j: j.rate_limit_fraction > LIMIT_FRACTION)
    if rated:
        out.append(Finding("rate_limit", rated, (
            f"the torque-rate limit acts on {max(j.rate_limit_fraction for j in joints):.1%} of ticks"
            + (" (the chatter above)" if shaking else "")),
            "cure the chatter first" if shaking else
            f"lower torque_rise_time (now {p.torque_rise_time:g} s: the rate limit is effort_limit / rise time) "
            "or overrides.torque_rate_limit, if the drive allows it"))
    clamped = where(lambda j: j.clamp_fraction > LIMIT_FRACTION)
    if clamped:
        out.append(Finding("clamp", clamped, (
            f"the effort limit clamps the command on up to {max(j.clamp_fraction for j in joints):.1%} of ticks"),
            "lower overrides.amplitude or overrides.acceleration_limit of these joints, or check the effort limit "
            "(the profile's settings.<joint>.effort_limit, else the URDF's <limit effort>: the drive's peak torque)"))
    loose = where(lambda j: j.tracking_rmse > max(TRACKING_FRACTION * j.reference_std, TRACKING_FLOOR))
    if loose:
        worst = max((j for j in joints if j.joint in loose), key=lambda j: j.tracking_rmse)
        out.append(Finding("tracking", loose, (
            f"tracking RMSE up to {1e3 * worst.tracking_rmse:.1f} mrad at {worst.joint} "
            f"({worst.tracking_rmse / max(worst.reference_std, 1e-12):.0%} of the reference's spread)"
            + _friction_bound(robot, loose)), _tracking_fix(robot, loose)))
    still = where(lambda j: j.moving_fraction < MOVING_FRACTION or j.range_swept < RANGE_FRACTION * j.range_usable)
    if still:
        detail = "; ".join(f"{j.joint} moves on {j.moving_fraction:.0%} of samples and sweeps {j.range_swept:.2f} of "
                           f"{j.range_usable:.2f} rad" for j in joints if j.joint in still)
        out.append(Finding("motion", still, f"joints barely move under the excitation: {detail}", (
            "raise overrides.amplitude / overrides.acceleration_limit of these joints, check the URDF's velocity "
            "limit, or lower settings.<joint>.frictionloss if their static friction holds them; where the "
            "excitation shrank to keep the torque within the effort limits (gravity), pick a home pose with less "
            "gravity load (home)")))
    heavy = where(lambda j: j.peak_effort_fraction > EFFORT_FRACTION)
    if heavy:
        out.append(Finding("effort", heavy, (
            "the excitation needs up to " + ", ".join(f"{j.peak_effort_fraction:.0%} ({j.joint})" for j in joints
                                                      if j.joint in heavy) + " of the effort limit"),
            "lower overrides.amplitude / overrides.acceleration_limit of these joints, pick a home pose with less "
            "gravity load, or check the effort limit (settings.<joint>.effort_limit, else the URDF's <limit effort>)"))
    noisy = where(lambda j: not j.noise_floor <= NOISE_FLOOR_FRACTION * j.torque_std)
    if noisy:
        detail = "; ".join(f"{j.joint} {j.noise_floor:.3g} N*m vs {j.torque_std:.3g}" for j in joints
                           if j.joint in noisy)
        out.append(Finding("noise_floor", noisy, (
            f"the simulator's own inverse dynamics misses the recorded torque by more than "
            f"{NOISE_FLOOR_FRACTION:.0%} of its spread ({detail}): a comparison of torque models on this arm "
            "compares noise"), "cure the problems above" if len(out) else (
            "lower settings.<joint>.torque_noise_std or velocity_noise_std, or move the joint more "
            "(overrides.amplitude)")))
    return out


def _loop_bound(robot: DerivedRobot, spread) -> Finding | None:
    """The ``loop_bound`` finding: joints whose DOB cutoff or kd [rad/s] lies above ``w_max / mismatch_j`` (module
    docstring), or None. Each named with its value, its bound and where the value came from (override, profile)."""
    w_max = robot.loop_crossover_limit
    limit = w_max / np.maximum(np.asarray(spread.mismatch, dtype=float), 1.0)
    over = []
    for key, values in (("dob_cutoff", robot.dob_cutoff), ("kd", robot.kd)):
        origin = robot.origin.get(key, ("derived",) * len(values))
        for i, name in enumerate(robot.joint_names):
            if values[i] > limit[i] * (1 + 1e-9):
                over.append((key, name, float(values[i]), float(limit[i]), origin[i]))
    if not over:
        return None
    detail = "; ".join(f"{name} {key} {v:.4g} rad/s ({o}) > {b:.3g}" for key, name, v, b, o in over)
    fixes = "; ".join(f"{'overrides.' + key if o == 'override' else key} of {name} at most {b:.3g} rad/s"
                      for key, name, v, b, o in over)
    return Finding("loop_bound", sorted({name for _, name, *_ in over}, key=robot.joint_names.index), (
        f"set above the joint's stability bound w_max / m_j, the delay's crossover limit w_max = {w_max:.4g} rad/s "
        f"over how much lighter than its nominal inertia the joint gets in the sampled workspace m_j "
        f"(max Jn_j (M(q)^-1)_jj): {detail}. The loop loses its phase margin in those poses and chatters there, "
        "which a short run may not reach"), (
        f"lower {fixes} (or leave them to the derivation), or give the joints' rotor inertia (settings.<joint>."
        "armature) from the drive's datasheet, which raises the bound"))


def _sticky(robot: DerivedRobot, joints: list[str]) -> list[tuple[str, float, float]]:
    """(joint, static friction over effort limit [1], position error the PD alone needs to break it away [rad]) of
    the ``joints`` whose friction the loop cannot hold: ``frictionloss / (Jn kp)`` above TRACKING_FLOOR."""
    out = []
    for name in joints:
        i = robot.joint_names.index(name)
        need = float(robot.frictionloss[i] / (robot.nominal_inertia[i] * robot.kp[i]))
        if need > TRACKING_FLOOR:
            out.append((name, float(robot.frictionloss[i] / robot.effort_limit[i]), need))
    return out


def _friction_bound(robot: DerivedRobot, joints: list[str]) -> str:
    """The tracking finding's cause where static friction dominates a light joint (else "")."""
    sticky = _sticky(robot, joints)
    if not sticky:
        return ""
    worst = max(sticky, key=lambda t: t[2])
    i = robot.joint_names.index(worst[0])
    return (f"; static friction dominates: at {worst[0]} frictionloss {robot.frictionloss[i]:.3g} N*m "
            f"({robot.origin['frictionloss'][i]}) is {worst[1]:.0%} of the effort limit on a nominal inertia of "
            f"{robot.nominal_inertia[i]:.3g} kg*m^2, so the PD alone needs {1e3 * worst[2]:.0f} mrad of error to break "
            "it away, and after each reversal the DOB needs time to catch up")


def _tracking_fix(robot: DerivedRobot, joints: list[str]) -> str:
    """What to change for a tracking finding: the friction (where it dominates), else the bandwidth."""
    p = robot.profile
    band = (f"raise bandwidth (profile {p.bandwidth:g} rad/s, derived {np.min(robot.bandwidth):.3g}; the loop delay "
            f"allows up to w_max / (2 zeta kappa) = "
            f"{robot.loop_crossover_limit / (2 * p.damping_ratio * robot.inertia_gain):.3g}) or "
            "settings.<joint>.bandwidth")
    sticky = _sticky(robot, joints)
    if not sticky:
        return f"see the other problems; else {band}"
    names = ", ".join(t[0] for t in sticky)
    return (f"give settings.<joint>.frictionloss of {names} from the drive (many URDFs carry a placeholder "
            "<dynamics friction>), or settings.<joint>.armature if the drive's rotor inertia is larger than the "
            f"default rule's; else {band}")


def write_check(spec: str, path: Path) -> RobotCheck:
    """Run the robot check of the profile ``spec`` (name or file) with the default settings and write it as JSON to
    ``path`` (what the demo records; its report reads it back with :meth:`RobotCheck.from_dict`).

    Raises:
        FileNotFoundError, ConfigError, RobotDescriptionError: the profile cannot be found or resolved.
    """
    import json

    from ...robot_configs import load_robot

    result = run_check(load_robot(spec))
    path.write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    return result
