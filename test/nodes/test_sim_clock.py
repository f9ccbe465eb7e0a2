"""Simulated time without /clock (issue 11 items 12, 13): nodes warn, wait for the first /clock before fixing a start
time, and bag_replay gives up with a non-zero exit status after a bounded wait."""

from __future__ import annotations

import time

import pytest
from builtin_interfaces.msg import Time
from conftest import REPO, executable
from rosgraph_msgs.msg import Clock
from trajectory_msgs.msg import JointTrajectory

pytestmark = pytest.mark.integration

CLOCK_S = 1000  # the simulated time the test's /clock publishes [s]


def test_excitation_waits_for_the_first_clock_before_fixing_its_start(processes, ros_probe):
    msgs = ros_probe.listen("/feedforward_controller/reference", JointTrajectory, qos=10, keep=lambda m: m)
    proc = processes.start([executable("excitation"), "--ros-args", "--params-file",
                            str(REPO / "config" / "excitation.yaml"), "-p", "use_sim_time:=true",
                            "-p", "center_from_start:=false", "-p", "duration:=10.0", "-p", "publish_period:=0.2",
                            "-p", "start_delay:=0.5"], "excitation_sim")
    # no /clock: nothing is published, and the node says why within a few seconds
    ros_probe.spin(40.0, until=lambda: "no /clock message arrived" in processes.log(proc), step=0.05)
    assert "no /clock message arrived" in processes.log(proc), processes.log(proc)
    assert msgs == [], "a reference went out before the first /clock (its start time is wrong)"
    pub = ros_probe.publisher(Clock, "/clock")

    def tick() -> None:
        pub.publish(Clock(clock=Time(sec=CLOCK_S, nanosec=0)))

    assert ros_probe.spin(30.0, until=lambda: len(msgs) >= 2, step=0.05, tick=tick), processes.log(proc)
    start = msgs[0].header.stamp.sec + msgs[0].header.stamp.nanosec * 1e-9
    assert start == pytest.approx(CLOCK_S + 0.5, abs=1e-6)  # first /clock + start_delay, not 0 + start_delay


def test_bag_replay_without_clock_exits_non_zero_after_its_timeout(processes, tmp_path):
    from deadzone_id_ros.data.bag import write_recording
    from deadzone_id_ros.sim.offline import simulate

    bag = write_recording(simulate(0.5, seed=1), tmp_path / "bag")
    t0 = time.monotonic()
    proc = processes.start([executable("bag_replay"), "--ros-args", "-p", f"bag:={bag}", "-p", "use_sim_time:=true",
                            "-p", "clock_timeout:=4.0"], "bag_replay_no_clock")
    assert proc.wait(120) == 1, processes.log(proc)
    log = processes.log(proc)
    assert "no /clock message arrived in" in log  # the early warning
    assert "no /clock message arrived within 4 s" in log and "Traceback" not in log, log
    assert time.monotonic() - t0 < 110  # bounded: the timeout plus start-up on a loaded machine


def test_recorder_warns_when_no_clock_arrives(processes, ros_probe, tmp_path):
    proc = processes.start([executable("recorder"), "--ros-args", "-p", "use_sim_time:=true",
                            "-p", f"output_dir:={tmp_path / 'rec'}"], "recorder_sim")
    ros_probe.spin(40.0, until=lambda: "no /clock message arrived" in processes.log(proc), step=0.05)
    assert "no /clock message arrived" in processes.log(proc), processes.log(proc)
    assert processes.stop(proc) == 0


def test_controller_warns_when_no_clock_arrives(processes):
    """The controller polls its clock watch from its steady watchdog timer (not the spin loop): it still warns."""
    proc = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file",
                            str(REPO / "config" / "feedforward_controller.yaml"), "-p", "use_sim_time:=true"],
                           "ffc_sim")
    deadline = time.monotonic() + 40.0
    while time.monotonic() < deadline and "no /clock message arrived" not in processes.log(proc):
        time.sleep(0.1)
    assert "no /clock message arrived" in processes.log(proc), processes.log(proc)
    assert processes.stop(proc) == 0


def test_recorder_started_before_clock_fixes_its_start_time_at_the_first_clock(processes, ros_probe, tmp_path):
    """autostart opens the episode at once, but its start time is the first /clock's, not 0."""
    import yaml

    out = tmp_path / "rec"
    proc = processes.start([executable("recorder"), "--ros-args", "-p", "use_sim_time:=true",
                            "-p", f"output_dir:={out}", "-p", "autostart:=true"], "recorder_start")
    ros_probe.spin(30.0, until=lambda: "recording episode" in processes.log(proc), step=0.05)
    assert "start time fixed at the first /clock" in processes.log(proc), processes.log(proc)
    pub = ros_probe.publisher(Clock, "/clock")
    ros_probe.spin(30.0, step=0.05, tick=lambda: pub.publish(Clock(clock=Time(sec=CLOCK_S, nanosec=0))),
                   until=lambda: "(the first /clock)" in processes.log(proc))
    # one joint state, so that the episode holds a message (a recorder stopped with none removes its empty episode)
    from sensor_msgs.msg import JointState

    states = ros_probe.publisher(JointState, "/joint_states")
    state = JointState(name=["joint1"], position=[0.0], velocity=[0.0], effort=[0.0])
    state.header.stamp = Time(sec=CLOCK_S, nanosec=1_000_000)
    ros_probe.spin(1.0, step=0.05, tick=lambda: states.publish(state))  # a second of states for discovery
    assert processes.stop(proc) == 0
    (episode,) = out.glob("*/episode.yaml")
    doc = yaml.safe_load(episode.read_text())
    assert doc["start_time_ns"] == CLOCK_S * 10**9, doc  # the first /clock, not the 0 of a clock not yet started
    assert doc["stop_time_ns"] >= CLOCK_S * 10**9, doc
