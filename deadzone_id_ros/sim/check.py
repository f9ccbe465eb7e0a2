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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..jsonrecord import JsonRecord

if TYPE_CHECKING:
    from ..robot.derived import DerivedRobot
    from .config import SimArmConfig

__all__ = ["CHATTER_FRACTION", "LIMIT_FRACTION", "MOVING_FRACTION", "NOISE_FLOOR_FRACTION", "TRACKING_FRACTION",
           "CheckSettings", "Finding", "JointFigures", "RobotCheck", "run_check", "write_check"]

#: Chatter: acceleration RMS above the band edge over the excitation's acceleration bound [1].
CHATTER_FRACTION = 0.5
#: Torque-rate limit or effort clamp active on more than this fraction of ticks [1].
LIMIT_FRACTION = 0.01
#: Tracking RMSE above this fraction of the reference's standard deviation (and above TRACKING_FLOOR) [1].
TRACKING_FRACTION = 0.1
#: Tracking RMSE below this is never a finding [rad].
TRACKING_FLOOR = 0.005
#: A joint outside its dead zone on fewer than this fraction of samples does not move [1].
MOVING_FRACTION = 0.3
#: Below this true speed a joint counts as stuck whatever its velocity spread (the offline simulator's rule) [rad/s].
STUCK_VELOCITY = 1e-3
#: A joint whose full excitation sweeps less than this fraction of its usable range barely moves [1].
RANGE_FRACTION = 0.05
#: Noise floor above this fraction of the standard deviation of the joint's torque [1] (measured: the chattering
#: Panda without rotor inertia 0.7-0.95, the shipped profiles at most 0.05).
NOISE_FLOOR_FRACTION = 0.5
#: The excitation's peak torque above this fraction of the effort limit saturates [1].
EFFORT_FRACTION = 0.9


@dataclass(frozen=True)
class CheckSettings:
    """How long and with which seed the check runs.

    Attributes:
        duration: closed-loop simulated time [s] (> 0).  seed: excitation and simulator-noise seed.
        excitation_duration: the length of the excitation whose range and torques are evaluated (not simulated) [s],
            that of the quick demo's episodes.
        alpha: dead-zone threshold in velocity standard deviations (the masked loss's default).
        sim_overrides: SimArmConfig fields replacing the profile's (``--sim-profile``).

    Raises:
        ValueError: a duration not > 0 or alpha < 0.
    """

    duration: float = 4.0
    seed: int = 1
    excitation_duration: float = 30.0
    alpha: float = 0.1
    sim_overrides: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from ..config import check_positive

        check_positive("duration", self.duration)
        check_positive("excitation_duration", self.excitation_duration)
        check_positive("alpha", self.alpha, allow_zero=True)


@dataclass(frozen=True)
class JointFigures(JsonRecord):
    """What the check measured at one joint.

    Attributes:
        joint: its name.
        chatter_accel_rms: true ddq RMS above the band edge [rad/s²].  acceleration_limit: the excitation's bound
            [rad/s²].
        rate_limit_fraction, clamp_fraction: ticks with the torque-rate limit / effort clamp acting [1].
        tracking_rmse: [rad].  reference_std: standard deviation of the reference position [rad].
        moving_fraction: samples outside the dead zone (|dq| > alpha sigma, true velocity) [1].
        range_swept: how far the full excitation moves the joint (max - min) [rad].  range_usable: its position
            range within the margins, at most twice the excitation amplitude [rad].
        peak_velocity_fraction: the excitation's peak |dq| over the velocity limit [1].
        peak_effort_fraction: its peak torque (simulator inverse dynamics with friction) over the effort limit [1].
        noise_floor: RMSE of the simulator's own inverse dynamics on moving samples [N·m].
        torque_std: standard deviation of the recorded torque on those samples [N·m].
        nominal_rbd_rmse: RMSE of the URDF's nominal rigid body on them [N·m].
    """

    joint: str
    chatter_accel_rms: float
    acceleration_limit: float
    rate_limit_fraction: float
    clamp_fraction: float
    tracking_rmse: float
    reference_std: float
    moving_fraction: float
    range_swept: float
    range_usable: float
    peak_velocity_fraction: float
    peak_effort_fraction: float
    noise_floor: float
    torque_std: float
    nominal_rbd_rmse: float


