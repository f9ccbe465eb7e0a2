"""feedforward_controller's ~/command_stamped: each command carries the time it is for (the stamp of the
/joint_states it answers, with the desired position it tracked, or the watchdog's time).

In one process over DDS (the node object and a probe node share a context), so the test is quick.
"""

from __future__ import annotations

import contextlib
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


@contextlib.contextmanager
def _graph(context, overrides):
    """The controller node (with ``overrides``) and a probe in one executor: yields (executor, /joint_states
    publisher, the commands, the ~/command_stamped messages), once the controller subscribes to /joint_states."""
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
        yield ex, pub, commands, stamped
    finally:
        ex.shutdown()
        probe.destroy_node()
        ctl.destroy_node()


@pytest.mark.parametrize("enabled", [True, False])
def test_command_stamped_carries_the_answered_state_stamp(context, enabled):
    # Command order differs from the controller's joint order: effort follows command_joint_names, like the command.
    overrides = [Parameter("stamped_command", value=enabled), Parameter("mode", value="pd_dob"),
                 Parameter("command_joint_names", value=["joint3", "joint1", "joint2"]),
                 Parameter("watchdog_timeout", value=5.0)]
    with _graph(context, overrides) as (ex, pub, commands, stamped):
        sent = []
        base = int(time.time()) + 1  # stamps ahead of the node's clock: the watchdog stays quiet
        for k in range(5):
            stamp = Time(sec=base + k, nanosec=123_456_789)
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
        # q_d, in command order: no reference yet, so the position of the first state held ([0, 0.3, 0.6])
        np.testing.assert_array_equal([list(m.position) for m in stamped], [[0.6, 0.0, 0.3]] * 5)


def _state(stamp: Time, k: int) -> JointState:
    msg = JointState(name=NAMES, position=[0.1 * k, 0.3, 0.6], velocity=[0.01 * k, 0.0, 0.0], effort=[0.0] * 3)
    msg.header.stamp = stamp
    return msg


def test_watchdog_commands_are_stamped_with_the_watchdogs_time(context):
    """A state, then silence: the watchdog's hold commands go out on ~/command_stamped too, each stamped with the
    watchdog's time (after the state's stamp + watchdog_timeout) and without q_d, so a soak sees every command."""
    overrides = [Parameter("stamped_command", value=True), Parameter("watchdog_timeout", value=0.05)]
    with _graph(context, overrides) as (ex, pub, commands, stamped):
        t0 = time.time_ns()
        pub.publish(_state(Time(sec=t0 // 10**9, nanosec=t0 % 10**9), 0))
        assert _spin_until(ex, lambda: len(stamped) >= 4 and len(commands) >= 4, 5.0), \
            f"{len(stamped)} stamped commands, {len(commands)} commands"
        first, *watchdog = stamped[:4]
        assert (first.header.stamp.sec, first.header.stamp.nanosec) == (t0 // 10**9, t0 % 10**9)
        assert len(first.position) == 3
        stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in watchdog]
        assert all(not m.position for m in watchdog)
        assert stamps[0] > t0 + 50_000_000 and all(b > a for a, b in zip(stamps, stamps[1:], strict=False)), stamps
        np.testing.assert_array_equal([list(m.effort) for m in stamped[:4]], commands[:4])


def test_rate_limit_holds_to_the_nanosecond_at_wall_clock_stamps(context):
    """Stamps of a real robot's wall clock (~1.8e9 s): the controller's time is kept relative to an epoch, so the rate
    limit checked from outside with integer-nanosecond stamps holds to 1e-9 (in float seconds of the epoch a 1 ms
    period is off by up to 2.4e-4 of itself, and so is the allowed step)."""
    overrides = [Parameter("stamped_command", value=True), Parameter("mode", value="pd"),
                 Parameter("watchdog_timeout", value=5.0)]
    rate = 400.0  # joint1's torque_rate_limit in the bundled parameter file [N m/s]
    with _graph(context, overrides) as (ex, pub, commands, stamped):
        base = time.time_ns() + 10**9 + 123_457  # ahead of the node's clock (the watchdog stays quiet), odd ns
        for k in range(12):
            msg = JointState(name=NAMES, position=[0.3 if k else 0.0, 0.3, 0.6], velocity=[0.0] * 3,
                             effort=[0.0] * 3)
            t = base + k * 1_000_000 + 7 * k  # 1 ms periods, not round in float seconds
            msg.header.stamp = Time(sec=t // 10**9, nanosec=t % 10**9)
            pub.publish(msg)
            assert _spin_until(ex, lambda k=k: len(stamped) == k + 1, 5.0), f"no answer to state {k}"
        t_ns = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in stamped]
        tau = [m.effort[0] for m in stamped]
        ratios = [abs(b - a) / (rate * (tb - ta) * 1e-9) for a, b, ta, tb in zip(tau, tau[1:], t_ns, t_ns[1:],
                                                                                   strict=False)]
        assert sum(r > 0.99 for r in ratios) >= 5, ratios  # the 0.3 rad error keeps the limit active
        assert max(ratios) <= 1 + 1e-9, ratios
