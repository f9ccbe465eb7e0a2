"""feedforward_controller and sim_arm as separate processes over DDS: tracking per mode, diagnostics, safety
(watchdog, ~/reset from another process), refusals at start naming the cause."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import REPO, executable, wait_for_progress, wait_until
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from deadzone_id_ros.control import TrajectoryPoints, TrajectorySampler, generate_excitation
from deadzone_id_ros.nodes.excitation import reference_message
from deadzone_id_ros.robot_configs import bundled_excitation_config
from deadzone_id_ros.stamps import stamp_to_s

pytestmark = pytest.mark.integration

NAMES = ("joint1", "joint2", "joint3")
PARAMS = str(REPO / "config" / "feedforward_controller.yaml")
SIM_PARAMS = str(REPO / "config" / "sim_arm.yaml")

PROBE_DEPTH = 10000  # messages of history per 1 kHz topic: 10 s


@pytest.fixture
def probe(ros_probe):
    """The shared test node, recording /joint_states, commands, diagnostics and torque parts; ``ref_pub`` publishes
    the controller's reference."""
    # In lockstep the simulator runs as fast as the controller answers, never waiting for this probe: a history
    # deep enough for a whole run (about 4000 states of 1 ms) so that a probe that falls behind on a busy machine
    # loses none (with 100, one run under load kept 137 of the 3000 states of its reference)
    ros_probe.states = ros_probe.listen("/joint_states", JointState, qos=PROBE_DEPTH, keep=lambda m: m)
    ros_probe.commands = ros_probe.listen("/effort_controller/commands", Float64MultiArray, qos=PROBE_DEPTH,
                                          keep=lambda m: list(m.data))
    ros_probe.diagnostics = ros_probe.listen("/diagnostics", DiagnosticArray, qos=10, keep=lambda m: m)
    ros_probe.parts = ros_probe.listen("/feedforward_controller/torque_parts", Float64MultiArray, qos=10,
                                       keep=lambda m: m)
    ros_probe.ref_pub = ros_probe.publisher(JointTrajectory, "/feedforward_controller/reference")
    return ros_probe


def _stamp_s(msg) -> float:
    return stamp_to_s(msg.header.stamp)


