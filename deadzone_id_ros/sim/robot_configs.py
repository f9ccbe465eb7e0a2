"""The simulated arm's and the bag_replay node's configs of a robot, built from its profile
(:mod:`deadzone_id_ros.robot.profile`), and the simulation keyword arguments of a profile;
:mod:`deadzone_id_ros.robot_configs` gathers every room's.
"""

from __future__ import annotations

from typing import Any, TypedDict

from ..control.config import ControllerConfig
from ..control.excitation import ExcitationConfig
from ..control.robot_configs import controller_config, excitation_config
from ..robot.defaults import bundled_robot, load_robot, locked_field, profile_values, urdf_field
from ..robot.derived import DerivedRobot
from .bag_replay_params import BagReplayNodeConfig
from .config import SimArmConfig

__all__ = ["ArmValues", "SimulationConfigs", "arm_values", "bag_replay_config", "bundled_sim_config", "sim_config",
           "simulation_configs"]


class SimulationConfigs(TypedDict, total=False):
    """The keyword arguments of :func:`~deadzone_id_ros.sim.record.simulate_bag` for a robot profile (all absent:
    the bundled arm's defaults)."""

    sim_config: SimArmConfig
    controller_config: ControllerConfig
    excitation_config: ExcitationConfig
    robot: str


def sim_config(robot: DerivedRobot, **explicit: Any) -> SimArmConfig:
    """The simulated arm's config for ``robot``: joints, URDF, armature, noise, effort limit, encoder resolution and
    initial position (the home pose) from the profile, and its locked joints (``locked_joints``: held where the
    profile locks them, as in the rigid-body model); friction and damping from the profile's settings where it
    gives them (else the URDF's, filled in by the simulator), and its ``actuation_delay`` where it states one;
    ``explicit`` fields override.

    Raises:
        ValueError: a bad explicit value.
    """
    values: dict[str, Any] = {
        "joint_names": robot.joint_names, "urdf_path": urdf_field(robot),
        **profile_values(robot, ("armature", "torque_noise_std", "velocity_noise_std", "initial_position",
                                 "effort_limit", "encoder_resolution")),
        "locked_joints": locked_field(robot)}
    for key in ("frictionloss", "damping"):
        if any(o != "urdf" for o in robot.origin[key]):
            values[key] = robot.values(key)
    if robot.profile.actuation_delay is not None:  # the drives' delay the profile states (else the sim profile's)
        values["actuation_delay"] = robot.profile.actuation_delay
    return SimArmConfig(**{**values, **explicit})


class ArmValues(TypedDict, total=False):
    """The fields a controller or excitation config of a simulated arm takes from it (:func:`arm_values`)."""

    urdf_path: str
    locked_joints: tuple[str, ...]
    effort_limit: tuple[float, ...]


def arm_values(config: SimArmConfig) -> ArmValues:
    """What a controller or excitation config of the simulated arm ``config`` must take from it, as keyword
    arguments of :func:`~deadzone_id_ros.control.robot_configs.controller_config` /
    :func:`~deadzone_id_ros.control.robot_configs.excitation_config`: its URDF, its locked joints, and its effort limit
    where it sets one, so that the controller clamps (and the excitation fits) to the limit at which the simulated
    drives saturate, and every rigid body holds the locked joints where the simulator welds them."""
    values = ArmValues(urdf_path=config.urdf_path, locked_joints=tuple(config.locked_joints))
    if config.effort_limit:
        values["effort_limit"] = tuple(config.effort_limit)
    return values


def bag_replay_config(robot: DerivedRobot, bag: str, **explicit: Any) -> BagReplayNodeConfig:
    """The bag_replay node's settings for ``bag``: the command order from the profile's ``command_joints``."""
    return BagReplayNodeConfig(**{"bag": bag, "command_joint_names": robot.profile.command_joint_names,
                                  **explicit})


def bundled_sim_config(**explicit: object) -> SimArmConfig:
    """:func:`sim_config` of the bundled arm."""
    return sim_config(bundled_robot(), **explicit)


def simulation_configs(spec: str, sim_overrides: dict[str, object] | None = None) -> SimulationConfigs:
    """The keyword arguments of :func:`~deadzone_id_ros.sim.record.simulate_bag` (and ``simulate``) for the robot
    profile ``spec`` (a shipped name or a profile file): ``sim_config``, ``controller_config``,
    ``excitation_config`` and ``robot`` (its name); ``sim_overrides`` (SimArmConfig keys) replace the profile's
    simulator values. "" gives {} (the bundled arm's defaults).

    Raises:
        FileNotFoundError / ConfigError: the profile cannot be found or read (names it); ValueError: a bad override.
    """
    if not spec:
        return SimulationConfigs()
    robot = load_robot(spec)
    return SimulationConfigs(sim_config=sim_config(robot, **(sim_overrides or {})),
                             controller_config=controller_config(robot), excitation_config=excitation_config(robot),
                             robot=robot.profile.name)
