"""The feedforward_controller node in-process (no DDS peers): the steady-clock watchdog backstop under a stalled
/clock, live validated parameters with descriptions and ranges, the runaway safe state on /diagnostics and ~/reset."""

from __future__ import annotations

import time

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from deadzone_id_ros.control.feedforward_controller_params import PARAMETER_RANGES
from deadzone_id_ros.nodes.feedforward_controller import FeedforwardControllerNode
from deadzone_id_ros.sensing.sensor import SENSING_RANGES

NAMES = ["joint1", "joint2", "joint3"]
Q0 = [0.0, 0.3, 0.6]


@pytest.fixture
def make_node():
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    nodes = []

    def make(**params):
        overrides = [Parameter(k, value=v) for k, v in params.items()]
        node = FeedforwardControllerNode(context=ctx, parameter_overrides=overrides)
        nodes.append(node)
        return node

    yield make
    for node in nodes:
        node.destroy_node()
    rclpy.shutdown(context=ctx)


def _state(t: float, q=Q0) -> JointState:
    msg = JointState(name=NAMES, position=list(q), velocity=[0.0] * 3, effort=[0.0] * 3)
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(t), int(round((t - int(t)) * 1e9))
    return msg


def _log_lines(capfd, text: str) -> list[str]:
    """The lines the ROS logger wrote to stderr since the last call that contain ``text`` (each "[SEVERITY] ...")."""
    return [line for line in capfd.readouterr().err.splitlines() if text in line]


def _no_deprecated_warn(*_args, **_kwargs):
    raise AssertionError("Logger.warn is deprecated: use Logger.warning")


def _spin(node, seconds: float, until=None) -> None:
    """Spin ``node`` for ``seconds`` [s], or until ``until()`` is true (then ``seconds`` only bounds a hung test)."""
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    end = time.monotonic() + seconds
    while time.monotonic() < end and not (until is not None and until()):
        executor.spin_once(timeout_sec=0.01)
    executor.remove_node(node)


def test_stalled_clock_still_triggers_the_watchdog(make_node, capfd):
    """The steady-clock backstop is a wall-time safety feature: it is tested by order and by a lower bound on the
    steady time (it never zeroes before backstop + hold), which no machine load can break; the upper bound only
    ends a hung test."""
    # simulated time with no /clock at all: the ROS clock stands at zero, as when the simulator's /clock stalls
    node = make_node(use_sim_time=True, watchdog_steady_timeout=0.2, watchdog_hold_time=0.2)
    node.get_logger().warn = _no_deprecated_warn
    for k in range(20):
        node._on_joint_state(_state(5.0 + 0.001 * k))
    last_state = time.monotonic()
    assert node.controller.status.watchdog == "running"
    sent: list[tuple[float, np.ndarray]] = []
    node._publish = lambda tau: sent.append((time.monotonic(), np.array(tau)))
    _spin(node, 60.0, until=lambda: node.controller.status.watchdog == "zero" and bool(sent)
          and not sent[-1][1].any())
    assert node.controller.status.watchdog == "zero"
    np.testing.assert_array_equal(sent[-1][1], np.zeros(3))
    first_zero = next(k for k, (_, tau) in enumerate(sent) if not tau.any())
    assert first_zero > 0 and all(abs(tau[1]) > 0.5 for _, tau in sent[:first_zero])  # held the static torque first
    assert sent[first_zero][0] - last_state >= 0.2 + 0.2 - 0.01, "zeroed before backstop + hold"
    # each transition logged once, the stale ones as warnings (the real logger: it refuses a call site that logs
    # at two severities, which would stop the node at its first watchdog transition)
    lines = _log_lines(capfd, "watchdog: ")
    assert [line.split(" ", 1)[0] + line.split("]: ", 1)[1] for line in lines] == [
        "[INFO]watchdog: waiting -> running", "[WARN]watchdog: running -> hold", "[WARN]watchdog: hold -> zero"], lines


def test_parameters_have_descriptions_and_ranges_and_apply_live(make_node):
    node = make_node()
    for name in node._parameters:
        if name == "use_sim_time":
            continue
        desc = node.describe_parameter(name)
        assert desc.description, name
        value = node.get_parameter(name).value
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool) or (
            isinstance(value, list) and value and isinstance(value[0], float))
        if numeric:
            assert name in PARAMETER_RANGES or name in SENSING_RANGES, f"{name} has no range"
    assert node.describe_parameter("watchdog_timeout").floating_point_range[0].to_value == 10.0
    # a live change is applied to the running controller
    assert node.set_parameters([Parameter("kp", value=[100.0, 200.0, 300.0])])[0].successful
    np.testing.assert_array_equal(node.controller.kp, [100.0, 200.0, 300.0])
    assert node.set_parameters([Parameter("tracking_error_limit", value=0.2)])[0].successful
    assert node.controller.safety.tracking_error_limit.tolist() == [0.2] * 3
    # refused, with the reason, and nothing changes
    result = node.set_parameters([Parameter("dob_cutoff", value=[150.0, 5000.0, 150.0])])[0]
    assert not result.successful and "Nyquist" in result.reason, result.reason
    assert node.controller.dob.cutoff.tolist() == [90.0, 150.0, 150.0]  # the bundled arm's profile
    result = node.set_parameters([Parameter("torque_rate_limit", value=[400.0, -1.0, 500.0])])[0]
    assert not result.successful and "torque_rate_limit[1] = -1.0 is outside its range" in result.reason
    assert not node.set_parameters([Parameter("effort_limit_scale", value=2.0)])[0].successful
    result = node.set_parameters([Parameter("mode", value="ctc")])[0]
    assert not result.successful and "read-only" in result.reason


def test_runaway_goes_to_the_safe_state_with_an_error_diagnostic_until_reset(make_node, capfd):
    node = make_node(tracking_error_limit=0.1, fault_hold_time=0.05)
    published = []
    node._diag_pub.publish = published.append
    node._on_joint_state(_state(1.0))
    node._on_joint_state(_state(1.001, [0.0, 0.5, 0.6]))  # 0.2 rad from the held position
    assert node.controller.status.safe_state == "hold"
    fault = node.controller.status.fault
    assert "tracking error of joint2" in fault
    # logged once, as an error naming the reason and the way out
    errors = _log_lines(capfd, "[ERROR]")
    assert len(errors) == 1 and f"[feedforward_controller]: safe state at t = 1.001000000 s: {fault}; " in errors[0], \
        errors
    assert errors[0].endswith("until /feedforward_controller/reset is called"), errors
    node._on_diagnostics()
    status = published[-1].status[0]
    assert status.level == DiagnosticStatus.ERROR
    assert "tracking error of joint2" in status.message and "~/reset" in status.message
    node._on_joint_state(_state(1.2, Q0))
    assert node.controller.status.safe_state == "zero"
    response = node._on_reset(Trigger.Request(), Trigger.Response())
    assert response.success, response.message
    assert not _log_lines(capfd, "[ERROR]")  # no second error for the same fault
    assert node.controller.status.safe_state == "ok"
    node._on_diagnostics()
    status = published[-1].status[0]
    assert status.level != DiagnosticStatus.ERROR  # (WARN: the 0.2 s gap counts as a late tick)
    assert {kv.key: kv.value for kv in status.values}["safe_state"] == "ok"