def _track(processes, probe, mode: str, seconds: float = 3.0) -> float:
    """Start sim_arm + the controller in ``mode``, send an excitation reference, return the position RMSE [rad].

    The simulator owns time and runs in lockstep with the controller (each 1 ms tick waits for the command that
    answers the last state), so the result measures the control law over DDS, not how busy the machine is.
    """
    # the probe may still hold a backlog of the last mode's run (its history is deep so that it loses nothing):
    # taken now, before this run's simulator starts, none of it can be read as this run's start state (its stamp
    # t0, its position the reference's start) or land in this run's window. Measured under load: 79-4073 messages
    # of the run before were still queued here; without this drain 1 of 2 runs failed (ctc_dob 0.032 rad with 3599
    # states in its 3 s window; a full-suite run: pd_dob 0.52 rad, 0.001 idle), with it 2 of 2 passed.
    drained = probe.drain()
    probe.states.clear()
    sim = processes.start([executable("sim_arm"), "--ros-args", "--params-file", SIM_PARAMS,
                           "-p", "clock_mode:=sim", "-p", "lockstep:=true"], f"sim_{mode}")
    ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                           "-p", f"mode:={mode}", "-p", "use_sim_time:=true"], f"ffc_{mode}")
    assert wait_until(lambda: (probe.spin(0.05), "waiting -> running" in processes.log(ctl))[1], 90.0), \
        processes.log(ctl)
    assert wait_until(lambda: (probe.spin(0.05), len(probe.states) > 0)[1], 90.0), processes.log(sim)
    assert wait_until(lambda: (probe.spin(0.05), probe.ref_pub.get_subscription_count() > 0)[1], 90.0)
    last = probe.states[-1]
    pos = dict(zip(last.name, last.position))
    points = generate_excitation(bundled_excitation_config(duration=seconds, seed=5, lead_in=0.2),
                                 start=[pos[j] for j in NAMES])
    t0_ns = round(_stamp_s(last) * 1e9) + 400_000_000  # simulated time, from sim_arm's stamps
    probe.ref_pub.publish(reference_message(points, t0_ns))
    probe.states.clear()
    end = t0_ns * 1e-9 + seconds + 0.2
    # lockstep: wait in simulated time; fail only when it stops advancing (a loaded machine only takes longer)
    wait_for_progress(lambda: (probe.spin(0.05), bool(probe.states) and _stamp_s(probe.states[-1]) > end)[1],
                      lambda: _stamp_s(probe.states[-1]) if probe.states else None, period=0.0,
                      log=lambda: processes.log(sim))
    sampler = TrajectorySampler(TrajectoryPoints(NAMES, points.t + t0_ns * 1e-9, points.position, points.velocity,
                                                 points.acceleration))
    stamps = np.array([_stamp_s(m) for m in probe.states])
    idx = [list(probe.states[0].name).index(j) for j in NAMES]
    q = np.array([np.asarray(m.position)[idx] for m in probe.states])
    inside = (stamps > t0_ns * 1e-9) & (stamps < t0_ns * 1e-9 + seconds)
    print(f"{mode}: {inside.sum()} joint states during the {seconds:g} s reference "
          f"({drained} messages of the run before drained first)")
    assert inside.sum() > 300, f"only {inside.sum()} joint states during the reference"
    q_d = sampler.sample_many(stamps[inside])[0]
    rmse = float(np.sqrt(np.mean((q_d - q[inside]) ** 2)))
    assert processes.stop(ctl) == 0, processes.log(ctl)
    assert "published a zero torque command" in processes.log(ctl)
    processes.stop(sim)
    return rmse


def test_closed_loop_tracking_dob_and_ctc_beat_pd(processes, probe):
    rmse = {mode: _track(processes, probe, mode) for mode in ("pd", "pd_dob", "ctc_dob")}
    print("closed-loop tracking RMSE over DDS [rad]:", {k: f"{v:.5f}" for k, v in rmse.items()})
    late = [kv.value for d in probe.diagnostics for s in d.status for kv in s.values if kv.key == "late_tick_fraction"]
    print("late-tick fractions reported in /diagnostics:", late[-5:])
    # Offline (exact 1 kHz) the DOB modes track ~50x better than pd (test/sim/test_offline.py); in lockstep over
    # DDS the loop is the same, so ask for a clear factor of 5.
    assert rmse["pd_dob"] < 0.2 * rmse["pd"]
    assert rmse["ctc_dob"] < 0.2 * rmse["pd"]
    # diagnostics and torque parts were published while running
    keys = {kv.key for d in probe.diagnostics for s in d.status for kv in s.values}
    for key in ("period_p99_ms", "compute_p99_us", "latency_median_us", "late_tick_fraction", "watchdog",
                "watchdog_trips", "dob_estimate.joint2", "clamp_events.joint1"):
        assert key in keys
    assert probe.parts and len(probe.parts[-1].data) == 4 * 3
    assert [d.label for d in probe.parts[-1].layout.dim] == ["part", "joint"]


