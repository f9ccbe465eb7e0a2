"""Configuration of the simulated arm (physics), from config/sim_arm.yaml. The sim_arm node's own settings (timing)
and the parameter-file loader are beside it: :mod:`deadzone_id_ros.sim.sim_arm_params` (ROS-free, used by the node)."""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..config import check_joint_names, check_per_joint, check_positive
from ..robot.derived import ENCODER_RESOLUTION

if TYPE_CHECKING:
    from ..robot import RobotDescription

__all__ = [
    "EFFORT_READOUTS",
    "PROFILES",
    "FrictionSourceWarning",
    "SimArmConfig",
    "filled",
    "resolve_urdf_friction",
    "sim_config_from_metadata",
]

T = TypeVar("T")

#: What a simulated joint's ``effort`` may report (:class:`SimArmConfig` ``effort_readout``).
EFFORT_READOUTS = ("torque", "present_load")


# Per-effect parameters a profile sets; an explicit value (in the parameter file or the constructor) overrides it.
# Sources and equations: deadzone_id_ros/sim/geared.py. A per-joint value is one number repeated for every joint.
PROFILES: dict[str, dict[str, float]] = {
    # The arm before geared-joint effects: constant frictionloss, white torque noise, no delay (bit-for-bit the
    # simulator of the releases before this key existed).
    "ideal": {"friction_stribeck_ratio": 0.0, "stribeck_velocity": 1.0, "stribeck_exponent": 2.0,
              "load_friction": 0.0, "load_friction_stribeck": 0.0, "ripple_amplitude": 0.0,
              "ripple_cycles_per_rad": 0.0, "actuation_delay": 0.0, "measurement_delay": 0.0,
              "velocity_filter_cutoff": 0.0},
    # A desktop arm driven by geared servos (see geared.py for the source of every number and how it is scaled).
    "geared_desktop_arm": {"friction_stribeck_ratio": 0.388, "stribeck_velocity": 1.52, "stribeck_exponent": 1.33,
                           "load_friction": 0.0, "load_friction_stribeck": 0.234, "ripple_amplitude": 0.0,
                           "ripple_cycles_per_rad": 0.0, "actuation_delay": 0.001, "measurement_delay": 0.0,
                           "velocity_filter_cutoff": 0.0},
}
PER_JOINT_PROFILE_KEYS = ("friction_stribeck_ratio", "stribeck_velocity", "load_friction", "load_friction_stribeck",
                          "ripple_amplitude", "ripple_cycles_per_rad")


