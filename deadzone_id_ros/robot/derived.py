"""Everything a robot profile does not say, derived from its URDF (pinocchio), with the formulas used.

For each controlled joint j (the profile's ``overrides`` beat every derived value; ``settings`` beat the URDF):

- limits: position, velocity and effort limits from the URDF's ``<limit>``, looked up by joint name (a continuous
  joint has none on position); a joint whose effort limit is 0 or missing is refused (:meth:`RobotDescription.\
check_effort_limits`). The profile's ``effort_limit`` setting (the actuator's datasheet) beats the URDF's.
- encoder resolution: the profile's ``encoder_resolution`` setting [rad per count], else
  :data:`ENCODER_RESOLUTION` (16 bits per turn).
- friction and damping: the profile's ``frictionloss`` / ``damping`` settings, else the URDF's ``<dynamics>``.
- nominal joint inertia: ``Jn_j = M(q_home)[j, j] + armature_j``, the diagonal of the joint-space inertia matrix of
  the reduced model (locked joints merged into their parents) at the home pose, from pinocchio's composite rigid
  body algorithm (``pinocchio.crba``; R. Featherstone, "Rigid Body Dynamics Algorithms", Springer 2008, ch. 6), plus
  the reflected rotor inertia the URDF cannot carry.
- gains for a closed-loop bandwidth w_j [rad/s] (the profile's per-joint ``bandwidth`` setting, else its
  ``bandwidth``) and damping ratio zeta: the acceleration-level PD ``ddq = ddq_ref + kp e + kd de`` of the
  computed-torque law gives the error dynamics ``s^2 + kd s + kp``, so ``kp = w^2`` [1/s²] and ``kd = 2 zeta w``
  [1/s] (zeta = 1: critically damped).
- DOB cutoff: ``g_j = min(dob_cutoff_ratio * w_j, DOB_CAP_FRACTION * g_max)`` [rad/s], with g_max the Nyquist limit
  ``pi * control_rate`` (:func:`deadzone_id_ros.control.config.dob_cutoff_limit`, zoh).
- torque rate limit: ``effort_limit_j / torque_rise_time`` (the effort limit above) [N·m/s]: the command may sweep
  the full effort limit in that time.
- excitation: amplitude ``(upper - lower) / 2`` (pi for a continuous joint) [rad]; acceleration limit
  ``velocity_limit_j * 2 pi * EXCITATION_TOP_FREQUENCY`` [rad/s²] (the top harmonic of the default excitation,
  5 x 0.1 Hz, at the velocity limit).
- simulated noise, when the profile gives none: torque noise ``TORQUE_NOISE_FRACTION * effort_limit`` [N·m],
  velocity noise ``VELOCITY_NOISE_STD`` [rad/s] (the bundled arm's encoder-derived figure).
- home pose: the profile's, else zeros clipped into the position limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import RobotDescriptionError
from .description import RobotDescription, load_robot_description
from .profile import RobotProfile

__all__ = ["DOB_CAP_FRACTION", "ENCODER_RESOLUTION", "EXCITATION_TOP_FREQUENCY", "TORQUE_NOISE_FRACTION",
           "VELOCITY_NOISE_STD",
           "DerivedRobot", "derive_robot", "resolve_profile_urdf"]

#: The derived DOB cutoff stays below this fraction of the Nyquist limit pi * control_rate.
DOB_CAP_FRACTION = 0.5
#: Highest harmonic of the default excitation (5 harmonics of 0.1 Hz) [Hz].
EXCITATION_TOP_FREQUENCY = 0.5
#: Default simulated torque noise as a fraction of the effort limit [1].
TORQUE_NOISE_FRACTION = 0.001
#: Default simulated velocity noise [rad/s].
VELOCITY_NOISE_STD = 0.002
#: Default encoder resolution, one count of a 16-bit-per-turn encoder [rad] (the bundled arm's simulator).
ENCODER_RESOLUTION = 2 * math.pi / 65536


@dataclass(frozen=True)
class DerivedRobot:
    """A profile with every per-joint value resolved. Arrays are (J,) in ``profile.joint_names`` order.

    Attributes:
        profile: the profile as written.
        urdf_path: the resolved URDF file.
        description: limits, friction and damping read from the URDF (by joint name).
        home: home pose [rad].
        mass_diagonal: diag M(q_home) of the reduced model [kg·m²].
        effort_limit: the actuator's effort limit [N·m] (profile setting, else the URDF's).
        encoder_resolution: one encoder count [rad].
        armature, nominal_inertia: [kg·m²].  bandwidth: w [rad/s].  kp [1/s²], kd [1/s].  dob_cutoff [rad/s].
        torque_rate_limit [N·m/s].  frictionloss [N·m], damping [N·m·s/rad].  torque_noise_std [N·m],
        velocity_noise_std [rad/s].  amplitude [rad], acceleration_limit [rad/s²].
        origin: value name -> per joint where it came from: "profile" (a setting), "override", "urdf" or "derived".
    """

    profile: RobotProfile
    urdf_path: Path
    description: RobotDescription
    home: np.ndarray
    mass_diagonal: np.ndarray
    effort_limit: np.ndarray
    encoder_resolution: np.ndarray
    armature: np.ndarray
    nominal_inertia: np.ndarray
    bandwidth: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    dob_cutoff: np.ndarray
    torque_rate_limit: np.ndarray
    frictionloss: np.ndarray
    damping: np.ndarray
    torque_noise_std: np.ndarray
    velocity_noise_std: np.ndarray
    amplitude: np.ndarray
    acceleration_limit: np.ndarray
    origin: dict[str, tuple[str, ...]]

    @property
    def joint_names(self) -> tuple[str, ...]:
        """(J,) the controlled joints."""
        return self.profile.joint_names

    def values(self, name: str) -> tuple[float, ...]:
        """A per-joint value as a tuple of floats (what the config dataclasses take)."""
        return tuple(float(v) for v in getattr(self, name))


def resolve_profile_urdf(profile: RobotProfile) -> Path:
    """The URDF file a profile names: a path relative to its folder, an absolute path, or a catalog name.

    Raises:
        FileNotFoundError, RobotDescriptionError: from :func:`deadzone_id_ros.robot.catalog.resolve_robot_model`.
    """
    from .catalog import resolve_robot_model

    local = profile.folder / profile.urdf
    if local.is_file():
        return local
    return resolve_robot_model(profile.urdf).urdf_path


def _mass_diagonal(urdf_path: Path, profile: RobotProfile, home: np.ndarray) -> np.ndarray:
    import pinocchio as pin

    from .reduced import build_reduced_model

    reduced = build_reduced_model(urdf_path.read_text(), profile.joint_names, locked=profile.locked,
                                  source=str(urdf_path))
    data = reduced.model.createData()
    mass = pin.crba(reduced.model, data, reduced.configuration(home)[0])
    return np.asarray(mass)[reduced.idx_v, reduced.idx_v].copy()


class _Picker:
    """Per-joint values: an override, else a profile setting, else a fallback, recording where each came from."""

    def __init__(self, profile: RobotProfile) -> None:
        self.profile = profile
        self.origin: dict[str, tuple[str, ...]] = {}

    def pick(self, name: str, fallback: np.ndarray, fallback_origin: str, setting: str | None = None) -> np.ndarray:
        if name in self.profile.overrides:
            self.origin[name] = ("override",) * len(fallback)
            return np.asarray(self.profile.overrides[name], dtype=float)
        out, where = np.asarray(fallback, dtype=float).copy(), []
        for i, joint in enumerate(self.profile.joint_names):
            s = self.profile.setting(joint, setting) if setting else None
            if s is not None:
                out[i] = s.value
            where.append("profile" if s is not None else fallback_origin)
        self.origin[name] = tuple(where)
        return out


def derive_robot(profile: RobotProfile) -> DerivedRobot:
    """Resolve every per-joint value of ``profile`` from its URDF (formulas: the module docstring).

    Raises:
        FileNotFoundError: the URDF does not exist.
        RobotDescriptionError: the URDF lacks a controlled or locked joint, or a controlled joint has an effort
            limit of 0 or none (names the joint and the fix).
    """
    urdf_path = resolve_profile_urdf(profile)
    desc = load_robot_description(urdf_path, profile.joint_names)
    desc.check_effort_limits()
    n = desc.n_joints
    if profile.home:
        home = np.asarray(profile.home, dtype=float)
        out = (home < desc.lower) | (home > desc.upper)
        if out.any():
            bad = [profile.joint_names[i] for i in np.flatnonzero(out)]
            raise RobotDescriptionError(f"{urdf_path}: home pose of {bad} lies outside the URDF position limits")
    else:
        home = np.clip(np.zeros(n), desc.lower, desc.upper)
    picker = _Picker(profile)
    pick = picker.pick
    armature = pick("armature", np.zeros(n), "derived", "armature")
    effort_limit = pick("effort_limit", desc.effort_limit, "urdf", "effort_limit")
    mass = _mass_diagonal(urdf_path, profile, home)
    w = pick("bandwidth", np.full(n, profile.bandwidth), "derived", "bandwidth")
    g_max = math.pi * profile.control_rate  # the Nyquist bound of control.config.dob_cutoff_limit (zoh)
    span = np.where(desc.continuous, 2 * math.pi, desc.upper - desc.lower)
    return DerivedRobot(
        profile=profile, urdf_path=urdf_path, description=desc, home=home, mass_diagonal=mass,
        effort_limit=effort_limit,
        encoder_resolution=pick("encoder_resolution", np.full(n, ENCODER_RESOLUTION), "derived", "encoder_resolution"),
        armature=armature,
        nominal_inertia=pick("nominal_inertia", mass + armature, "derived"), bandwidth=w,
        kp=pick("kp", w**2, "derived"), kd=pick("kd", 2 * profile.damping_ratio * w, "derived"),
        dob_cutoff=pick("dob_cutoff", np.minimum(profile.dob_cutoff_ratio * w, DOB_CAP_FRACTION * g_max), "derived"),
        torque_rate_limit=pick("torque_rate_limit", effort_limit / profile.torque_rise_time, "derived"),
        frictionloss=pick("frictionloss", desc.friction, "urdf", "frictionloss"),
        damping=pick("damping", desc.damping, "urdf", "damping"),
        torque_noise_std=pick("torque_noise_std", TORQUE_NOISE_FRACTION * effort_limit, "derived",
                              "torque_noise_std"),
        velocity_noise_std=pick("velocity_noise_std", np.full(n, VELOCITY_NOISE_STD), "derived",
                                "velocity_noise_std"),
        amplitude=pick("amplitude", np.minimum(span / 2, math.pi), "derived"),
        acceleration_limit=pick("acceleration_limit", desc.velocity_limit * 2 * math.pi * EXCITATION_TOP_FREQUENCY,
                                "derived"),
        origin=picker.origin)
