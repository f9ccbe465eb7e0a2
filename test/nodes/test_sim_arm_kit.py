"""sim_arm as its own process on a profile that gives its actuator kit (issue 39, item 5): the /joint_states it
publishes over DDS carry positions in whole encoder counts, at the profile's rate, and efforts clamped at the
profile's effort limit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import REPO, executable, wait_for_progress, wait_until
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.stamps import stamp_to_ns

pytestmark = pytest.mark.integration

JOINTS = ("joint1", "joint2", "joint3")
COUNT = 2 * math.pi / 4096
LIMIT = (1.5, 3.0, 1.0)
RATE = 250.0


def test_joint_states_carry_encoder_counts_at_the_profiles_rate_and_clamped_efforts(processes, ros_probe, tmp_path):
    settings = "".join(f"  {j}:\n    effort_limit: {{value: {e}, source: test}}\n"
                       f"    encoder_resolution: {{value: {COUNT!r}, source: test}}\n" for j, e in zip(JOINTS, LIMIT))
    profile = tmp_path / "kit.yaml"
    profile.write_text(f"name: kit\nurdf: {default_urdf()}\njoints: [{', '.join(JOINTS)}]\nhome: [0.0, 0.3, 0.6]\n"
                       f"control_rate: {RATE}\nsettings:\n{settings}")
    msgs = ros_probe.listen("/joint_states", JointState)
    pub = ros_probe.publisher(Float64MultiArray, "/effort_controller/commands")
    proc = processes.start(
        [executable("sim_arm"), "--ros-args", "--params-file", str(REPO / "config" / "sim_arm.yaml"),
         "-p", f"robot:={profile}", "-p", "clock_mode:=sim", "-p", "lockstep:=true", "-p", "lockstep_timeout:=30.0"],
        "sim_arm_kit")
    assert wait_until(lambda: (ros_probe.spin(0.05), len(msgs) > 0)[1], 90.0), processes.log(proc)

    def answer(_msg):  # beyond every limit, pushing joint 2 up against gravity and the others both ways
        pub.publish(Float64MultiArray(data=[-9.0, 9.0, 4.5]))

    sub = ros_probe.node.create_subscription(JointState, "/joint_states", answer, 100)

    def ticks() -> int:
        ros_probe.spin(0.1)
        return len({stamp_to_ns(m.header.stamp) for _, m in msgs})

    wait_for_progress(lambda: ticks() > 100, ticks, log=lambda: processes.log(proc))
    ros_probe.node.destroy_subscription(sub)
    states = {stamp_to_ns(m.header.stamp): m for _, m in msgs}
    stamps = np.array(sorted(states), dtype=np.int64)
    np.testing.assert_array_equal(np.diff(stamps), round(1e9 / RATE))  # lockstep: one tick of the profile's rate
    q = np.array([states[t].position for t in stamps])
    np.testing.assert_allclose(q / COUNT, np.round(q / COUNT), rtol=0, atol=1e-6)
    assert len(np.unique(np.round(q[:, 0] / COUNT))) > 10  # it moved over many counts
    effort = np.array([states[t].effort for t in stamps[5:]])  # after the first answers took effect
    np.testing.assert_allclose(effort, np.tile([-1.5, 3.0, 1.0], (len(effort), 1)))
    assert processes.stop(proc) == 0