@dataclass(frozen=True)
class SimArmConfig:
    """Physics of the simulated arm. Per-joint tuples have length J and follow ``joint_names``.

    ``joint_names``, ``armature``, the noise tuples and ``initial_position`` have no default (keyword-only,
    required): build the config for a robot from its profile with :func:`deadzone_id_ros.sim.robot_configs.sim_config`
    (the bundled arm: :func:`~deadzone_id_ros.sim.robot_configs.bundled_sim_config`).

    Profiles: ``profile`` picks the defaults of every geared-joint effect (:data:`PROFILES`): "geared_desktop_arm"
    (default) or "ideal" (the plain rigid arm with Coulomb friction, bit for bit the simulator before profiles
    existed). A field left at None takes the profile's value; a field given explicitly overrides it. After
    construction every field holds its resolved value (None only for ``frictionloss``/``damping``, see below).

    Attributes:
        profile: "geared_desktop_arm" or "ideal".
        urdf_path: URDF to load; "" means the bundled ``urdf/three_dof_arm.urdf``.
        joint_names: (J,) joints to actuate, by name.
        timestep: physics step [s].
        frictionloss: (J,) static (breakaway, no-load) friction, the dead zone half-width [N·m]; >= 0. None (the
            default): the URDF's ``<dynamics friction>``, which the URDF specification defines as the physical
            static friction. Given explicitly it overrides the URDF, with a warning naming each joint that differs.
        damping: (J,) viscous friction [N·m·s/rad]; >= 0. None (the default): the URDF's ``<dynamics damping>``;
            given explicitly it overrides the URDF, with a warning per joint that differs.
        armature: (J,) reflected rotor inertia [kg·m²]; >= 0.
        torque_noise_std: (J,) random part of the unmeasured torque ripple, white noise on the applied torque [N·m].
        friction_stribeck_ratio: (J,) (Fs - Fc) / Fc: how far static friction lies above kinetic (Coulomb) friction.
        stribeck_velocity: (J,) Stribeck velocity vs [rad/s] (> 0).
        stribeck_exponent: exponent alpha of the Stribeck curve exp(-(|v|/vs)^alpha) (> 0).
        load_friction: (J,) friction per N·m of transmitted torque at any speed [1].
        load_friction_stribeck: (J,) extra friction per N·m of transmitted torque at rest, fading with the Stribeck
            curve [1].
        ripple_amplitude: (J,) amplitude of the position-periodic part of the torque ripple (cogging) [N·m].
        ripple_cycles_per_rad: (J,) its spatial frequency, periods per radian of joint travel [1/rad].
        actuation_delay: time from a command to its effect on the arm [s]; a whole number of physics steps.
        measurement_delay: age of the reported state [s]; a whole number of physics steps.
        velocity_filter_cutoff: first-order low-pass on the measured velocity [Hz]; 0 disables.
        payload_mass_range: (min, max) mass of a point payload [kg], drawn uniformly once per episode (per SimArm,
            from ``seed`` on its own random stream); (0, 0) (the default of both profiles) means no payload.
        payload_position: (3,) where the payload sits, in the frame of the child link of the last joint of
            ``joint_names`` [m] (default: the tip of the bundled arm's last link).
        velocity_noise_std: (J,) white noise on the measured velocity [rad/s].
        encoder_resolution: (J,) one encoder count [rad]: the reported position is a whole number of counts
            (``round(q / res) * res``); 0 disables it for that joint. A single number applies to every joint. Empty
            (the default): the robot profile's ``encoder_resolution`` setting, else 16 bits per turn.
        effort_limit: (J,) the actuators' effort limit [N·m]: commands saturate there. Empty (the default): the robot
            profile's (its ``effort_limit`` setting, else the URDF's ``<limit effort>``).
        effort_readout: what ``effort`` reports: "torque" (the applied torque [N·m], what a ros2_control effort
            interface reports) or "present_load" (a Feetech/Dynamixel servo's Present_Load: the motor's PWM duty in
            units of 0.1 %, an integer in [-1000, 1000], :func:`present_load`; unit
            :data:`~deadzone_id_ros.data.effort_units.PRESENT_LOAD`).
        no_load_speed: (J,) the servo's no-load speed [rad/s] (> 0), for ``effort_readout`` "present_load" (the
            back-EMF part of the duty); empty: that part is left out.
        friction_solref, friction_solimp: MuJoCo solver parameters of the friction constraint.
        initial_position: (J,) [rad].
        seed: seed of the noise generator.
        locked_joints: ``"urdf_joint=value"`` entries [rad or m]: where the URDF joints that are not in
            ``joint_names`` are held (the robot profile's ``locked``). Every URDF joint that is not actuated is
            welded in place, at its value here or 0 (multi-DOF joints at neutral), as pinocchio's reduced model
            holds it (:mod:`deadzone_id_ros.sim.locked`).

    Raises:
        ValueError: an unknown profile, or a bad value (the message names the field and the value).
    """

    profile: str = "geared_desktop_arm"
    urdf_path: str = ""
    joint_names: tuple[str, ...] = field(kw_only=True)
    timestep: float = 0.001
    frictionloss: tuple[float, ...] | None = None
    damping: tuple[float, ...] | None = None
    armature: tuple[float, ...] = field(kw_only=True)
    torque_noise_std: tuple[float, ...] = field(kw_only=True)
    friction_stribeck_ratio: tuple[float, ...] | None = None
    stribeck_velocity: tuple[float, ...] | None = None
    stribeck_exponent: float | None = None
    load_friction: tuple[float, ...] | None = None
    load_friction_stribeck: tuple[float, ...] | None = None
    ripple_amplitude: tuple[float, ...] | None = None
    ripple_cycles_per_rad: tuple[float, ...] | None = None
    actuation_delay: float | None = None
    measurement_delay: float | None = None
    velocity_filter_cutoff: float | None = None
    payload_mass_range: tuple[float, ...] = (0.0, 0.0)
    payload_position: tuple[float, ...] = (0.0, 0.0, 0.22)
    velocity_noise_std: tuple[float, ...] = field(kw_only=True)
    encoder_resolution: tuple[float, ...] | float = ()
    effort_limit: tuple[float, ...] = ()
    effort_readout: str = "torque"
    no_load_speed: tuple[float, ...] = ()
    friction_solref: tuple[float, ...] = (0.002, 1.0)
    friction_solimp: tuple[float, ...] = (0.99, 0.999, 0.001, 0.5, 2.0)
    initial_position: tuple[float, ...] = field(kw_only=True)
    seed: int = 0
    locked_joints: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        n = check_joint_names(self.joint_names)
        both = sorted(set(self.locked_positions) & set(self.joint_names))
        if both:
            raise ValueError(f"locked_joints {both} are also actuated joints (joint_names)")
        if self.profile not in PROFILES:
            raise ValueError(f"profile = {self.profile!r} is not one of {sorted(PROFILES)}")
        for key, value in PROFILES[self.profile].items():
            if getattr(self, key) is None:
                object.__setattr__(self, key, (value,) * n if key in PER_JOINT_PROFILE_KEYS else value)
        if not (isinstance(self.timestep, (int, float)) and 0 < self.timestep <= 0.01):
            raise ValueError(f"timestep = {self.timestep!r} must be in (0, 0.01] s")
        for name in ("frictionloss", "damping"):
            if getattr(self, name) is not None:
                check_per_joint(name, getattr(self, name), n, sign="non-negative")
        for name in ("armature", "torque_noise_std", "velocity_noise_std", "friction_stribeck_ratio",
                     "load_friction", "load_friction_stribeck", "ripple_amplitude", "ripple_cycles_per_rad"):
            check_per_joint(name, getattr(self, name), n, sign="non-negative")
        check_per_joint("stribeck_velocity", filled(self.stribeck_velocity), n, sign="positive")
        check_per_joint("initial_position", self.initial_position, n, sign="any")
        load, load_s = filled(self.load_friction), filled(self.load_friction_stribeck)
        if any(k + ks >= 1.0 for k, ks in zip(load, load_s)):
            raise ValueError(
                f"load_friction + load_friction_stribeck must be < 1 per joint (friction cannot exceed the "
                f"torque it resists); got {list(load)} and {list(load_s)}"
            )
        check_positive("stribeck_exponent", self.stribeck_exponent)
        for name in ("actuation_delay", "measurement_delay"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0 <= value <= 1.0):
                raise ValueError(f"{name} = {value!r} must be in [0, 1] s")
            steps = value / self.timestep
            if abs(steps - round(steps)) > 1e-6:
                raise ValueError(f"{name} = {value} s must be a whole number of physics steps of {self.timestep} s")
        lo_hi = self.payload_mass_range
        if not (len(lo_hi) == 2 and all(isinstance(v, (int, float)) and math.isfinite(v) for v in lo_hi)
                and 0 <= lo_hi[0] <= lo_hi[1]):
            raise ValueError(f"payload_mass_range = {list(lo_hi)} must be [min, max] with 0 <= min <= max kg")
        if len(self.payload_position) != 3:
            raise ValueError(f"payload_position must have 3 values [m], got {list(self.payload_position)}")
        check_positive("velocity_filter_cutoff", self.velocity_filter_cutoff, allow_zero=True)
        given = self.encoder_resolution
        if isinstance(given, tuple):
            res = given if given else (ENCODER_RESOLUTION,) * n
        else:  # one number for every joint (parameter files and episode.yaml written before it was per joint)
            res = (given,) * n
        check_per_joint("encoder_resolution", res, n, sign="non-negative")
        object.__setattr__(self, "encoder_resolution", tuple(float(v) for v in res))
        if self.effort_limit:
            check_per_joint("effort_limit", self.effort_limit, n, sign="positive")
        if self.effort_readout not in EFFORT_READOUTS:
            raise ValueError(f"effort_readout = {self.effort_readout!r} must be one of {list(EFFORT_READOUTS)}")
        if self.no_load_speed:
            check_per_joint("no_load_speed", self.no_load_speed, n, sign="positive")
        if len(self.friction_solref) != 2:
            raise ValueError(f"friction_solref must have 2 values, got {list(self.friction_solref)}")
        if len(self.friction_solimp) != 5:
            raise ValueError(f"friction_solimp must have 5 values, got {list(self.friction_solimp)}")

    @property
    def locked_positions(self) -> dict[str, float]:
        """``locked_joints`` as URDF joint -> position [rad or m].

        Raises:
            ValueError: an entry that is not ``name=number`` or a joint given twice.
        """
        from ..robot.reduced import locked_positions

        return locked_positions(self.locked_joints)

    @property
    def is_ideal(self) -> bool:
        """True when no geared-joint effect is active (the plain rigid arm with constant Coulomb friction)."""
        return (not any(filled(self.friction_stribeck_ratio)) and not any(filled(self.load_friction))
                and not any(filled(self.load_friction_stribeck)) and not any(filled(self.ripple_amplitude))
                and self.actuation_delay == 0 and self.measurement_delay == 0 and self.velocity_filter_cutoff == 0)


