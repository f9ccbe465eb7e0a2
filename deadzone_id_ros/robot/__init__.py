"""Robot description: joints and limits read from a URDF (through pinocchio), by joint name."""

from __future__ import annotations

from .description import JointLimits, RobotDescription, load_robot_description

__all__ = ["JointLimits", "RobotDescription", "load_robot_description"]
