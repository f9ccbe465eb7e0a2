"""sim_arm as its own process: a test node commands torques over DDS and reads /joint_states back."""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import REPO, executable, wait_for_progress, wait_until
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from deadzone_id_ros.stamps import stamp_to_ns, stamp_to_s

pytestmark = pytest.mark.integration


@pytest.fixture
def probe(ros_probe):
    """The shared test node, recording /joint_states as (arrival time, msg); ``pub`` publishes effort commands."""
    ros_probe.msgs = ros_probe.listen("/joint_states", JointState)
    ros_probe.pub = ros_probe.publisher(Float64MultiArray, "/effort_controller/commands")
    return ros_probe


def spin(probe, seconds: float, command: list[float], period: float = 0.005) -> None:
    """Process callbacks for ``seconds`` while publishing ``command`` every ``period`` [s]."""
    next_pub = [time.monotonic()]

    def publish() -> None:
        if time.monotonic() >= next_pub[0]:
            probe.pub.publish(Float64MultiArray(data=command))
            next_pub[0] = time.monotonic() + period

    probe.spin(seconds, tick=publish)


def test_sim_arm_publishes_joint_states_and_follows_effort_commands(processes, probe):
    proc = processes.start(
        [executable("sim_arm"), "--ros-args", "--params-file", str(REPO / "config" / "sim_arm.yaml")], "sim_arm"
    )
    assert wait_until(lambda: (probe.spin(0.05), len(probe.msgs) > 0)[1], 90.0), processes.log(proc)

    # Motors off at start: no command yet, so the applied torque is zero, and the brakes hold the initial position
    # against gravity (config/sim_arm.yaml: initial_position [0.0, 0.3, 0.6]) however long the controller takes.
    probe.spin(0.5)
    first = probe.msgs[-1][1]
    assert list(first.name) == ["joint1", "joint2", "joint3"]
    assert list(first.effort) == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(first.position, [0.0, 0.3, 0.6], atol=1e-4)

    # 1000 messages, counted (a stall of the flow fails, a loaded machine only takes longer): header stamps advance
    # by whole 1 ms physics steps (one step per message at 1 kHz when the machine keeps up; a late tick catches up
    # with several), never faster than real time. The rate a loaded machine keeps is measured by bench/bench_sim.py.
    probe.msgs.clear()
    probe.spin_for_counts(lambda: (len(probe.msgs),), (1000,), log=lambda: processes.log(proc))
    stamps_ns = np.array([stamp_to_ns(m.header.stamp) for _, m in probe.msgs], dtype=np.int64)
    stamps = (stamps_ns - stamps_ns[0]) * 1e-9
    steps = np.diff(stamps_ns) / 1e6  # [physics steps of 1 ms], exact in integer nanoseconds
    assert np.all(steps >= 1 - 1e-6) and np.allclose(steps, np.round(steps), atol=1e-3), steps[:20]
    assert steps.min() == pytest.approx(1.0)  # at 1 kHz: a tick on time steps once (at 500 Hz: never below 2)
    wall = np.array([t for t, _ in probe.msgs])
    assert stamps[-1] - stamps[0] <= wall[-1] - wall[0] + 0.1  # real time, not faster

    # 1 N·m on the waist (far above its 0.12 N·m friction; no gravity on a yaw joint): it turns positive;
    # 50 N·m on joint2 is clamped to its 10 N·m limit and reported as applied effort.
    probe.msgs.clear()
    q_before = np.array(first.position)
    spin(probe, 0.5, [1.0, 50.0, 0.0])
    last = probe.msgs[-1][1]
    np.testing.assert_allclose(last.effort, [1.0, 10.0, 0.0])
    assert last.position[0] - q_before[0] > 0.05 and last.velocity[0] > 0.1

    # Bad commands are rejected and the last good command kept (for less than the 0.1 s command timeout).
    for bad in ([1.0, 2.0], [float("nan"), 0.0, 0.0]):
        spin(probe, 0.03, bad)
        np.testing.assert_allclose(probe.msgs[-1][1].effort, [1.0, 10.0, 0.0])
        spin(probe, 0.2, [1.0, 50.0, 0.0])

    # Command timeout (0.1 s): silence drops the torque to zero.
    probe.spin(0.5)
    assert list(probe.msgs[-1][1].effort) == [0.0, 0.0, 0.0]

    assert processes.stop(proc) == 0
    log = processes.log(proc)
    assert "got 2 values, expected 3" in log and "non-finite torque for joint(s) ['joint1']" in log
    assert "applying zero torque" in log


