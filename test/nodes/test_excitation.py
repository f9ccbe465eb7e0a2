"""The excitation node publishes the core excitation as JointTrajectory windows, seeded and within limits."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO, executable
from trajectory_msgs.msg import JointTrajectory

from deadzone_id_ros.control import generate_excitation
from deadzone_id_ros.robot_configs import bundled_excitation_config

pytestmark = pytest.mark.integration


def test_excitation_windows_match_the_core_generator(processes, ros_probe):
    msgs = ros_probe.listen("/feedforward_controller/reference", JointTrajectory, qos=10, keep=lambda m: m)
    proc = processes.start([executable("excitation"), "--ros-args", "--params-file",
                            str(REPO / "config" / "excitation.yaml"), "-p", "center_from_start:=false",
                            "-p", "duration:=10.0", "-p", "seed:=11", "-p", "publish_period:=0.2",
                            "-p", "horizon:=1.0", "-p", "start_delay:=0.2"], "excitation")
    assert ros_probe.spin(30.0, until=lambda: len(msgs) >= 3, step=0.05), processes.log(proc)
    expected = generate_excitation(bundled_excitation_config(duration=10.0, seed=11, center_from_start=False))
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


def test_start_is_taken_on_the_simulated_clock_after_the_trajectory_is_ready(monkeypatch):
    """Issue 22 item 9: under simulated time the start used to be the clock's time *before* the trajectory was
    generated; a lockstep simulator runs its clock faster than the wall, so the first window (stamped with that start)
    lay seconds in the past on arrival and the controller joined the trajectory seconds into it. In process and
    deterministic: the simulated clock is moved 3 s forward while the trajectory is generated (what a fast simulated
    clock does during that wall time), and the start must be taken after it."""
    import rclpy
    from builtin_interfaces.msg import Time as TimeMsg
    from rclpy.parameter import Parameter
    from rclpy.time import Time

    from deadzone_id_ros.nodes import excitation as node_module

    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    sent: list[JointTrajectory] = []
    try:
        node = node_module.ExcitationNode(context=ctx, parameter_overrides=[
            Parameter("use_sim_time", value=True), Parameter("center_from_start", value=False),
            Parameter("duration", value=5.0), Parameter("start_delay", value=0.5)])
        try:
            clock = node.get_clock()
            real_generate = node_module.generate_excitation

            def generate_while_the_clock_runs(*args, **kwargs):
                points = real_generate(*args, **kwargs)
                clock.set_ros_time_override(Time(seconds=1003.0, clock_type=clock.clock_type))
                return points

            monkeypatch.setattr(node_module, "generate_excitation", generate_while_the_clock_runs)
            monkeypatch.setattr(node._pub, "publish", sent.append)
            assert not node.clock_watch.ready  # no /clock yet: nothing started
            clock.set_ros_time_override(Time(seconds=1000.0, clock_type=clock.clock_type))  # the first /clock
            node.clock_watch.poll()
            assert node.clock_watch.ready and len(sent) == 1
            assert sent[0].header.stamp == TimeMsg(sec=1003, nanosec=500_000_000)  # after generating + start_delay
            assert sent[0].points[0].time_from_start.sec == 0 and sent[0].points[0].time_from_start.nanosec == 0
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)


def test_the_excitation_waits_for_its_subscribers_before_starting(processes, ros_probe):
    """With wait_for_subscribers (2 in sim_feedforward.launch.yaml: the controller and the recorder) the excitation
    starts only once both take the reference, so a recording holds all of it even when DDS matches the recorder late
    (a live run recorded 0 references while the controller followed them). Its first window starts at t = 0."""
    msgs = ros_probe.listen("/feedforward_controller/reference", JointTrajectory, qos=10, keep=lambda m: m)
    proc = processes.start([executable("excitation"), "--ros-args", "--params-file",
                            str(REPO / "config" / "excitation.yaml"), "-p", "center_from_start:=false",
                            "-p", "duration:=5.0", "-p", "publish_period:=0.2", "-p", "start_delay:=0.2",
                            "-p", "wait_for_subscribers:=2"], "excitation_wait")
    ros_probe.spin(90.0, until=lambda: "waiting for 2 subscriber(s)" in processes.log(proc), step=0.05)
    assert "waiting for 2 subscriber(s) of /feedforward_controller/reference (have " in processes.log(proc), \
        processes.log(proc)
    ros_probe.spin(1.0, step=0.05)
    assert msgs == [], "the excitation started with one of its two subscribers"
    second = ros_probe.listen("/feedforward_controller/reference", JointTrajectory, qos=10, keep=lambda m: m)
    assert ros_probe.spin(90.0, until=lambda: len(second) >= 2, step=0.05), processes.log(proc)
    first = msgs[0] if msgs else second[0]
    t0 = first.points[0].time_from_start
    assert (t0.sec, t0.nanosec) == (0, 0)
