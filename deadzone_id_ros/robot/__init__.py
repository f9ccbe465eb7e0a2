"""Robot description: joints and limits read from a URDF (through pinocchio), by joint name; named robot models
(bundled and example-robot-data); matching a recording's joints to a URDF and locking the others; checking a
recording against its URDF (torque sign and scale, position range)."""

from __future__ import annotations

from .catalog import ERD_DISTRIBUTION, RobotModelFile, available_robots, resolve_robot_model
from .consistency import RecordingFinding, check_recording
from .description import JointLimits, RobotDescription, load_robot_description
from .reduced import ReducedRobot, build_reduced_model, match_joints, parse_joint_map, parse_locked

__all__ = [
    "ERD_DISTRIBUTION",
    "JointLimits",
    "RecordingFinding",
    "ReducedRobot",
    "RobotDescription",
    "RobotModelFile",
    "available_robots",
    "build_reduced_model",
    "check_recording",
    "load_robot_description",
    "match_joints",
    "parse_joint_map",
    "parse_locked",
    "resolve_robot_model",
]
