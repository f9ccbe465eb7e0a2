"""force_estimator: external joint torque, contact and wrench for an arm driven by another controller.

Thin rclpy adapter of :class:`deadzone_id_ros.sensing.ForceSensor` (the estimators, the dead-zone interval and the
contact test are documented in :mod:`deadzone_id_ros.sensing`).

Topics:

- subscribes ``/joint_states`` (sensor_msgs/JointState with position, velocity and, unless ``use_commands``, effort
  in ``sensing_effort_unit``: N·m, or a servo's Present_Load converted with the profile's effort limit as stall
  torque; joints mapped by name; the header stamps give the period).
- subscribes ``commands_topic`` (std_msgs/Float64MultiArray, ``command_joint_names`` order) with ``use_commands``:
  the torque of each interval is the last command received instead of the measured effort.
- publishes ``~/external_torque``, ``~/external_torque_band``, ``~/contact`` and ``~/external_wrench``
  (:mod:`.sensing_publisher`) per state, stamped with it, and ``/diagnostics`` at 2 Hz (thresholds, contact).

Parameters: ``robot`` (profile: joints, URDF, nominal inertia, command order),
:class:`~deadzone_id_ros.sensing.node_config.ForceEstimatorConfig` (model, commands) and
:class:`~deadzone_id_ros.sensing.SensingConfig` (``sensing_*``: estimator, cutoff, band, thresholds, frame).
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..models.runtime import load_model
from ..sensing import SensingConfig
from ..sensing.node_config import ForceEstimatorConfig
from ..sensing.sensor import SENSING_CHOICES, SENSING_RANGES
from ..stamps import ns_to_s, stamp_to_ns
from ._common import declare_dataclass_parameters, run_node
from .sensing_publisher import SensingPublisher

__all__ = ["ForceEstimatorNode", "main"]


class ForceEstimatorNode(Node):
    """rclpy adapter of the force sensor for an arm this package does not control.

    Raises:
        ConfigError: a parameter value is invalid (names it).
        FileNotFoundError, ArtifactError, RobotDescriptionError: the model or URDF cannot be loaded.
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("force_estimator", **kwargs)
        fixed = [f.name for f in dataclasses.fields(ForceEstimatorConfig)]
        self.config: ForceEstimatorConfig = declare_dataclass_parameters(self, ForceEstimatorConfig, read_only=fixed)
        self.sensing_config: SensingConfig = declare_dataclass_parameters(
            self, SensingConfig, read_only=[f.name for f in dataclasses.fields(SensingConfig)], ranges=SENSING_RANGES,
            choices=SENSING_CHOICES)
        names = tuple(self.config.joint_names)
        model = load_model(self.config)
        self.sensing = SensingPublisher.build(self, self.sensing_config, self.config, model, names)
        self._index: dict[tuple[str, ...], np.ndarray | None] = {}
        cmd = tuple(self.config.command_joint_names)
        self._from_command = np.array([cmd.index(j) for j in names], dtype=int)
        self._command: np.ndarray | None = None
        self._rejected = 0
        self._matched = 0  # /joint_states messages that hold every joint of this estimator
        self._unmatched: tuple[int, list[str]] = (0, [])  # those that do not: count, the last one's names
        self.create_subscription(JointState, "/joint_states", self._on_joint_state, 100)
        if self.config.use_commands:
            self.create_subscription(Float64MultiArray, self.config.commands_topic, self._on_command, 100)
        self._diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.create_timer(0.5, self._on_diagnostics)
        self.get_logger().info(
            f"force_estimator: joints {list(names)}, model {self.config.model}, estimator "
            f"{self.sensing_config.sensing_estimator}, torque from "
            f"{self.config.commands_topic if self.config.use_commands else '/joint_states effort'}")

    def _indices(self, msg_names: list[str]) -> np.ndarray | None:
        key = tuple(msg_names)
        if key not in self._index:
            names = self.config.joint_names
            self._index[key] = (np.array([key.index(j) for j in names], dtype=int)
                                if all(j in key for j in names) else None)
        return self._index[key]

    def _on_command(self, msg: Float64MultiArray) -> None:
        data = np.asarray(msg.data, dtype=float)
        if data.shape != self._from_command.shape or not np.all(np.isfinite(data)):
            self._rejected += 1
            self.get_logger().error(f"{self.config.commands_topic}: expected {len(self._from_command)} finite "
                                    f"values (joints {list(self.config.command_joint_names)}), got "
                                    f"{data.tolist()}; ignored", throttle_duration_sec=1.0)
            return
        self._command = data[self._from_command]

    def _on_joint_state(self, msg: JointState) -> None:
        idx = self._indices(list(msg.name))
        if idx is None:
            self._unmatched = (self._unmatched[0] + 1, list(msg.name))
            if self._matched:  # another publisher of /joint_states (a gripper's driver): not this arm's states
                return
            missing = [j for j in self.config.joint_names if j not in msg.name]
            self.get_logger().error(
                f"/joint_states lacks joint(s) {missing} of this estimator (its joints "
                f"{list(self.config.joint_names)}, the message's {list(msg.name)}): ignored. Is robot:= the arm that "
                "publishes it?",
                throttle_duration_sec=5.0)
            return
        n = len(msg.name)
        if len(msg.position) != n or len(msg.velocity) != n:
            self.get_logger().error("/joint_states: position and velocity need one value per name; ignored",
                                    throttle_duration_sec=1.0)
            return
        if self.config.use_commands:
            if self._command is None:
                return  # no command seen yet: the torque of the interval is unknown
            tau = self._command
        elif len(msg.effort) == n:  # in sensing_effort_unit: to N·m
            tau = self.sensing.sensor.effort.to_torque(np.asarray(msg.effort, dtype=float)[idx],
                                                       np.asarray(msg.velocity, dtype=float)[idx])
        else:
            self.get_logger().error("/joint_states has no effort per joint: set use_commands true to take the torque "
                                    "from the commands", throttle_duration_sec=5.0)
            return
        self._matched += 1  # a state of this arm, whole
        q = np.asarray(msg.position, dtype=float)[idx]
        dq = np.asarray(msg.velocity, dtype=float)[idx]
        try:
            self.sensing.update(msg.header.stamp, ns_to_s(stamp_to_ns(msg.header.stamp)), q, dq, tau)
        except ValueError as err:
            self.get_logger().error(f"sensing skipped a state: {err}", throttle_duration_sec=1.0)

    def _on_diagnostics(self) -> None:
        arr = DiagnosticArray()
        arr.header.stamp = self.get_clock().now().to_msg()
        status = self.sensing.status(f"{self.get_name()}: sensing", self.get_fully_qualified_name())
        count, names = self._unmatched
        if count and not self._matched:  # nothing to sense from: say why, not "OK"
            status.level = DiagnosticStatus.ERROR
            status.message = (f"{count} /joint_states messages, none with every joint {list(self.config.joint_names)} "
                              f"(the last one had {names}): nothing estimated")
        arr.status = [status]
        self._diag_pub.publish(arr)


def main(args=None) -> int:
    """Run the node until SIGINT/SIGTERM. Returns 0, or 2 on a configuration error (message, no traceback)."""
    return run_node("force_estimator", ForceEstimatorNode, args)


if __name__ == "__main__":
    sys.exit(main())