def test_sim_arm_in_sim_clock_mode_publishes_clock(processes, ros_probe):
    from rosgraph_msgs.msg import Clock

    clocks = ros_probe.listen("/clock", Clock, keep=lambda m: stamp_to_s(m.clock))
    proc = processes.start(
        [executable("sim_arm"), "--ros-args", "--params-file", str(REPO / "config" / "sim_arm.yaml"),
         "-p", "clock_mode:=sim", "-p", "real_time_factor:=2.0"], "sim_arm_clock")
    assert ros_probe.spin(20.0, until=lambda: len(clocks) > 10, step=0.05), processes.log(proc)
    w0, c0 = time.monotonic(), clocks[-1]
    ros_probe.spin(1.0, step=0.01)
    rate = (clocks[-1] - c0) / (time.monotonic() - w0)
    assert 1.3 < rate < 2.3, f"simulated seconds per wall second {rate:.2f}, expected about 2"
    assert all(b >= a for a, b in zip(clocks, clocks[1:])), "/clock went backwards"
    assert processes.stop(proc) == 0


def test_sim_arm_bad_parameter_exits_non_zero_with_a_clear_message(processes):
    proc = processes.start(
        [executable("sim_arm"), "--ros-args", "--params-file", str(REPO / "config" / "sim_arm.yaml"),
         "-p", "frictionloss:=[0.1,-1.0,0.1]"], "sim_arm_bad")
    assert proc.wait(20) == 2
    log = processes.log(proc)
    assert "frictionloss[1] = -1.0 must be a finite non-negative number" in log and "Traceback" not in log


def test_lockstep_waits_for_the_command_answering_each_state(processes, probe):
    """In lockstep, simulated time advances only while someone answers /joint_states with commands."""
    proc = processes.start(
        [executable("sim_arm"), "--ros-args", "--params-file", str(REPO / "config" / "sim_arm.yaml"),
         "-p", "clock_mode:=sim", "-p", "lockstep:=true", "-p", "lockstep_timeout:=30.0"], "sim_arm_lockstep")
    assert wait_until(lambda: (probe.spin(0.05), len(probe.msgs) > 0)[1], 90.0), processes.log(proc)

    def stamp(m) -> float:
        return stamp_to_s(m.header.stamp)

    # Answer every state with a command (like a controller that runs per /joint_states message).
    answered = {"n": 0}

    def answer(_msg):
        probe.pub.publish(Float64MultiArray(data=[0.0, 0.0, 0.0]))
        answered["n"] += 1

    # Before any command, simulated time does not start: the initial state is repeated with the same stamp.
    probe.spin(0.5)
    assert {stamp(m) for _, m in probe.msgs} == {0.0}
    # ... and it is the same message: no new velocity noise drawn per repeat (else the noise of the whole run, and an
    # open-loop replay's motion, would depend on how long the first answer took)
    assert len(probe.msgs) >= 2 and len({tuple(m.velocity) for _, m in probe.msgs}) == 1, processes.log(proc)
    sub = probe.node.create_subscription(JointState, "/joint_states", answer, 100)
    probe.spin(1.0)
    t_answering = stamp(probe.msgs[-1][1])
    assert answered["n"] > 100
    probe.node.destroy_subscription(sub)
    probe.spin(0.3)  # in-flight answers drain
    before = stamp(probe.msgs[-1][1])
    probe.spin(1.0)  # nobody answers: the simulator must wait
    after = stamp(probe.msgs[-1][1])
    assert after - before <= 0.002, f"simulated time moved {after - before:.4f} s without commands"
    # while answering, every published state is one 1 ms tick after the previous one (no catch-up jumps)
    steps = np.diff([stamp(m) for _, m in probe.msgs if stamp(m) <= t_answering])
    assert np.max(steps) == pytest.approx(1e-3, abs=1e-6)
    assert processes.stop(proc) == 0


