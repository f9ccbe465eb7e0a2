"""teleop_bilateral: leader–follower teleoperation with force feedback over ros2_control topics.

Thin rclpy adapter of :class:`deadzone_id_ros.teleop.BilateralController` (the control law, the force channel, the
joint map and the safety of both arms are documented in :mod:`deadzone_id_ros.teleop.bilateral`), built exactly as
``deadzone-id teleop`` builds it in process (:meth:`deadzone_id_ros.teleop.node_config.TeleopNodeConfig.build`).

Topics (each arm in its own namespace with the standard ros2_control topics):

- subscribes ``/leader/joint_states`` and ``/follower/joint_states`` (sensor_msgs/JointState: position, velocity,
  effort = the applied torque [N·m]; joints mapped by name, other joints ignored).
- publishes ``/leader/effort_controller/commands`` and ``/follower/effort_controller/commands``
  (std_msgs/Float64MultiArray, one torque [N·m] per joint in each profile's effort-controller order, the
  forward_command_controller convention): one command per arm for each pair of states, a leader and a follower
  state whose stamps differ by at most ``max_stamp_skew`` (equal stamps from two simulators in lockstep), each pair
  answered once (a state repeated with the same stamp is not answered again).
- publishes per pair, stamped with it (sensor_msgs/JointState):

  - ``~/leader/external_torque``, ``~/follower/external_torque``: ``effort`` = each arm's external-torque estimate
    [N·m] (the operator's hand on the leader, the contact on the follower), in the arm's joint order;
  - ``~/leader/external_torque_band``, ``~/follower/external_torque_band``: ``effort`` = the dead-zone interval's
    half width [N·m] (0 where the joint moves);
  - ``~/force_channel``: the follower's joints; ``position`` = the position error x_l - q_f [rad], ``velocity`` =
    r_l (the operator's torque as the force channel used it, mapped onto the follower) and ``effort`` = r_f (the
    contact torque as used) [N·m]: the action–reaction law drives r_l + s_f r_f to 0, so -s_f r_f is what the
    operator feels.

Watchdog: a steady-clock timer (every ``watchdog_timeout``/5 of the faster arm's controller) runs both controllers'
:meth:`~deadzone_id_ros.control.FeedforwardController.check_watchdog` on the ROS clock (simulated time under
``use_sim_time``, the stamps' clock): no pair for ``watchdog_timeout`` holds each arm's static torque, then zero;
``watchdog_steady_timeout`` of wall time without a pair runs it even while the clock stands still. A fault latched
on one arm latches the other. On shutdown both arms get a zero command.

Parameters: :class:`~deadzone_id_ros.teleop.node_config.TeleopNodeConfig` (``leader_robot``, ``follower_robot``,
``model``, ``mode``, scales, gains, ``joint_map``). The node refuses to start (exit status 2, one line naming both
arms' joints) when the two profiles' joints cannot be mapped. Launch: launch/teleop.launch.yaml.
"""

from __future__ import annotations

import dataclasses
import sys
import time

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..errors import ConfigError
from ..robot_configs import bundled_robot, load_robot
from ..stamps import ns_to_s, ns_to_stamp, stamp_to_ns
from ..teleop.node_config import TeleopNodeConfig
from ._common import declare_dataclass_parameters, run_node

__all__ = ["ARMS", "PUBLISH_DEPTH", "TeleopBilateralNode", "main"]

#: the two arms' namespaces
ARMS = ("leader", "follower")

#: writer history of every published topic (reliable, keep last): about 1 s at 1 kHz for a reader that falls behind,
#: as the feedforward controller's commands. At depth 10 a recorder beside a lockstep run on a busy 2-core machine
#: lost a third of the leader's commands (1012 of 1648 recorded; test_teleop_record_live).
PUBLISH_DEPTH = 1000


