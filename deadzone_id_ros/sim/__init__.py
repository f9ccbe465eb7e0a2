"""The simulated arm: MuJoCo physics loaded from the project's URDF, with dead zones (core, no ROS)."""

from __future__ import annotations

from .arm import JointMeasurement, SimArm
from .config import SimArmConfig, SimArmNodeConfig, load_sim_config

__all__ = ["JointMeasurement", "SimArm", "SimArmConfig", "SimArmNodeConfig", "load_sim_config"]