def test_lockstep_holds_the_first_state_until_the_named_subscribers_listen(processes, probe, tmp_path):
    """wait_for_subscriber_nodes [recorder]: while no node named recorder subscribes to /joint_states, sim_arm says
    what it waits for and publishes nothing (the probe, another subscriber, does not count); once a real recorder
    process subscribes, the initial state goes out (simulated time can then start with the first answer)."""
    sim = processes.start(
        [executable("sim_arm"), "--ros-args", "--params-file", str(REPO / "config" / "sim_arm.yaml"),
         "-p", "clock_mode:=sim", "-p", "lockstep:=true", "-p", "lockstep_timeout:=30.0",
         "-p", "wait_for_subscriber_nodes:=[recorder]"], "sim_arm_wait_subscribers")
    waiting = "simulated time waits for /joint_states subscribers: missing ['recorder']"
    assert wait_until(lambda: (probe.spin(0.05), waiting in processes.log(sim))[1], 90.0), processes.log(sim)
    probe.spin(0.3)  # three idle periods of the 10 Hz repeat of the initial state
    assert probe.msgs == [], "a state went out before the recorder listened"
    # the recorder listens to /joint_states only (no commands or forces here): in two full-suite runs it matched a
    # stale /effort_controller/commands publisher left in DDS by an earlier test's killed process and then hung on
    # SIGINT (killed after 30 s)
    rec = processes.start([executable("recorder"), "--ros-args", "-p", f"output_dir:={tmp_path / 'rec'}",
                           "-p", "autostart:=true", "-p", "reference_topic:=''",
                           "-p", "command_topic:=/late_recorder_test/commands", "-p", "external_torque_topic:=''",
                           "-p", "contact_topic:=''", "-p", "wrench_topic:=''", "-p", "band_topic:=''",
                           "-p", "flush_period:=0.1"], "recorder_late")
    assert wait_until(lambda: (probe.spin(0.05), len(probe.msgs) >= 3)[1], 90.0), processes.log(sim)
    assert "/joint_states subscribers ready" in processes.log(sim)
    assert {stamp_to_ns(m.header.stamp) for _, m in probe.msgs} == {0}  # the initial state, repeated
    assert processes.stop(rec, timeout=30.0) == 0, processes.log(rec)
    assert processes.stop(sim, timeout=30.0) == 0


