"""The control law's, the excitation's and the controller node's configs of a robot, built from its profile
(:mod:`deadzone_id_ros.robot.profile`); :mod:`deadzone_id_ros.robot_configs` gathers every room's.

Every per-joint value comes from the profile's derived values (:mod:`deadzone_id_ros.robot.derived`), explicit
keyword arguments overriding them; the bundled 3-joint arm's profile gives the defaults where a caller has none.
"""

from __future__ import annotations

from typing import Any

from ..robot.defaults import bundled_robot, locked_field, profile_values, urdf_field
from ..robot.derived import DerivedRobot
from .config import ControllerConfig
from .excitation import ExcitationConfig
from .feedforward_controller_params import ControllerNodeConfig

__all__ = ["bundled_controller_config", "bundled_excitation_config", "controller_config", "controller_node_config",
           "excitation_config"]


def controller_config(robot: DerivedRobot, **explicit: Any) -> ControllerConfig:
    """The control law's config for ``robot``: joints, URDF, gains, nominal inertia, DOB cutoff, torque rate limit,
    effort limit and control rate from the profile, and what its nominal rigid-body model adds to the URDF: the
    armature, the locked joints where the profile locks them, and friction and damping where the profile's settings
    give them; ``explicit`` fields override.

    Raises:
        ValueError: a bad explicit value (from :class:`~deadzone_id_ros.control.ControllerConfig`).
    """
    values: dict[str, Any] = {
        "joint_names": robot.joint_names, "urdf_path": urdf_field(robot), "control_rate": robot.profile.control_rate,
        "locked_joints": locked_field(robot),
        **profile_values(robot, ("kp", "kd", "nominal_inertia", "dob_cutoff", "torque_rate_limit", "effort_limit",
                                 "armature"))}
    for key in ("frictionloss", "damping"):
        if any(o != "urdf" for o in robot.origin[key]):
            values[key] = robot.values(key)
    return ControllerConfig(**{**values, **explicit})


def excitation_config(robot: DerivedRobot, **explicit: Any) -> ExcitationConfig:
    """The excitation's config for ``robot``: joints, URDF, locked joints, centre (the home pose), amplitude,
    acceleration limit and effort limit (as the controller's clamp) from the profile; ``explicit`` fields override
    (another ``urdf_path`` keeps the profile's effort limit unless ``effort_limit`` is given too: ``()`` takes that
    URDF's; one above it is refused when the excitation is generated)."""
    values: dict[str, Any] = {
        "joint_names": robot.joint_names, "urdf_path": urdf_field(robot), "locked_joints": locked_field(robot),
        **profile_values(robot, ("center", "amplitude", "acceleration_limit", "effort_limit"))}
    return ExcitationConfig(**{**values, **explicit})


def controller_node_config(robot: DerivedRobot, **explicit: Any) -> ControllerNodeConfig:
    """The feedforward_controller node's settings: the command order from the profile's ``command_joints``."""
    return ControllerNodeConfig(**{"command_joint_names": robot.profile.command_joint_names, **explicit})


def bundled_controller_config(**explicit: object) -> ControllerConfig:
    """:func:`controller_config` of the bundled arm."""
    return controller_config(bundled_robot(), **explicit)


def bundled_excitation_config(**explicit: object) -> ExcitationConfig:
    """:func:`excitation_config` of the bundled arm."""
    return excitation_config(bundled_robot(), **explicit)
