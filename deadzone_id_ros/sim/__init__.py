"""The simulated arm: MuJoCo physics loaded from the project's URDF, with dead zones (core, no ROS)."""

from __future__ import annotations

from .arm import JointMeasurement, SimArm
from .config import SimArmConfig

__all__ = ["JointMeasurement", "SimArm", "SimArmConfig"]
