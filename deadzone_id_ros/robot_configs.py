"""The component configs of a robot, built from its profile (:mod:`deadzone_id_ros.robot.profile`).

No config dataclass names a joint by default: a config for J joints is built from a robot profile here, every
per-joint value taken from the profile's derived values (:mod:`deadzone_id_ros.robot.derived`), explicit keyword
arguments overriding them. Where a caller has no profile, the bundled 3-joint arm's profile
(``config/robots/three_dof_arm.yaml``) gives the defaults (:func:`bundled_robot`), and :func:`robot_for` builds an
implicit profile (URDF-derived values only) for any other URDF and joint list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .robot.defaults import BUNDLED_ROBOT, bundled_robot, load_robot, profile_values, robot_for, urdf_field

if TYPE_CHECKING:
    from .control.config import ControllerConfig
    from .control.excitation import ExcitationConfig
    from .control.feedforward_controller_params import ControllerNodeConfig
    from .robot.derived import DerivedRobot
    from .sim.bag_replay_params import BagReplayNodeConfig
    from .sim.config import SimArmConfig

__all__ = ["BUNDLED_ROBOT", "bag_replay_config", "bundled_controller_config", "bundled_excitation_config",
           "bundled_robot", "bundled_sim_config", "controller_config", "controller_node_config", "excitation_config",
           "load_robot", "robot_for", "sim_config", "simulation_configs"]

def controller_config(robot: DerivedRobot, **explicit: Any) -> ControllerConfig:
    """The control law's config for ``robot``: joints, URDF, gains, nominal inertia, DOB cutoff, torque rate limit,
    effort limit and control rate from the profile, and what its nominal rigid-body model adds to the URDF: the
    armature, and friction and damping where the profile's settings give them; ``explicit`` fields override.

    Raises:
        ValueError: a bad explicit value (from :class:`~deadzone_id_ros.control.ControllerConfig`).
    """
    from .control.config import ControllerConfig

    values: dict[str, Any] = {
        "joint_names": robot.joint_names, "urdf_path": urdf_field(robot), "control_rate": robot.profile.control_rate,
        **profile_values(robot, ("kp", "kd", "nominal_inertia", "dob_cutoff", "torque_rate_limit", "effort_limit",
                                 "armature"))}
    for key in ("frictionloss", "damping"):
        if any(o != "urdf" for o in robot.origin[key]):
            values[key] = robot.values(key)
    return ControllerConfig(**{**values, **explicit})


def sim_config(robot: DerivedRobot, **explicit: Any) -> SimArmConfig:
    """The simulated arm's config for ``robot``: joints, URDF, armature, noise, effort limit, encoder resolution and
    initial position (the home pose) from the profile; friction and damping from the profile's settings where it
    gives them (else the URDF's, filled in by the simulator); ``explicit`` fields override.

    Raises:
        ValueError: a bad explicit value.
    """
    from .sim.config import SimArmConfig

    values: dict[str, Any] = {
        "joint_names": robot.joint_names, "urdf_path": urdf_field(robot),
        **profile_values(robot, ("armature", "torque_noise_std", "velocity_noise_std", "initial_position",
                                 "effort_limit", "encoder_resolution"))}
    for key in ("frictionloss", "damping"):
        if any(o != "urdf" for o in robot.origin[key]):
            values[key] = robot.values(key)
    return SimArmConfig(**{**values, **explicit})


def excitation_config(robot: DerivedRobot, **explicit: Any) -> ExcitationConfig:
    """The excitation's config for ``robot``: joints, URDF, centre (the home pose), amplitude and acceleration limit
    from the profile; ``explicit`` fields override."""
    from .control.excitation import ExcitationConfig

    values: dict[str, Any] = {
        "joint_names": robot.joint_names, "urdf_path": urdf_field(robot),
        **profile_values(robot, ("center", "amplitude", "acceleration_limit"))}
    return ExcitationConfig(**{**values, **explicit})


def controller_node_config(robot: DerivedRobot, **explicit: Any) -> ControllerNodeConfig:
    """The feedforward_controller node's settings: the command order from the profile's ``command_joints``."""
    from .control.feedforward_controller_params import ControllerNodeConfig

    return ControllerNodeConfig(**{"command_joint_names": robot.profile.command_joint_names, **explicit})


def bag_replay_config(robot: DerivedRobot, bag: str, **explicit: Any) -> BagReplayNodeConfig:
    """The bag_replay node's settings for ``bag``: the command order from the profile's ``command_joints``."""
    from .sim.bag_replay_params import BagReplayNodeConfig

    return BagReplayNodeConfig(**{"bag": bag, "command_joint_names": robot.profile.command_joint_names,
                                  **explicit})


def bundled_controller_config(**explicit: Any) -> ControllerConfig:
    """:func:`controller_config` of the bundled arm."""
    return controller_config(bundled_robot(), **explicit)


def bundled_sim_config(**explicit: Any) -> SimArmConfig:
    """:func:`sim_config` of the bundled arm."""
    return sim_config(bundled_robot(), **explicit)


def bundled_excitation_config(**explicit: Any) -> ExcitationConfig:
    """:func:`excitation_config` of the bundled arm."""
    return excitation_config(bundled_robot(), **explicit)


def simulation_configs(spec: str, sim_overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The keyword arguments of :func:`~deadzone_id_ros.sim.record.simulate_bag` (and ``simulate``) for the robot
    profile ``spec`` (a shipped name or a profile file): ``sim_config``, ``controller_config``,
    ``excitation_config`` and ``robot`` (its name); ``sim_overrides`` (SimArmConfig keys) replace the profile's
    simulator values. "" gives {} (the bundled arm's defaults).

    Raises:
        FileNotFoundError / ConfigError: the profile cannot be found or read (names it); ValueError: a bad override.
    """
    if not spec:
        return {}
    robot = load_robot(spec)
    return {"sim_config": sim_config(robot, **(sim_overrides or {})), "controller_config": controller_config(robot),
            "excitation_config": excitation_config(robot), "robot": robot.profile.name}
