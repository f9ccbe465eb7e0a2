"""Per-joint defaults from robot profiles, for configs that name no value: the bundled arm's profile where no joints
are named, an implicit URDF-derived profile for any other joint list (:func:`robot_for`).

:func:`fill_required` completes the fields a robot profile gives (joint names, URDF, per-joint values) that a parameter
file or a node's parameters left out, by field name, from the profile they name (``robot``) or the bundled arm's, so
the config modules can use it without this package importing them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, DeadzoneIdError
from .derived import DerivedRobot, derive_robot
from .profile import RobotProfile, resolve_profile

__all__ = ["BUNDLED_ROBOT", "FIELD_VALUES", "PROFILE_FIELDS", "SCALAR_VALUES", "bundled_robot", "fill_required",
           "is_bundled_urdf", "load_robot", "profile_values", "robot_field_values", "robot_for", "urdf_field"]

#: Name of the shipped profile that gives the defaults where a caller names no robot.
BUNDLED_ROBOT = "three_dof_arm"
#: Config field -> the :class:`DerivedRobot` value it takes (per joint).
FIELD_VALUES = {"kp": "kp", "kd": "kd", "nominal_inertia": "nominal_inertia", "dob_cutoff": "dob_cutoff",
                "torque_rate_limit": "torque_rate_limit", "armature": "armature",
                "torque_noise_std": "torque_noise_std", "velocity_noise_std": "velocity_noise_std",
                "initial_position": "home", "center": "home", "amplitude": "amplitude",
                "acceleration_limit": "acceleration_limit", "effort_limit": "effort_limit",
                "encoder_resolution": "encoder_resolution"}
#: Config field -> the profile's scalar it takes: the hardware's rate, which is the controller's and the simulated
#: /joint_states' rate.
SCALAR_VALUES = {"control_rate": "control_rate", "publish_rate": "control_rate"}
#: Config fields a robot profile fills in where a parameter file, a node's parameters or a stored config leave them
#: out (:func:`fill_required`): joints, the effort controller's order, the URDF, friction, per-joint values, rates.
PROFILE_FIELDS = ("joint_names", "command_joint_names", "urdf_path", "frictionloss", "damping", *FIELD_VALUES,
                  *SCALAR_VALUES)


@functools.lru_cache(maxsize=8)
def load_robot(spec: str) -> DerivedRobot:
    """The profile ``spec`` names (file or shipped name), resolved against its URDF (cached per spec).

    Raises:
        FileNotFoundError, ConfigError, RobotDescriptionError: see :func:`.profile.resolve_profile` and
            :func:`.derived.derive_robot`.
    """
    return derive_robot(resolve_profile(spec))


def bundled_robot() -> DerivedRobot:
    """The bundled 3-joint arm's resolved profile (:data:`BUNDLED_ROBOT`)."""
    return load_robot(BUNDLED_ROBOT)


def is_bundled_urdf(urdf_path: str | Path) -> bool:
    """True for "" (the configs' name for the bundled URDF) or the bundled URDF's path."""
    from ..resources import default_urdf

    return not str(urdf_path) or Path(urdf_path).resolve() == default_urdf().resolve()


@functools.lru_cache(maxsize=32)
def _implicit(urdf_path: str, joint_names: tuple[str, ...], home: tuple[float, ...]) -> DerivedRobot:
    path = Path(urdf_path)
    return derive_robot(RobotProfile(name=path.stem, urdf=str(path.resolve()), joint_names=joint_names, home=home))


def robot_for(urdf_path: str | Path, joint_names: Sequence[str], home: Sequence[float] = ()) -> DerivedRobot:
    """A resolved profile for ``joint_names`` of a URDF when the caller has no profile file: the bundled arm's
    profile for the bundled URDF and joints, else an implicit profile (URDF-derived values, every other URDF joint
    locked at 0, default bandwidth; cached).

    Raises:
        RobotDescriptionError: the URDF lacks a joint, or a joint's effort limit is 0 or missing.
    """
    bundled = bundled_robot()
    if is_bundled_urdf(urdf_path) and tuple(joint_names) == bundled.joint_names:
        return bundled
    path = str(urdf_path) if str(urdf_path) else str(bundled.urdf_path)
    return _implicit(path, tuple(joint_names), tuple(float(v) for v in home))


def profile_values(robot: DerivedRobot, fields: Sequence[str]) -> dict[str, Any]:
    """``{field: value}`` for each config field of :data:`FIELD_VALUES` in ``fields`` (tuples of floats)."""
    return {f: robot.values(FIELD_VALUES[f]) for f in fields if f in FIELD_VALUES}