class FrictionSourceWarning(UserWarning):
    """The parameter file's friction or damping differs from the URDF's for a joint (the parameter file wins)."""


def resolve_urdf_friction(config: SimArmConfig, description: RobotDescription) -> SimArmConfig:
    """Fill ``frictionloss``/``damping`` [N·m, N·m·s/rad] left at None from the URDF's ``<dynamics>``; the URDF is the
    source of truth unless the parameter file overrides it explicitly.

    Warns:
        FrictionSourceWarning: per joint where an explicit value differs from the URDF's, once per process for each
            (URDF, joint, key, value); never for a value that a shipped robot profile of this URDF gives with its
            source (the profile overrides its URDF on purpose, e.g. the SO-101's servo friction).
    """
    urdf = {"frictionloss": description.friction, "damping": description.damping}
    tag = {"frictionloss": "<dynamics friction>", "damping": "<dynamics damping>"}
    resolved: dict[str, Any] = {}
    for key, from_urdf in urdf.items():
        given = getattr(config, key)
        if given is None:
            resolved[key] = tuple(float(v) for v in from_urdf)
            continue
        for name, mine, theirs in zip(config.joint_names, given, from_urdf):
            if np.isclose(mine, theirs, rtol=1e-9, atol=1e-12):
                continue
            said = (str(description.urdf_path), name, key, float(mine), float(theirs))
            if said in _FRICTION_SAID or _shipped_setting(str(description.urdf_path), name, key, float(mine)):
                continue
            _FRICTION_SAID.add(said)
            warnings.warn(
                f"joint {name}: {key} = {mine:g} (robot profile or parameter file) overrides the URDF's "
                f"{tag[key]} = {theirs:g} ({description.urdf_path}); the simulator uses {mine:g}, a rigid-body "
                "model read from the URDF uses the other", FrictionSourceWarning, stacklevel=3)
    return dataclasses.replace(config, **resolved) if resolved else config


