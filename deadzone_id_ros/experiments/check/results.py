"""The robot check's settings, thresholds and typed results (:mod:`.run` runs it; core, no ROS)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...jsonrecord import JsonRecord

__all__ = ["CHATTER_FRACTION", "LIMIT_FRACTION", "MOVING_FRACTION", "NOISE_FLOOR_FRACTION", "TRACKING_FRACTION",
           "CheckSettings", "Finding", "JointFigures", "RobotCheck"]

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
        from ...config import check_positive

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
        check: ``fault``, ``chatter``, ``loop_bound``, ``rate_limit``, ``clamp``, ``tracking``, ``motion``,
            ``effort`` or ``noise_floor``.
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
        from ...training.evaluate import json_clean

        return json_clean({**dataclasses.asdict(self), "trustworthy": self.trustworthy, "verdict": self.verdict})

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], key: str = "") -> RobotCheck:
        """The inverse of :meth:`to_dict` (``trustworthy`` and ``verdict`` are recomputed).

        Raises:
            DataError: a missing or malformed key (named).
        """
        from ...jsonrecord import as_object, record_from_dict

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