class _Arm:
    """One arm's topics, its joint order and its newest state (stamp [ns], q, dq, effort in the arm's order)."""

    def __init__(self, node: Node, role: str, joints: tuple[str, ...], command_joints: tuple[str, ...]) -> None:
        self.role, self.joints = role, joints
        missing = [j for j in joints if j not in command_joints]
        if missing or len(command_joints) != len(joints):
            raise ConfigError(f"{role}: the effort controller's joints {list(command_joints)} are not the arm's "
                             f"{list(joints)}")
        self.to_command = np.array([joints.index(j) for j in command_joints], dtype=int)
        self.command_pub = node.create_publisher(Float64MultiArray, f"/{role}/effort_controller/commands",
                                                 PUBLISH_DEPTH)
        self.torque_pub = node.create_publisher(JointState, f"~/{role}/external_torque", PUBLISH_DEPTH)
        self.band_pub = node.create_publisher(JointState, f"~/{role}/external_torque_band", PUBLISH_DEPTH)
        self.index: dict[tuple[str, ...], np.ndarray | None] = {}
        self.state: tuple[int, np.ndarray, np.ndarray, np.ndarray] | None = None
        self.msg = Float64MultiArray()

    def take(self, msg: JointState) -> bool:
        """Keep ``msg`` as the newest state; False (and nothing kept) when it lacks a joint or a field."""
        key = tuple(msg.name)
        if key not in self.index:
            self.index[key] = (np.array([key.index(j) for j in self.joints], dtype=int)
                               if all(j in key for j in self.joints) else None)
        idx = self.index[key]
        n = len(key)
        if idx is None or len(msg.position) != n or len(msg.velocity) != n or len(msg.effort) != n:
            return False
        self.state = (stamp_to_ns(msg.header.stamp), np.asarray(msg.position, float)[idx],
                      np.asarray(msg.velocity, float)[idx], np.asarray(msg.effort, float)[idx])
        return True

    def publish(self, tau: np.ndarray) -> None:
        """One command, in the effort controller's joint order."""
        self.msg.data = np.asarray(tau, dtype=float)[self.to_command].tolist()
        self.command_pub.publish(self.msg)