#: (URDF, joint, key, value, URDF's value) already warned about in this process: said once per joint, not per arm.
_FRICTION_SAID: set[tuple[str, str, str, float, float]] = set()


@functools.lru_cache(maxsize=16)
def _shipped_settings(urdf_path: str) -> dict[tuple[str, str], float]:
    """{(joint, key): value} of the settings (each with its source) of every shipped robot profile whose URDF is
    ``urdf_path``; {} when none is (or a shipped profile cannot be read: then it is not this one)."""
    from ..errors import DeadzoneIdError
    from ..robot.derived import resolve_profile_urdf
    from ..robot.profile import available_profiles, load_profile

    out: dict[tuple[str, str], float] = {}
    for path in available_profiles().values():
        try:
            profile = load_profile(path)
            if Path(resolve_profile_urdf(profile)).resolve() != Path(urdf_path).resolve():
                continue
        except (DeadzoneIdError, FileNotFoundError):
            continue
        for joint, entries in profile.settings.items():
            out.update({(joint, key): s.value for key, s in entries.items()})
    return out


def _shipped_setting(urdf_path: str, joint: str, key: str, value: float) -> bool:
    """Whether a shipped profile of ``urdf_path`` sets ``key`` of ``joint`` to ``value``."""
    shipped = _shipped_settings(urdf_path).get((joint, key))
    return shipped is not None and bool(np.isclose(shipped, value, rtol=1e-9, atol=1e-12))


def filled(value: T | None) -> T:
    """A SimArmConfig field that ``__post_init__`` (profile) or the URDF (friction, damping) has filled in.

    Raises:
        ValueError: the field is still None (a config used before its profile or URDF values were resolved).
    """
    if value is None:
        raise ValueError("SimArmConfig field used before the profile / URDF filled it in")
    return value


def sim_config_from_metadata(values: dict, source: str) -> SimArmConfig:
    """The SimArmConfig a recording's ``episode.yaml`` stored (``sim_config``).

    A stored config without a ``profile`` key was written before profiles existed, by the simulator that is now
    profile "ideal": it is loaded as that profile, so an old bag still replays exactly. Per-joint fields it lacks
    come from the robot profile of its joints (:func:`deadzone_id_ros.robot.defaults.fill_required`: the bundled
    arm's for its joints, the values that were the defaults when such a recording was written).

    Raises:
        ConfigError: unknown keys or bad values; names ``source``.
    """
    from ..config import dataclass_from_dict
    from ..robot.defaults import fill_required

    if "profile" not in values:
        values = {**values, "profile": "ideal"}
    return dataclass_from_dict(SimArmConfig, fill_required(SimArmConfig, values), source)