def test_lockstep_applies_each_command_the_configured_number_of_ticks_later(processes, probe):
    """actuation_delay 2 ms at 1 kHz in lockstep: the state of tick n reports (as effort) the command that answered
    the state of tick n - 1 - 2; without the delay it would be the answer to tick n - 1."""
    delay = 2
    proc = processes.start(
        [executable("sim_arm"), "--ros-args", "--params-file", str(REPO / "config" / "sim_arm.yaml"),
         "-p", "clock_mode:=sim", "-p", "lockstep:=true", "-p", "lockstep_timeout:=30.0",
         "-p", f"actuation_delay:={delay * 0.001}", "-p", "measurement_delay:=0.0"], "sim_arm_lockstep_delay")
    assert wait_until(lambda: (probe.spin(0.05), len(probe.msgs) > 0)[1], 90.0), processes.log(proc)

    def tick(m) -> int:
        return round((stamp_to_s(m.header.stamp)) * 1000)

    def answer(msg):  # the answer to tick k carries k in its torque (small: the arm barely reacts)
        probe.pub.publish(Float64MultiArray(data=[1e-4 * tick(msg), 0.0, 0.0]))

    sub = probe.node.create_subscription(JointState, "/joint_states", answer, 100)
    # lockstep runs as fast as the round trip allows (slow on a loaded machine): collect more than 200 ticks after
    # the first delay + 1 (ticks 1..3 carry no answer yet), however long; fail only when simulated time (the tick
    # count) stops advancing. (Waiting for tick 201 instead left exactly 200 when the wait ended at tick 203.)
    def latest() -> int:
        probe.spin(0.1)
        return max(tick(m) for _, m in probe.msgs)

    wait_for_progress(lambda: latest() > 201 + delay, latest, log=lambda: processes.log(proc))
    probe.node.destroy_subscription(sub)
    effort = {tick(m): m.effort[0] for _, m in probe.msgs}
    ticks = sorted(n for n in effort if n > delay + 1)
    assert len(ticks) > 200, processes.log(proc)
    np.testing.assert_allclose([effort[n] for n in ticks], [1e-4 * (n - 1 - delay) for n in ticks], atol=1e-12)
    assert all(effort[n] == 0.0 for n in range(1, delay + 2) if n in effort)
    assert processes.stop(proc) == 0


def test_lockstep_needs_sim_clock(processes):
    proc = processes.start(
        [executable("sim_arm"), "--ros-args", "--params-file", str(REPO / "config" / "sim_arm.yaml"),
         "-p", "lockstep:=true"], "sim_arm_lockstep_wall")
    assert proc.wait(20) == 2
    assert "lockstep = true needs clock_mode = 'sim'" in processes.log(proc)


def test_lockstep_does_not_step_on_a_command_received_before_the_state_it_would_answer():
    """In lockstep each answer steps the physics at once. A command that reached the simulator before the state now
    awaiting an answer was published (a controller's second answer to the repeated initial state, queued while the
    simulator was starved) answers an earlier state: counted as the answer, it stepped once more with a stale
    command and left every later command one state behind (measured: the demo's live recording then chattered on
    joints 2 and 3). Driven in process with the DDS reception times that decide it."""
    import rclpy
    from rclpy.parameter import Parameter

    from deadzone_id_ros.nodes.sim_arm import SimArmNode

    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    try:
        node = SimArmNode(context=ctx, parameter_overrides=[
            Parameter("clock_mode", value="sim"), Parameter("lockstep", value=True),
            Parameter("step_on_answer", value=True), Parameter("lockstep_timeout", value=30.0),
            Parameter("real_time_factor", value=1000.0)])
        try:
            time.sleep(0.01)  # simulated time may not run ahead of real_time_factor x the wall time since start
            zero = Float64MultiArray(data=[0.0, 0.0, 0.0])
            node._on_command(zero, {"received_timestamp": time.time_ns()})  # the first answer: step 1
            assert node.arm.time == pytest.approx(0.001) and node._awaiting_since is not None
            sent = node._state_sent_ns
            node._on_command(zero, {"received_timestamp": sent - 1000})  # received before state 1 went out
            last = Float64MultiArray(data=[0.5, -0.5, 0.25])
            node._on_command(last, {"received_timestamp": sent - 1})
            assert node.arm.time == pytest.approx(0.001) and node.stale_commands == 2
            assert node._awaiting_since is not None  # still waiting for the answer to state 1
            # ... but the newest command is kept: a controller's zero torque sent as it shuts down, right after its
            # last answer, is what the arm gets when lockstep_timeout steps it without an answer
            assert list(node._command) == [0.5, -0.5, 0.25]
            node._on_command(zero, {"received_timestamp": time.time_ns()})  # the answer to state 1: step 2
            assert node.arm.time == pytest.approx(0.002) and node.stale_commands == 2
            node._on_command(zero, {"received_timestamp": 0})  # a middleware without reception times: arrival order
            assert node.arm.time == pytest.approx(0.003)
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)
