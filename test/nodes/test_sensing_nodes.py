"""The sensing of the force_estimator and feedforward_controller nodes in-process (no DDS peers): the band's fade and
a servo's Present_Load reach the estimator node's sensor, and the controller's latency figure leaves the sensing
cost out while its diagnostics report that cost."""

from __future__ import annotations

import time

import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

from deadzone_id_ros.data.effort_units import PRESENT_LOAD
from deadzone_id_ros.nodes.feedforward_controller import FeedforwardControllerNode
from deadzone_id_ros.nodes.force_estimator import ForceEstimatorNode
from deadzone_id_ros.sensing import ResidualEstimator
from deadzone_id_ros.sim.servo import present_load

NAMES = ["joint1", "joint2", "joint3"]


@pytest.fixture
def make_node():
    """make_node(cls, **parameters): the node in a context of its own, destroyed with the context after the test."""
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    made = []

    def make(cls, **params):
        """A ``cls`` node with the parameters ``params``, in the test's context."""
        made.append(cls(context=ctx, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()]))
        return made[-1]

    try:
        yield make
    finally:
        for node in made:
            node.destroy_node()
        rclpy.shutdown(context=ctx)


def _state(t: float, q, dq, effort) -> JointState:
    msg = JointState(name=NAMES, position=list(q), velocity=list(dq), effort=list(effort))
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(t), int(round((t - int(t)) * 1e9))
    return msg


def test_force_estimator_takes_the_band_fade(make_node):
    node = make_node(ForceEstimatorNode, sensing_velocity_threshold=[0.01, 0.01, 0.01],
                     sensing_fade_velocity=[0.0, 0.02, 0.04])
    np.testing.assert_allclose(node.sensing.sensor.band.fade_velocity, [0.0, 0.02, 0.04])


def test_force_estimator_converts_a_servo_present_load_to_torque(make_node):
    w0 = [5.0, 6.0, 7.0]
    node = make_node(ForceEstimatorNode, sensing_effort_unit=PRESENT_LOAD, sensing_no_load_speed=w0,
                     sensing_cutoff=1e6)
    stall = np.asarray(node.config.effort_limit)
    assert stall.shape == (3,)  # the profile's effort limit is the stall torque
    reference = ResidualEstimator(node.sensing.sensor.estimator.model, [1e6] * 3)  # the same model, fed N·m
    rng = np.random.default_rng(7)
    q, dq = np.array([0.1, 0.4, 0.7]), np.array([0.3, -0.2, 0.5])
    for k in range(5):
        tau = rng.uniform(-0.5, 0.5, 3) * stall
        load = present_load(tau, dq, stall, np.asarray(w0))
        node._on_joint_state(_state(10.0 + 0.001 * k, q, dq, load))
        expected = reference.update(10.0 + 0.001 * k, q, dq, tau)
        q, dq = q + 0.001 * dq, dq + 0.01
    # what the node estimates from Present_Load is what it would from the torque, to the reading's quantum
    np.testing.assert_allclose(node.sensing.last.tau_ext, expected, rtol=0, atol=np.max(stall) / 1000)


def test_force_estimator_says_when_no_state_holds_its_joints(make_node):
    node = make_node(ForceEstimatorNode)  # the bundled arm's joints
    for k in range(3):
        other = JointState(name=["shoulder_pan", "elbow_flex"], position=[0.0, 0.1], velocity=[0.0, 0.0],
                           effort=[0.0, 0.0])
        other.header.stamp.nanosec = k * 1_000_000
        node._on_joint_state(other)
    status = _diagnostics(node)
    assert status.level == status.ERROR
    assert "3 /joint_states messages, none with every joint ['joint1', 'joint2', 'joint3']" in status.message
    assert "['shoulder_pan', 'elbow_flex']" in status.message
    node._on_joint_state(_state(0.01, [0.0, 0.3, 0.6], [0.0] * 3, [0.0] * 3))
    assert _diagnostics(node).level != status.ERROR  # once a state holds them, the sensor's own status


def _diagnostics(node):
    """The node's /diagnostics entry, as its timer would publish it."""
    got = []
    node._diag_pub = type("Capture", (), {"publish": lambda self, arr: got.append(arr)})()
    node._on_diagnostics()
    return got[-1].status[0]


def test_controller_latency_leaves_the_sensing_cost_out_and_reports_it(make_node):
    node = make_node(FeedforwardControllerNode, sensing=True, mode="pd_dob", watchdog_timeout=5.0)
    slow = 0.3  # [s] a sensing cost far above any state->command latency of this in-process call
    update = node._sensing.sensor.update

    def slow_update(*args, **kwargs):
        time.sleep(slow)
        return update(*args, **kwargs)

    node._sensing.sensor.update = slow_update
    now = time.time()
    node._on_joint_state(_state(now, [0.0, 0.3, 0.6], [0.0] * 3, [0.0] * 3))
    assert node._sensing.cost and node._sensing.cost[-1] >= slow
    assert node._latency[-1] < slow  # the command went out before sensing: its latency does not include it
    status = node._sensing.status("sensing", "ffc")
    cost = {kv.key: kv.value for kv in status.values}["sensing compute time median / max [us]"]
    assert float(cost.split("/")[0]) >= slow * 1e6