def test_watchdog_reports_hold_then_zero_when_joint_states_stop(processes, probe):
    sim = processes.start([executable("sim_arm")], "sim_arm")
    ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                           "-p", "watchdog_hold_time:=0.3"], "ffc")
    def watchdog_states() -> list[str]:
        return [kv.value for d in probe.diagnostics for s in d.status for kv in s.values if kv.key == "watchdog"]

    # running, as commands and as /diagnostics say (on an idle machine 50 commands come before the first status)
    assert wait_until(lambda: (probe.spin(0.05), len(probe.commands) > 50 and "running" in watchdog_states())[1],
                      90.0), processes.log(ctl)
    processes.stop(sim)
    n_stop = len(probe.commands)
    # wait for the event, not for a wall-clock window (the hold and the steady-clock timeout are the watchdog's own
    # wall-time semantics; how late its timer fires on a loaded machine is not this test's subject): the bound only
    # ends a hung test

    assert wait_until(lambda: (probe.spin(0.05), "watchdog: hold -> zero" in processes.log(ctl)
                               and bool(probe.commands) and probe.commands[-1] == [0.0, 0.0, 0.0]
                               and watchdog_states()[-1:] == ["zero"])[1], 60.0), processes.log(ctl)
    log = processes.log(ctl)
    assert log.index("watchdog: running -> hold") < log.index("watchdog: hold -> zero"), log
    states = watchdog_states()
    seen = [v for k, v in enumerate(states) if k == 0 or v != states[k - 1]]
    assert seen[-1] == "zero" and seen.index("running") < len(seen) - 1, seen  # running ... then zero, in order
    # every spell counted, the brief ones the 5 Hz status never showed too (a hold at start-up on a busy machine)
    trips = [kv.value for s in probe.diagnostics[-1].status for kv in s.values if kv.key == "watchdog_trips"]
    assert trips == [str(log.count("watchdog: running -> "))], (trips, log)
    # order of the commands after the simulator stopped: holding ones (gravity on the shoulder) first, then zeros
    # only
    after = probe.commands[max(n_stop - 600, 0):]
    first_zero = next(k for k, c in enumerate(after) if c == [0.0, 0.0, 0.0])
    assert any(abs(c[1]) > 0.5 for c in after[:first_zero]), after[:first_zero][-5:]
    assert all(c == [0.0, 0.0, 0.0] for c in after[first_zero:]), "a non-zero command after the watchdog zeroed"
    assert processes.stop(ctl) == 0
    probe.spin(0.3)
    assert probe.commands[-1] == [0.0, 0.0, 0.0], "no zero command after shutdown"


def test_joint_name_mismatch_refuses_to_start(processes, tmp_path):
    proc = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                            "-p", "command_joint_names:=[joint1,joint2,wrist]"], "ffc_cmd")
    assert proc.wait(30) == 2
    assert "missing ['joint3'], extra ['wrist']" in processes.log(proc)
    from deadzone_id_ros.models.mlp import MLPWeights, Standardizer
    from deadzone_id_ros.models.onnx_format import write_onnx
    from deadzone_id_ros.models.predictor import LearnedModel

    mlp = MLPWeights((np.zeros((4, 9), np.float32), np.zeros((3, 4), np.float32)),
                     (np.zeros(4, np.float32), np.zeros(3, np.float32)), "tanh",
                     Standardizer(np.zeros(9), np.ones(9)), Standardizer(np.zeros(3), np.ones(3)))
    onnx = write_onnx(LearnedModel(["joint1", "joint2", "elbow"], "masked", mlp=mlp), tmp_path / "m.onnx")
    proc = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                            "-p", "mode:=ctc", "-p", "model:=learned", "-p", f"model_path:={onnx}"], "ffc_model")
    assert proc.wait(30) == 2
    log = processes.log(proc)
    assert "missing from the model ['joint3'], not controlled ['elbow']; refusing to start" in log, log
    assert "Traceback" not in log


def test_dob_cutoff_above_nyquist_in_a_parameter_file_is_refused_naming_the_file_key_and_limit(processes, tmp_path):
    bad = tmp_path / "ffc_bad_dob.yaml"
    bad.write_text("/**:\n  ros__parameters:\n    control_rate: 100.0\n    dob_cutoff: [150.0, 400.0, 150.0]\n")
    proc = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                            "--params-file", str(bad)], "ffc_bad_dob")
    assert proc.wait(30) == 2
    log = processes.log(proc)
    assert (f"node /feedforward_controller parameters (parameter files {PARAMS}, {bad}): dob_cutoff[1] = 400.0 rad/s "
            "must be below 314.159 rad/s") in log, log
    assert "Traceback" not in log