@dataclass(frozen=True)
class Finding(JsonRecord):
    """One problem of the profile.

    Attributes:
        check: ``fault``, ``chatter``, ``rate_limit``, ``clamp``, ``tracking``, ``motion``, ``effort`` or
            ``noise_floor``.
        joints: the joints concerned.  problem: what was measured.  fix: what to change, naming the profile key.
    """

    check: str
    joints: list[str]
    problem: str
    fix: str


@dataclass(frozen=True)
class RobotCheck(JsonRecord):
    """The result of :func:`run_check`.

    Attributes:
        robot: the profile's name.  duration [s], seed: of the closed-loop run.  band_hz: the chatter band edge [Hz].
        inertia_gain_max: the largest eigenvalue of diag(Jn) M(q)^-1 over sampled poses [1]
            (:func:`deadzone_id_ros.robot.inertia.inertia_spread`).  joints: per joint.  findings: the problems
        (none: trustworthy).  seconds: wall time of the check [s].
    """

    robot: str
    duration: float
    seed: int
    band_hz: float
    inertia_gain_max: float
    joints: list[JointFigures]
    findings: list[Finding]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: every field (``dataclasses.asdict``, NaN as null) plus ``trustworthy`` and ``verdict``."""
        from ..training.evaluate import json_clean

        return json_clean({**dataclasses.asdict(self), "trustworthy": self.trustworthy, "verdict": self.verdict})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], key: str = "") -> RobotCheck:
        """The inverse of :meth:`to_dict` (``trustworthy`` and ``verdict`` are recomputed).

        Raises:
            DataError: a missing or malformed key (named).
        """
        from ..jsonrecord import as_object, record_from_dict

        d = as_object(d, key, "a robot check")
        return record_from_dict(cls, {k: v for k, v in d.items() if k not in ("trustworthy", "verdict")}, key)

    @property
    def trustworthy(self) -> bool:
        """True when the check found nothing wrong."""
        return not self.findings

    @property
    def verdict(self) -> str:
        """``trustworthy`` or ``not trustworthy (checks: ...)``."""
        if self.trustworthy:
            return "trustworthy"
        return f"not trustworthy ({', '.join(sorted({f.check for f in self.findings}))})"

    @property
    def noise_floor_mean(self) -> float:
        """Mean over joints of the noise floor [N·m]."""
        return float(np.mean([j.noise_floor for j in self.joints]))

    @property
    def nominal_rbd_mean(self) -> float:
        """Mean over joints of the nominal rigid body's RMSE [N·m]."""
        return float(np.mean([j.nominal_rbd_rmse for j in self.joints]))

    def text(self) -> str:
        """The check as lines for a terminal: a table per joint, then each finding with its fix, then the verdict."""
        head = (f"robot check of {self.robot}: {self.duration:g} s closed loop (pd_dob, seed {self.seed}), chatter "
                f"band above {self.band_hz:.1f} Hz, inertia gain up to {self.inertia_gain_max:.1f}x, "
                f"{self.seconds:.1f} s")
        cols = ("joint", "chatter rad/s2", "rate lim", "clamp", "track mrad", "moving", "swept rad", "peak tau",
                "floor N*m", "tau std", "nominal rbd")
        rows = [cols] + [(j.joint, f"{j.chatter_accel_rms:.3g}/{j.acceleration_limit:.3g}",
                          f"{j.rate_limit_fraction:.1%}", f"{j.clamp_fraction:.1%}", f"{1e3 * j.tracking_rmse:.2f}",
                          f"{j.moving_fraction:.0%}", f"{j.range_swept:.2f}/{j.range_usable:.2f}",
                          f"{j.peak_effort_fraction:.0%}", f"{j.noise_floor:.3g}", f"{j.torque_std:.3g}",
                          f"{j.nominal_rbd_rmse:.3g}") for j in self.joints]
        width = [max(len(r[i]) for r in rows) for i in range(len(cols))]
        lines = [head] + ["  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, width)))
                          for r in rows]
        for f in self.findings:
            lines += [f"  PROBLEM ({f.check}) {', '.join(f.joints)}: {f.problem}", f"    fix: {f.fix}"]
        lines.append(f"verdict: the simulated {self.robot} is {self.verdict}")
        return "\n".join(lines) + "\n"


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
    from ..control import generate_excitation
    from ..robot_configs import excitation_config
    from .arm import SimArm

    cfg = dataclasses.replace(excitation_config(robot), duration=settings.excitation_duration, seed=settings.seed)
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
                       np.max(np.abs(tau), axis=0) / desc.effort_limit)


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
    import warnings

    from .config import FrictionSourceWarning

    settings = settings or CheckSettings()
    with warnings.catch_warnings():  # a profile's friction beside the URDF's is its point, said by `robot show`
        warnings.simplefilter("ignore", FrictionSourceWarning)
        return _run_check(robot, settings)


