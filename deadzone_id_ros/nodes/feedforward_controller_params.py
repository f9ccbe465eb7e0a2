"""Parameters of the feedforward_controller node (ROS-free: no rclpy import, so the loader works without ROS).

The parameter file (config/feedforward_controller.yaml) holds two configs: the control law,
:class:`deadzone_id_ros.control.ControllerConfig`, and the node-only :class:`ControllerNodeConfig` below.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..config import check_positive, load_node_configs
from ..control.config import ControllerConfig

__all__ = ["ControllerNodeConfig", "load_controller_config"]


@dataclass(frozen=True)
class ControllerNodeConfig:
    """ROS-side settings of the feedforward_controller node.

    Attributes:
        command_joint_names: (J,) joint order of /effort_controller/commands (the effort controller's joint list);
            must hold the same joints as ``joint_names`` (any order; mapped by name).
        diagnostics_rate: /diagnostics publication rate [Hz], in (0, 100].
        debug_decimation: publish ~/torque_parts every this many ticks; 0 disables it.
        stamped_command: also publish ~/command_stamped (sensor_msgs/JointState: the header stamp of the
            /joint_states message each command answers, effort = the command) for latency measurement.

    Raises:
        ValueError: a bad value; the message names the field and the value.
    """

    command_joint_names: tuple[str, ...] = ("joint1", "joint2", "joint3")
    diagnostics_rate: float = 5.0
    debug_decimation: int = 10
    stamped_command: bool = False

    def __post_init__(self) -> None:
        if len(set(self.command_joint_names)) != len(self.command_joint_names):
            raise ValueError(f"command_joint_names has duplicates: {list(self.command_joint_names)}")
        check_positive("diagnostics_rate", self.diagnostics_rate)
        if self.diagnostics_rate > 100:
            raise ValueError(f"diagnostics_rate = {self.diagnostics_rate} must be <= 100 Hz")
        if (
            isinstance(self.debug_decimation, bool)
            or not isinstance(self.debug_decimation, int)
            or self.debug_decimation < 0
        ):
            raise ValueError(f"debug_decimation = {self.debug_decimation!r} must be an integer >= 0")
        if not isinstance(self.stamped_command, bool):
            raise ValueError(f"stamped_command = {self.stamped_command!r} must be true or false")


def load_controller_config(
    path: str | Path | None = None, overrides: dict | None = None
) -> tuple[ControllerConfig, ControllerNodeConfig]:
    """Load the controller configs from a parameter file (default: the bundled config/feedforward_controller.yaml).

    Args:
        path: parameter file in ROS 2 format; None for the bundled default.
        overrides: parameter name -> value applied on top of the file.

    Raises:
        FileNotFoundError: the file does not exist.
        ConfigError: malformed YAML, an unknown key or a bad value (names the file and key).
    """
    return load_node_configs(ControllerConfig, ControllerNodeConfig, "feedforward_controller",
                             "feedforward_controller.yaml", path, overrides)