def test_a_repeated_state_is_answered_again(processes, probe):
    """A simulator in lockstep repeats its state until a command arrives; the controller must answer each repeat
    (the first answer can be lost while DDS is still matching), or both would wait for each other forever."""
    state_pub = probe.publisher(JointState, "/joint_states")
    # use_sim_time with no /clock: simulated time stands still, as in lockstep, so no timer (watchdog) publishes
    ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                           "-p", "mode:=pd_dob", "-p", "use_sim_time:=true"], "ffc_repeat")
    msg = JointState(name=list(NAMES), position=[0.0, 0.3, 0.6], velocity=[0.0, 0.0, 0.0], effort=[0.0, 0.0, 0.0])
    msg.header.stamp.sec, msg.header.stamp.nanosec = 5, 0
    assert wait_until(lambda: (state_pub.publish(msg), probe.spin(0.1), len(probe.commands) > 0)[2], 90.0), \
        processes.log(ctl)
    probe.commands.clear()
    for _ in range(5):  # the very same stamp, five more times
        state_pub.publish(msg)
        probe.spin(0.1)
    assert len(probe.commands) >= 5, f"{len(probe.commands)} answers to 5 repeats of one state"
    assert all(c == probe.commands[0] for c in probe.commands)
    assert processes.stop(ctl) == 0


@pytest.mark.parametrize("parameter, waiting, late_entity", [
    ("wait_for_subscribers:=2", "waiting for 2 subscriber(s) of /effort_controller/commands (have 1)", "subscriber"),
    ("wait_for_reference_publishers:=2", "and 2 publisher(s) of ~/reference (have 1)", "publisher"),
])
def test_wait_for_the_graph_holds_the_first_command_until_every_endpoint_matched(processes, probe, parameter, waiting,
                                                                                 late_entity):
    """With ``wait_for_subscribers`` (a lockstep simulation: the simulator and the recorder) or
    ``wait_for_reference_publishers`` (the excitation) the controller answers no state, so simulated time stays put,
    until /effort_controller/commands has that many matched subscribers, or ~/reference that many publishers: a
    recorder that DDS matched late still gets the first command. The probe has one of each (its ``commands``
    listener, its ``ref_pub``) and creates the second late."""
    state_pub = probe.publisher(JointState, "/joint_states")
    # use_sim_time with no /clock: simulated time stands still, so no watchdog command is published either
    ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                           "-p", "mode:=pd_dob", "-p", "use_sim_time:=true", "-p", parameter], "ffc_wait_graph")
    msg = JointState(name=list(NAMES), position=[0.0, 0.3, 0.6], velocity=[0.0, 0.0, 0.0], effort=[0.0, 0.0, 0.0])
    msg.header.stamp.sec = 5
    k = 0

    def send() -> None:
        nonlocal k
        k += 1  # a new state each time (1 ms apart), each one answered at once without the wait
        msg.header.stamp.nanosec = k * 1_000_000
        state_pub.publish(msg)
        probe.spin(0.1)

    assert wait_until(lambda: (send(), waiting in processes.log(ctl))[1], 90.0), processes.log(ctl)
    for _ in range(5):
        send()
    assert probe.commands == [], f"{len(probe.commands)} command(s) before the second {late_entity} matched"
    if late_entity == "subscriber":
        probe.node.create_subscription(Float64MultiArray, "/effort_controller/commands", lambda _m: None, 100)
    else:
        probe.publisher(JointTrajectory, "/feedforward_controller/reference")
    assert wait_until(lambda: (send(), bool(probe.commands))[1], 90.0), processes.log(ctl)
    assert processes.stop(ctl) == 0