def _run_check(robot: DerivedRobot, settings: CheckSettings) -> RobotCheck:
    from ..control import build_controller, generate_excitation
    from ..data.dataset_config import DatasetConfig
    from ..models.runtime import load_model
    from ..robot.inertia import inertia_spread, mass_matrices, sample_poses
    from ..robot_configs import controller_config, excitation_config, sim_config
    from ..stamps import NS_PER_S
    from .arm import SimArm
    from .offline import _run_ticks, _substeps, _Trace

    t0 = time.perf_counter()
    rate = robot.profile.control_rate
    sim_cfg = dataclasses.replace(sim_config(robot, **settings.sim_overrides), seed=settings.seed)
    ctrl_cfg = controller_config(robot, mode="pd_dob", model="rbd")
    exc_cfg = dataclasses.replace(excitation_config(robot), duration=settings.duration, seed=settings.seed)
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
            f"derived bound at this spread is w_max / kappa = {robot.loop_crossover_limit / robot.inertia_gain:.3g} "
            "rad/s)")))
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
            "lower overrides.amplitude or overrides.acceleration_limit of these joints, or check the URDF's "
            "<limit effort> (the drive's peak torque)"))
    loose = where(lambda j: j.tracking_rmse > max(TRACKING_FRACTION * j.reference_std, TRACKING_FLOOR))
    if loose:
        worst = max((j for j in joints if j.joint in loose), key=lambda j: j.tracking_rmse)
        out.append(Finding("tracking", loose, (
            f"tracking RMSE up to {1e3 * worst.tracking_rmse:.1f} mrad at {worst.joint} "
            f"({worst.tracking_rmse / max(worst.reference_std, 1e-12):.0%} of the reference's spread)"),
            "see the other problems; else raise bandwidth (profile "
            f"{p.bandwidth:g} rad/s, derived {np.min(robot.bandwidth):.3g}) or settings.<joint>.bandwidth"))
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
            "gravity load, or check the URDF's <limit effort>"))
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


def write_check(spec: str, path: Path) -> RobotCheck:
    """Run the robot check of the profile ``spec`` (name or file) with the default settings and write it as JSON to
    ``path`` (what the demo records; its report reads it back with :meth:`RobotCheck.from_dict`).

    Raises:
        FileNotFoundError, ConfigError, RobotDescriptionError: the profile cannot be found or resolved.
    """
    import json

    from ..robot_configs import load_robot

    result = run_check(load_robot(spec))
    path.write_text(json.dumps(result.to_dict(), indent=2) + "\n")
    return result
