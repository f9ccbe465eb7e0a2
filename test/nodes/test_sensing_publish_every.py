"""sensing_publish_every: the sensing topics go out on every N-th state (the wrench computed only then), ~/contact
also whenever the flag changes, while the estimate and the contact test run on every state. In one process over DDS
(the publisher's node and a probe share a context)."""

from __future__ import annotations

import time

import numpy as np
import pytest
import rclpy
from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool

from deadzone_id_ros.models.runtime import ZeroModel
from deadzone_id_ros.nodes.sensing_publisher import SensingPublisher
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.sensing import SensingConfig, build_sensor

pytestmark = pytest.mark.integration

NAMES = ("joint1", "joint2", "joint3")
N_STATES, EVERY, RISE = 30, 5, 7  # the contact starts on state 7, between two published states


@pytest.fixture
def context():
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    yield ctx
    rclpy.shutdown(context=ctx)


def _run(context, every: int):
    """Feed N_STATES states (a torque above the threshold from state RISE on) through a SensingPublisher with
    ``publish_every`` = every; return (the samples it returned, the messages the probe got per topic)."""
    config = SensingConfig(sensing=True, sensing_dead_zone=False, sensing_cutoff=1e9, sensing_threshold=(0.5,) * 3,
                           sensing_confirm=1, sensing_frame="link3", sensing_publish_every=every)
    node = Node("sensing_pub", context=context)
    probe = Node("sensing_probe", context=context)
    got: dict[str, list] = {k: [] for k in ("external_torque", "external_torque_band", "contact", "contact_state",
                                            "external_wrench")}
    types = {"contact": Bool, "external_wrench": WrenchStamped}
    for topic, msgs in got.items():
        probe.create_subscription(types.get(topic, JointState), f"/sensing_pub/{topic}", msgs.append, 100)
    pub = SensingPublisher(node, build_sensor(config, ZeroModel(NAMES), default_urdf(), NAMES), every)
    ex = rclpy.executors.SingleThreadedExecutor(context=context)
    ex.add_node(node)
    ex.add_node(probe)
    end = time.monotonic() + 10.0
    while time.monotonic() < end and any(
            p.get_subscription_count() < 1 for p in (pub._torque_pub, pub._wrench_pub, pub._contact_pub)):
        ex.spin_once(timeout_sec=0.01)
    samples = []
    q, dq = np.array([0.1, 0.3, 0.6]), np.full(3, 0.5)
    for k in range(N_STATES):
        tau = np.full(3, -1.0 if k >= RISE else 0.0)  # the residual of a zero model is -tau: 1 N·m from RISE on
        samples.append(pub.update(Time(sec=1, nanosec=k * 1_000_000), 1.0 + k * 1e-3, q, dq, tau))
    want = (N_STATES + every - 1) // every
    end = time.monotonic() + 10.0
    while time.monotonic() < end and len(got["external_torque"]) < want:
        ex.spin_once(timeout_sec=0.01)
    for _ in range(20):  # anything late
        ex.spin_once(timeout_sec=0.01)
    ex.shutdown()
    node.destroy_node()
    probe.destroy_node()
    return samples, got


def test_topics_go_out_on_every_nth_state_and_the_contact_on_each_change(context):
    samples, got = _run(context, EVERY)
    published = list(range(0, N_STATES, EVERY))
    for topic in ("external_torque", "external_torque_band", "contact_state", "external_wrench"):
        assert [m.header.stamp.nanosec // 1_000_000 for m in got[topic]] == published, topic
    # the contact test ran on every state: the flag rose on state RISE (not on the next published one)
    assert [bool(s.contact.in_contact) for s in samples] == [k >= RISE for k in range(N_STATES)]
    # ~/contact: every published state, plus the rise in between (False x2, the rise, then True on 10, 15, ...)
    assert [m.data for m in got["contact"]] == [False, False, True] + [True] * (len(published) - 2)
    # the wrench is computed only on the published states
    assert [s.wrench is not None for s in samples] == [k % EVERY == 0 for k in range(N_STATES)]
    assert np.abs(np.array([got["external_torque"][-1].effort])).min() == pytest.approx(1.0)


def test_every_state_by_default(context):
    samples, got = _run(context, 1)
    assert len(got["external_torque"]) == len(got["contact"]) == len(got["external_wrench"]) == N_STATES
    assert all(s.wrench is not None for s in samples)
    with pytest.raises(ValueError, match="sensing_publish_every = 0 must be a whole number"):
        SensingConfig(sensing_publish_every=0)
