"""The excitation node publishes the core excitation as JointTrajectory windows, seeded and within limits."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO, executable
from trajectory_msgs.msg import JointTrajectory

from deadzone_id_ros.control import ExcitationConfig, generate_excitation

pytestmark = pytest.mark.integration


def test_excitation_windows_match_the_core_generator(processes, ros_probe):
    msgs = ros_probe.listen("/feedforward_controller/reference", JointTrajectory, qos=10, keep=lambda m: m)
    proc = processes.start([executable("excitation"), "--ros-args", "--params-file",
                            str(REPO / "config" / "excitation.yaml"), "-p", "center_from_start:=false",
                            "-p", "duration:=10.0", "-p", "seed:=11", "-p", "publish_period:=0.2",
                            "-p", "horizon:=1.0", "-p", "start_delay:=0.2"], "excitation")
    assert ros_probe.spin(30.0, until=lambda: len(msgs) >= 3, step=0.05), processes.log(proc)
    expected = generate_excitation(ExcitationConfig(duration=10.0, seed=11, center_from_start=False))
    stamps = {(m.header.stamp.sec, m.header.stamp.nanosec) for m in msgs}
    assert len(stamps) == 1  # every window shares the trajectory start
    for m in msgs:
        assert list(m.joint_names) == ["joint1", "joint2", "joint3"]
        t = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in m.points])
        k = np.rint(t / 0.01).astype(int)
        np.testing.assert_allclose(t, expected.t[k], atol=1e-9)
        np.testing.assert_allclose([p.positions for p in m.points], expected.position[k], atol=1e-12)
        np.testing.assert_allclose([p.accelerations for p in m.points], expected.acceleration[k], atol=1e-12)
        if t[0] > 0:  # a window published before the trajectory start begins at t = 0 and covers less
            assert 1.0 - 0.02 <= t[-1] - t[0] <= 1.0 + 0.25


def test_bad_center_is_refused_without_traceback(processes):
    proc = processes.start([executable("excitation"), "--ros-args", "-p", "center_from_start:=false",
                            "-p", "center:=[0.0, 1.55, 0.0]"], "excitation_bad")
    assert proc.wait(30) == 2
    log = processes.log(proc)
    assert "center [0.0, 1.55, 0.0] is outside the position limits" in log and "Traceback" not in log, log
