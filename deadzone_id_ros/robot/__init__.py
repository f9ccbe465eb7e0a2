"""Robot description: joints and limits read from a URDF (through pinocchio), by joint name; named robot models
(bundled and example-robot-data); matching a recording's joints to a URDF and locking the others; checking a
recording against its URDF (torque sign and scale, position range); robot profiles (one YAML file per robot) and the
values derived from their URDF."""

from __future__ import annotations

from .catalog import ERD_DISTRIBUTION, RobotModelFile, available_robots, resolve_robot_model
from .derived import DerivedRobot, derive_robot
from .description import JointLimits, RobotDescription, load_robot_description
from .profile import RobotProfile, Setting, available_profiles, load_profile, resolve_profile
from .reduced import ReducedRobot, build_reduced_model, match_joints, parse_joint_map, parse_locked

__all__ = [
    "ERD_DISTRIBUTION",
    "DerivedRobot",
    "JointLimits",
    "ReducedRobot",
    "RobotDescription",
    "RobotModelFile",
    "RobotProfile",
    "Setting",
    "available_profiles",
    "available_robots",
    "build_reduced_model",
    "derive_robot",
    "load_profile",
    "load_robot_description",
    "match_joints",
    "parse_joint_map",
    "parse_locked",
    "resolve_profile",
    "resolve_robot_model",
]
