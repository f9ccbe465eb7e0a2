"""Per-joint defaults from robot profiles, for configs that name no value: the bundled arm's profile where no joints
are named, an implicit URDF-derived profile for any other joint list (:func:`robot_for`).

:func:`fill_required` completes the required fields (joint names, per-joint values) a parameter file or a node's
parameters left out, by field name, so the config modules can use it without this package importing them.
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

__all__ = ["BUNDLED_ROBOT", "FIELD_VALUES", "bundled_robot", "fill_required", "is_bundled_urdf", "load_robot",
           "profile_values", "robot_for"]

#: Name of the shipped profile that gives the defaults where a caller names no robot.
BUNDLED_ROBOT = "three_dof_arm"
#: Config field -> the :class:`DerivedRobot` value it takes (per joint).
FIELD_VALUES = {"kp": "kp", "kd": "kd", "nominal_inertia": "nominal_inertia", "dob_cutoff": "dob_cutoff",
                "torque_rate_limit": "torque_rate_limit", "armature": "armature",
                "torque_noise_std": "torque_noise_std", "velocity_noise_std": "velocity_noise_std",
                "initial_position": "home", "center": "home", "amplitude": "amplitude",
                "acceleration_limit": "acceleration_limit"}


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


def fill_required(cls: type, values: Mapping[str, Any], joint_names: Sequence[str] | None = None,
                  source: str = "") -> dict[str, Any]:
    """``values`` with every required field of the dataclass ``cls`` that is missing or empty filled in.

    - ``command_joint_names``: ``values["joint_names"]`` (else the ``joint_names`` argument: the controlled joints
      of a node whose node-only config is being built) when given, else the bundled profile's command order.
    - ``joint_names``: the bundled profile's joints.
    - per-joint values (:data:`FIELD_VALUES`): from the bundled profile when ``joint_names`` is not given, else from
      :func:`robot_for` (``urdf_path``, ``joint_names``, ``initial_position`` or ``center`` as home).

    Raises:
        ConfigError: the implicit profile cannot be derived (a joint the URDF lacks, an effort limit of 0); the
            message starts with ``source`` (the parameter file or node) when given.
    """
    try:
        return _fill(cls, values, joint_names)
    except (DeadzoneIdError, FileNotFoundError) as err:
        raise ConfigError(f"{source}: {err}" if source else str(err)) from err


def _fill(cls: type, values: Mapping[str, Any], joint_names: Sequence[str] | None) -> dict[str, Any]:
    required = [f.name for f in dataclasses.fields(cls)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    missing = [k for k in required if values.get(k) in (None, (), [])]
    if not missing:
        return dict(values)
    out = dict(values)
    joints = tuple(values.get("joint_names") or ())
    if "command_joint_names" in missing:
        joints = joints or tuple(joint_names or ())
        out["command_joint_names"] = joints or bundled_robot().profile.command_joint_names
    per_joint = [k for k in missing if k in FIELD_VALUES or k == "joint_names"]
    if per_joint:
        home = values.get("initial_position") or values.get("center") or ()
        robot = robot_for(str(values.get("urdf_path") or ""), joints, home) if joints else bundled_robot()
        out.update(profile_values(robot, per_joint))
        if "joint_names" in per_joint:
            out["joint_names"] = robot.joint_names
    return out
