"""~/reference decoded from its serialized bytes (rosbags' CDR) equals what rclpy's own deserializer gives."""

from __future__ import annotations

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from rclpy.serialization import deserialize_message, serialize_message
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from deadzone_id_ros.nodes.feedforward_controller_reference import decode_reference
from deadzone_id_ros.stamps import EpochSeconds, stamp_to_ns

NAMES = ["joint3", "joint1", "joint2"]


def _message(k: int = 5, stamp_sec: int = 1_700_000_000, velocities: bool = True) -> JointTrajectory:
    rng = np.random.default_rng(k)
    msg = JointTrajectory(joint_names=NAMES)
    msg.header.stamp.sec, msg.header.stamp.nanosec = stamp_sec, 123_456_789 if stamp_sec else 0
    msg.points = [JointTrajectoryPoint(
        positions=rng.normal(size=3).tolist(), velocities=rng.normal(size=3).tolist() if velocities else [],
        accelerations=rng.normal(size=3).tolist() if velocities else [],
        time_from_start=Duration(sec=i // 3, nanosec=(i % 3) * 300_000_000)) for i in range(k)]
    return msg


@pytest.mark.parametrize("velocities", [True, False])
def test_decoded_points_equal_rclpys_message(velocities):
    raw = serialize_message(_message(velocities=velocities))
    ref = deserialize_message(raw, JointTrajectory)  # what the node subscribed before
    clock = EpochSeconds()
    pts = decode_reference(raw, 0.0, clock)
    assert pts is not None and pts.joint_names == tuple(NAMES)
    start = stamp_to_ns(ref.header.stamp)
    np.testing.assert_array_equal(pts.t, [clock.to_s(start + stamp_to_ns(p.time_from_start)) for p in ref.points])
    np.testing.assert_array_equal(pts.position, [list(p.positions) for p in ref.points])
    if velocities:
        np.testing.assert_array_equal(pts.velocity, [list(p.velocities) for p in ref.points])
        np.testing.assert_array_equal(pts.acceleration, [list(p.accelerations) for p in ref.points])
    else:
        assert pts.velocity is None and pts.acceleration is None


def test_a_zero_stamp_means_now_and_an_empty_message_holds():
    clock = EpochSeconds()
    now = clock.to_s(1_700_000_005_000_000_000)
    pts = decode_reference(serialize_message(_message(stamp_sec=0)), now, clock)
    assert pts is not None
    np.testing.assert_allclose(pts.t[:2], [now, now + 0.3], rtol=0, atol=1e-9)
    assert decode_reference(serialize_message(JointTrajectory(joint_names=NAMES)), now, clock) is None


def test_bad_messages_are_refused_with_the_reason():
    msg = _message()
    msg.points[2].positions = [0.0, 1.0]
    with pytest.raises(ValueError, match=r"every point needs 3 positions \(one per joint name\)"):
        decode_reference(serialize_message(msg), 0.0, EpochSeconds())
    with pytest.raises(ValueError, match="not a CDR message"):
        decode_reference(b"\x07\x07\x00\x00", 0.0, EpochSeconds())
    with pytest.raises(ValueError, match="cannot deserialize trajectory_msgs/msg/JointTrajectory"):
        decode_reference(serialize_message(msg)[:40], 0.0, EpochSeconds())