def urdf_field(robot: DerivedRobot) -> str:
    """The configs' ``urdf_path`` of ``robot``: "" for the bundled URDF (as stored before profiles), else the file."""
    return "" if is_bundled_urdf(robot.urdf_path) else str(robot.urdf_path)


def robot_field_values(robot: DerivedRobot) -> dict[str, Any]:
    """Every :data:`PROFILE_FIELDS` value of ``robot``: joints, command order, URDF (:func:`urdf_field`), per-joint
    values (:data:`FIELD_VALUES`, tuples of floats), the rates (:data:`SCALAR_VALUES`, [Hz]), and ``frictionloss`` /
    ``damping`` where the profile's settings give them (else None: the simulator takes the URDF's)."""
    values: dict[str, Any] = {"joint_names": robot.joint_names,
                              "command_joint_names": robot.profile.command_joint_names,
                              "urdf_path": urdf_field(robot), **profile_values(robot, tuple(FIELD_VALUES)),
                              **{k: float(getattr(robot.profile, v)) for k, v in SCALAR_VALUES.items()}}
    for key in ("frictionloss", "damping"):
        values[key] = robot.values(key) if any(o != "urdf" for o in robot.origin[key]) else None
    return values


def fill_required(cls: type, values: Mapping[str, Any], joint_names: Sequence[str] | None = None,
                  source: str = "", robot: str | None = None) -> dict[str, Any]:
    """``values`` with every :data:`PROFILE_FIELDS` field of the dataclass ``cls`` that is missing or empty (None,
    an empty list, "" for ``urdf_path``, 0 for a rate) filled in from a robot profile.

    The profile is ``robot`` (a shipped name or a profile file), else ``values["robot"]``; with neither, the bundled
    arm's. When ``values`` name other joints (``joint_names``, or the ``joint_names`` argument: the controlled joints
    of a node whose node-only config is being built) or another URDF (``urdf_path``) than the profile's, the values
    come from an implicit profile of those joints in that URDF instead (:func:`robot_for`, home from
    ``initial_position`` or ``center``), as for a parameter file written before profiles.

    Raises:
        ConfigError: the profile cannot be found or read, or the implicit profile cannot be derived (a joint the URDF
            lacks, an effort limit of 0); the message starts with ``source`` (the parameter file or node) when given.
    """
    try:
        return _fill(cls, values, joint_names, robot if robot is not None else str(values.get("robot") or ""))
    except (DeadzoneIdError, FileNotFoundError) as err:
        raise ConfigError(f"{source}: {err}" if source else str(err)) from err


def _missing(name: str, value: Any) -> bool:
    """True for a field left unset: None, an empty list, "" for ``urdf_path`` and 0 for a rate (``control_rate``,
    ``publish_rate``: 0 means "the robot profile's")."""
    return (value is None or (isinstance(value, (list, tuple)) and not value) or (name == "urdf_path" and value == "")
            or (name in SCALAR_VALUES and value == 0))


def _fill(cls: type, values: Mapping[str, Any], joint_names: Sequence[str] | None, spec: str) -> dict[str, Any]:
    fields = {f.name for f in dataclasses.fields(cls)}
    wanted = [k for k in PROFILE_FIELDS if k in fields and _missing(k, values.get(k))]
    if not wanted:
        return dict(values)
    joints = tuple(values.get("joint_names") or ()) or tuple(joint_names or ())
    out = dict(values)
    if "command_joint_names" in wanted and joints:  # the profile's order of its own joints, else the joints given
        named = load_robot(spec) if spec else bundled_robot()
        out["command_joint_names"] = named.profile.command_joint_names if joints == named.joint_names else joints
        wanted.remove("command_joint_names")
        if not wanted:
            return out
    urdf = str(values.get("urdf_path") or "")
    home = values.get("initial_position") or values.get("center") or ()
    if spec:
        robot = load_robot(spec)
        other_urdf = bool(urdf) and Path(urdf).resolve() != Path(robot.urdf_path).resolve()
        if (joints and joints != robot.joint_names) or other_urdf:
            robot = robot_for(urdf or robot.urdf_path, joints or robot.joint_names, home)
    else:
        robot = robot_for(urdf, joints, home) if joints else bundled_robot()
    defaults = robot_field_values(robot)
    return {**out, **{k: defaults[k] for k in wanted}}