class TeleopBilateralNode(Node):
    """rclpy adapter of the bilateral controller of a leader and a follower arm.

    Raises:
        ConfigError: a parameter value is invalid (names it).
        SafetyError: the two profiles' joints cannot be mapped (names both arms' joints).
        FileNotFoundError, ArtifactError: a profile or the model cannot be loaded.
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("teleop_bilateral", **kwargs)
        fixed = [f.name for f in dataclasses.fields(TeleopNodeConfig)]
        self.config: TeleopNodeConfig = declare_dataclass_parameters(self, TeleopNodeConfig, read_only=fixed)
        self.controller = self.config.build()  # SafetyError when the joints cannot be mapped
        ctl = self.controller
        profiles = [load_robot(r) if r else bundled_robot()
                    for r in (self.config.leader_robot, self.config.follower_robot)]
        self.arms = {role: _Arm(self, role, tuple(c.joint_names), tuple(p.profile.command_joint_names))
                     for role, c, p in zip(ARMS, (ctl.leader, ctl.follower), profiles)}
        self._channel_pub = self.create_publisher(JointState, "~/force_channel", PUBLISH_DEPTH)
        self._channel = JointState(name=list(ctl.map.follower_joints))
        self._sense = {role: (JointState(name=list(a.joints)), JointState(name=list(a.joints)))
                       for role, a in self.arms.items()}
        self._answered_ns: int | None = None  # the newest stamp answered
        self._steady_last_ns: int | None = None
        self.pairs = 0
        for role in ARMS:
            self.create_subscription(JointState, f"/{role}/joint_states",
                                     lambda m, r=role: self._on_state(r, m), 100)
        timeout = min(ctl.leader.config.watchdog_timeout, ctl.follower.config.watchdog_timeout)
        self.create_timer(timeout / 5.0, self._on_watchdog, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._fault_reported = ""
        self._watchdog_state = {role: c.status.watchdog for role, c in zip(ARMS, (ctl.leader, ctl.follower))}
        self.get_logger().info(
            f"teleop_bilateral: {self.config.mode}, model {self.config.model}, leader joints "
            f"{list(ctl.map.leader_joints)} -> follower joints {list(ctl.map.follower_joints)}")

    def _on_state(self, role: str, msg: JointState) -> None:
        if not self.arms[role].take(msg):
            self.get_logger().error(f"/{role}/joint_states lacks a joint of {list(self.arms[role].joints)} or a "
                                    "position/velocity/effort per name; ignored", throttle_duration_sec=1.0)
            return
        lead, foll = self.arms["leader"].state, self.arms["follower"].state
        if lead is None or foll is None:
            return
        t_ns = max(lead[0], foll[0])
        if abs(lead[0] - foll[0]) > round(self.config.max_stamp_skew * 1e9):
            return  # not a pair: wait for the other arm's state of this time
        if self._answered_ns is not None and t_ns <= self._answered_ns:
            return  # answered already (a repeated state)
        self._answered_ns = t_ns
        self._steady_last_ns = time.monotonic_ns()
        s = self.controller.step(ns_to_s(t_ns), lead[1:], foll[1:])
        self.arms["leader"].publish(s.tau_leader)
        self.arms["follower"].publish(s.tau_follower)
        self.pairs += 1
        sec, nanosec = ns_to_stamp(t_ns)
        for role, sample in (("leader", s.leader), ("follower", s.follower)):
            torque, band = self._sense[role]
            for m, values in ((torque, sample.tau_ext), (band, sample.half_width)):
                m.header.stamp.sec, m.header.stamp.nanosec = sec, nanosec
                m.effort = np.asarray(values, float).tolist()
            self.arms[role].torque_pub.publish(torque)
            self.arms[role].band_pub.publish(band)
        ch = self._channel
        ch.header.stamp.sec, ch.header.stamp.nanosec = sec, nanosec
        ch.position, ch.velocity = s.position_error.tolist(), s.reflected_leader.tolist()
        ch.effort = s.reflected_follower.tolist()
        self._channel_pub.publish(ch)
        self._report_fault()

    def _on_watchdog(self) -> None:
        """Both controllers' watchdogs on the ROS clock, with the steady backstop (module docstring)."""
        now = float(ns_to_s(self.get_clock().now().nanoseconds))
        if self._answered_ns is not None and self._steady_last_ns is not None:
            beyond = ns_to_s(time.monotonic_ns() - self._steady_last_ns) - self.config.watchdog_steady_timeout
            if beyond > 0:
                timeout = max(self.controller.leader.config.watchdog_timeout,
                              self.controller.follower.config.watchdog_timeout)
                now = max(now, ns_to_s(self._answered_ns) + timeout + 1e-6 + beyond)
        ctl = self.controller
        for role, arm_ctl in (("leader", ctl.leader), ("follower", ctl.follower)):
            tau = arm_ctl.check_watchdog(now)
            if tau is not None:
                self.arms[role].publish(tau)
        self._report_fault()

    def _report_watchdog(self) -> None:
        """Log each arm's watchdog state when it changes (running, hold, zero)."""
        ctl = self.controller
        for role, arm_ctl in (("leader", ctl.leader), ("follower", ctl.follower)):
            state = arm_ctl.status.watchdog
            if state != self._watchdog_state[role]:
                # one call site per severity: rclpy's logger refuses a second severity from the same call site
                if state == "running":
                    self.get_logger().info(f"watchdog: {role} {self._watchdog_state[role]} -> {state}")
                else:
                    self.get_logger().warning(f"watchdog: no pair of states; {role} "
                                              f"{self._watchdog_state[role]} -> {state}")
                self._watchdog_state[role] = state

    def _report_fault(self) -> None:
        self._report_watchdog()
        fault = self.controller.fault
        if fault and fault != self._fault_reported:
            self.get_logger().error(f"safe state on both arms: {fault}")
        self._fault_reported = fault

    def publish_zero(self) -> None:
        """A zero command to both arms (on shutdown)."""
        for role in ARMS:
            self.arms[role].publish(np.zeros(len(self.arms[role].joints)))


def _publish_zero(node: TeleopBilateralNode) -> None:
    try:
        node.publish_zero()
    except Exception as err:  # noqa: BLE001 - rclpy raises RCLError if the context is already gone
        print(f"teleop_bilateral: could not publish the zero command: {err}", file=sys.stderr)


def main(args=None) -> int:
    """Run the node until SIGINT/SIGTERM, then command zero to both arms. Returns 0, or 2 on a configuration error
    (one line, e.g. the joints that cannot be mapped)."""
    return run_node("teleop_bilateral", TeleopBilateralNode, args, on_exit=_publish_zero, watch_clock=False)


if __name__ == "__main__":
    sys.exit(main())