def test_reset_service_over_dds_clears_the_safe_state_and_commands_resume(processes, probe):
    """~/reset (std_srvs/Trigger) called by another process's client on a node latched in the safe state."""
    state_pub = probe.publisher(JointState, "/joint_states")
    # use_sim_time with no /clock: only the states' stamps move the controller's time (no ROS-clock watchdog);
    # ctc: at rest the command is the gravity torque of the rigid-body model, so "commands resume" is visible.
    ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                           "-p", "mode:=ctc", "-p", "use_sim_time:=true", "-p", "tracking_error_limit:=0.1",
                           "-p", "fault_hold_time:=0.05"], "ffc_reset")
    stamp_ns = [5_000_000_000]

    def publish(q=(0.0, 0.3, 0.6)) -> None:
        stamp_ns[0] += 1_000_000  # 1 ms per state
        msg = JointState(name=list(NAMES), position=list(q), velocity=[0.0] * 3, effort=[0.0] * 3)
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns[0], 1_000_000_000)
        state_pub.publish(msg)

    def running() -> bool:  # holding the gravity torque of joint2
        return bool(probe.commands) and abs(probe.commands[-1][1]) > 0.5

    assert wait_until(lambda: (publish(), probe.spin(0.02), running())[2], 90.0), processes.log(ctl)
    publish((0.0, 0.5, 0.6))  # 0.2 rad from the held position: the tracking error latches the safe state
    # hold the static torque for fault_hold_time (of stamps), then zero torque however long the states keep coming
    assert wait_until(lambda: (publish(), probe.spin(0.02), probe.commands[-1] == [0.0] * 3)[2], 90.0), \
        processes.log(ctl)
    for _ in range(20):
        publish()
        probe.spin(0.01)
    assert probe.commands[-1] == [0.0] * 3
    assert re.search(r"safe state at t = [0-9.]+ s: tracking error of joint2", processes.log(ctl)), processes.log(ctl)

    response = probe.call(Trigger, "/feedforward_controller/reset", timeout=20.0, attempts=2,
                          log=lambda: processes.log(ctl))
    assert response.success, response.message
    # a fault was latched, and is no more; the message names the last state before the reset
    assert re.match(r"fault cleared after the state of t = [0-9]+\.[0-9]{9} s;", response.message), response.message
    probe.commands.clear()
    assert wait_until(lambda: (publish(), probe.spin(0.02), running())[2], 90.0), \
        f"commands did not resume after ~/reset: {probe.commands[-3:]}\n{processes.log(ctl)}"
    assert processes.stop(ctl) == 0


def test_a_gripper_driver_on_joint_states_is_another_publisher_not_an_error(processes, probe):
    """Issue 22 item 5 (motoman PR 59): a gripper driver publishes /joint_states beside the arm driver. Its messages
    carry none of the controller's joints: ignored without an ERROR line, counted, and named by /diagnostics (so
    `deadzone-id status` says why the controller still waits). A message with some of the joints stays an error."""
    state_pub = probe.publisher(JointState, "/joint_states")
    ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                           "-p", "mode:=pd_dob"], "ffc_gripper")
    gripper = JointState(name=["gripper_left", "gripper_right"], position=[0.01, 0.01], velocity=[0.0, 0.0],
                         effort=[0.0, 0.0])

    def named() -> bool:
        return any("another publisher's joints ['gripper_left', 'gripper_right']" in s.message
                   for m in probe.diagnostics for s in m.status)

    assert wait_until(lambda: (state_pub.publish(gripper), probe.spin(0.1), named())[2], 90.0), processes.log(ctl)
    status = next(s for m in probe.diagnostics for s in m.status if "another publisher" in s.message)
    assert int({kv.key: kv.value for kv in status.values}["foreign_joint_states"]) > 0
    assert probe.commands == [], "a gripper's state was answered with an arm command"
    log = processes.log(ctl)
    assert "ERROR" not in log and "lacks" not in log, log
    assert log.count("from another publisher") == 1, log
    partial = JointState(name=["joint1", "gripper_left"], position=[0.0, 0.0], velocity=[0.0, 0.0])
    assert wait_until(lambda: (state_pub.publish(partial), probe.spin(0.1), "lacks joint(s)" in processes.log(ctl))[2],
                      30.0), processes.log(ctl)
    assert "ERROR" in processes.log(ctl)
    assert processes.stop(ctl) == 0
