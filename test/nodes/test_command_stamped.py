"""feedforward_controller's ~/command_stamped: each command carries the stamp of the /joint_states it answers.

In one process over DDS (the node object and a probe node share a context), so the test is quick.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import rclpy
from builtin_interfaces.msg import Time
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from deadzone_id_ros.nodes.feedforward_controller import FeedforwardControllerNode

pytestmark = pytest.mark.integration

NAMES = ["joint1", "joint2", "joint3"]


@pytest.fixture
def context():
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    yield ctx
    rclpy.shutdown(context=ctx)


def _spin_until(executor, pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.01)
        if pred():
            return True
    return False


@pytest.mark.parametrize("enabled", [True, False])
def test_command_stamped_carries_the_answered_state_stamp(context, enabled):
    # Command order differs from the controller's joint order: effort follows command_joint_names, like the command.
    overrides = [Parameter("stamped_command", value=enabled), Parameter("mode", value="pd_dob"),
                 Parameter("command_joint_names", value=["joint3", "joint1", "joint2"]),
                 Parameter("watchdog_timeout", value=5.0)]
    ctl = FeedforwardControllerNode(context=context, parameter_overrides=overrides)
    probe = Node("stamped_probe", context=context)
    commands: list[list[float]] = []
    stamped: list[JointState] = []
    probe.create_subscription(
        Float64MultiArray, "/effort_controller/commands", lambda m: commands.append(list(m.data)), 100
    )
    probe.create_subscription(JointState, "/feedforward_controller/command_stamped", stamped.append, 100)
    pub = probe.create_publisher(JointState, "/joint_states", 10)
    ex = rclpy.executors.SingleThreadedExecutor(context=context)
    ex.add_node(ctl)
    ex.add_node(probe)
    try:
        assert _spin_until(ex, lambda: pub.get_subscription_count() > 0, 10.0)
        sent = []
        for k in range(5):
            stamp = Time(sec=1000 + k, nanosec=123_456_789)
            pub.publish(_state(stamp, k))
            sent.append((stamp.sec, stamp.nanosec))
            assert _spin_until(ex, lambda k=k: len(commands) == k + 1, 5.0), f"no command for state {k}"
        _spin_until(ex, lambda: len(stamped) >= 5, 2.0 if enabled else 0.5)
        if not enabled:
            assert stamped == []
            return
        assert [(m.header.stamp.sec, m.header.stamp.nanosec) for m in stamped] == sent
        assert all(list(m.name) == ["joint3", "joint1", "joint2"] for m in stamped)
        np.testing.assert_array_equal([list(m.effort) for m in stamped], commands)
    finally:
        ex.shutdown()
        probe.destroy_node()
        ctl.destroy_node()


def _state(stamp: Time, k: int) -> JointState:
    msg = JointState(name=NAMES, position=[0.1 * k, 0.3, 0.6], velocity=[0.01 * k, 0.0, 0.0], effort=[0.0] * 3)
    msg.header.stamp = stamp
    return msg
