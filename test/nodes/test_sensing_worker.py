"""The controller's force sensing in a process of its own (``sensing_worker``; nodes/sensing_worker.py), over DDS:
the same topics under the controller's name, an estimate for every state in a lockstep simulation and the push seen
within the target delay; the worker ends with the controller (stopped or killed), a worker that dies leaves the loop
controlling, and a sensor the worker cannot build stops the controller at start."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, executable, wait_for_progress
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from deadzone_id_ros.stamps import stamp_to_s

pytestmark = pytest.mark.integration

PARAMS = str(REPO / "config" / "feedforward_controller.yaml")
SIM_PARAMS = str(REPO / "config" / "sim_arm.yaml")
PUSH_START = 1.0  # [s of simulated time]
TARGET_DELAY = 0.020  # [s] the detection target for pushes of 1 N or more
WORKER = ["-p", "sensing:=true", "-p", "sensing_worker:=true", "-p", "sensing_velocity_threshold:=[0.02, 0.02, 0.02]",
          "-p", "sensing_threshold:=[0.1, 0.15, 0.1]", "-p", "sensing_frame:=link3",
          "-p", "sensing_point:=[0.0, 0.0, 0.22]", "-p", "diagnostics_rate:=20.0"]


def _diagnostics(probe) -> list[dict[str, tuple[int, str, dict[str, str]]]]:  # noqa: ANN001 - RosProbe
    """The /diagnostics entries heard: per message {name: (level, message, values)}."""
    return probe.listen("/diagnostics", DiagnosticArray, qos=100, keep=lambda m: {
        st.name: (int.from_bytes(st.level, "little") if isinstance(st.level, bytes) else int(st.level), st.message,
                  {kv.key: kv.value for kv in st.values}) for st in m.status})


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def test_worker_estimates_every_state_and_sees_the_push_within_the_target_delay(processes, ros_probe):
    probe = ros_probe
    stamps: list[float] = []
    states: list[tuple[float, np.ndarray]] = []
    probe.listen("/feedforward_controller/external_torque", JointState, qos=10000,
                 keep=lambda m: stamps.append(stamp_to_s(m.header.stamp)))
    probe.listen("/feedforward_controller/contact_state", JointState, qos=10000,
                 keep=lambda m: states.append((stamp_to_s(m.header.stamp), np.array(m.effort))))
    diags = _diagnostics(probe)
    ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                           "-p", "mode:=ctc_dob", "-p", "model_friction:=true", "-p", "use_sim_time:=true", *WORKER],
                          "ffc")
    heard = [sub for sub in probe.node.subscriptions if sub.topic_name.endswith(("external_torque", "contact_state"))]
    assert probe.spin(60.0, until=lambda: all(sub.get_publisher_count() > 0 for sub in heard)), processes.log(ctl)
    sim = processes.start([executable("sim_arm"), "--ros-args", "--params-file", SIM_PARAMS,
                           "-p", "clock_mode:=sim", "-p", "lockstep:=true", "-p", "push_link:=link3",
                           "-p", "push_point:=[0.0, 0.0, 0.22]", "-p", "push_direction:=[1.0, 0.0, 0.0]",
                           "-p", "push_local:=true", "-p", "push_magnitude:=3.0", "-p", f"push_start:={PUSH_START}",
                           "-p", "push_duration:=5.0", "-p", "wait_for_subscriber_nodes:=[feedforward_controller]"],
                          "sim")

    def log() -> str:
        return processes.log(ctl) + processes.log(sim)

    end = PUSH_START + 0.3
    wait_for_progress(lambda: (probe.spin(0.05), bool(states) and states[-1][0] > end)[1],
                      lambda: states[-1][0] if states else None, period=0.0, log=log)
    assert probe.spin(30.0, until=lambda: any("feedforward_controller: sensing worker" in d for d in diags)), log()
    # every state of the lockstep run was estimated, in order: the stamps step by the simulator's 1 ms
    t = np.asarray(stamps)
    assert t[0] < PUSH_START - 0.1 and np.allclose(np.diff(t), 1e-3, atol=1e-6), (t[:5], np.diff(t).max(), log())
    before = [s for s, excess in states if s < PUSH_START and np.any(excess > 0)]
    assert not before, f"contact before the push at {before[:5]}\n{log()}"
    onset = next((s for s, excess in states if s >= PUSH_START and np.any(excess > 0)), None)
    assert onset is not None and onset - PUSH_START <= TARGET_DELAY, (onset, log())
    level, message, values = next(d["feedforward_controller: sensing worker"] for d in reversed(diags)
                                  if "feedforward_controller: sensing worker" in d)
    assert level == 0 and values["samples sent / dropped (worker behind)"].endswith(" / 0"), (message, values)
    # the worker's own entry: the sensor's settings, as the controller would show them
    name = "feedforward_controller: sensing"
    sensing = next(d[name] for d in reversed(diags) if name in d)
    assert sensing[2]["contact threshold [N*m]"] == "[0.1, 0.15, 0.1]", sensing


def test_in_lockstep_the_worker_waits_for_the_recorder_before_its_first_estimate(processes, ros_probe):
    # the recorder of the forces (here the probe) subscribes late: with sensing_worker_wait_for_subscribers the
    # controller starts only once the worker's estimates have a subscriber, and the lockstep simulator holds time
    # until the controller hears it, so the first estimate heard is the first state's; without, those before the
    # subscriber are lost
    probe = ros_probe
    joint_states = probe.listen("/joint_states", JointState, qos=10000, keep=lambda m: stamp_to_s(m.header.stamp))
    ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                           "-p", "mode:=ctc_dob", "-p", "model_friction:=true", "-p", "use_sim_time:=true", *WORKER,
                           "-p", "sensing_worker_wait_for_subscribers:=1"], "ffc")
    sim = processes.start([executable("sim_arm"), "--ros-args", "--params-file", SIM_PARAMS,
                           "-p", "clock_mode:=sim", "-p", "lockstep:=true",
                           "-p", "wait_for_subscriber_nodes:=[feedforward_controller]"], "sim")

    def log() -> str:
        return processes.log(ctl) + processes.log(sim)

    # the worker is waiting for its subscriber (it says so): meanwhile simulated time has not started
    wait_for_progress(lambda: (probe.spin(0.05), "waiting for 1 subscriber(s) of ~/external_torque" in log())[1],
                      lambda: len(log()), log=log)
    probe.spin(1.0)
    assert not [s for s in joint_states if s > 0], (max(joint_states), log())
    stamps: list[float] = []
    probe.listen("/feedforward_controller/external_torque", JointState, qos=10000,
                 keep=lambda m: stamps.append(stamp_to_s(m.header.stamp)))
    wait_for_progress(lambda: (probe.spin(0.05), bool(stamps) and stamps[-1] > 0.5)[1],
                      lambda: stamps[-1] if stamps else None, log=log)
    t = np.asarray(stamps)
    # every state's estimate, from the first (the simulator's first step is 1 ms)
    assert t[0] <= 2e-3 and np.allclose(np.diff(t), 1e-3, atol=1e-6), (t[:5], np.diff(t).max(), log())


def test_a_dead_worker_leaves_the_loop_controlling_and_the_worker_ends_with_the_controller(processes, ros_probe):
    probe = ros_probe
    commands = probe.listen("/effort_controller/commands", Float64MultiArray, qos=1000)
    diags = _diagnostics(probe)
    pub = probe.publisher(JointState, "/joint_states", 100)
    msg = JointState(name=["joint1", "joint2", "joint3"], position=[0.0, 0.3, 0.6], velocity=[0.0] * 3,
                     effort=[0.0] * 3)

    def publish() -> None:  # a state every spin step (wall-clock stamps, as from hardware)
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(time.time_ns(), 1_000_000_000)
        pub.publish(msg)

    def worker_pid() -> int | None:
        entries = [d["feedforward_controller: sensing worker"] for d in diags
                   if "feedforward_controller: sensing worker" in d]
        return int(entries[-1][2]["pid"]) if entries else None

    def start(old: int | None = None):  # noqa: ANN202 - a Popen
        ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                               "-p", "mode:=ctc_dob", "-p", "watchdog_timeout:=1.0", *WORKER], "ffc")
        n = len(commands)
        # a new worker: an earlier controller's last diagnostics may still be on their way
        assert probe.spin(60.0, until=lambda: worker_pid() not in (None, old) and len(commands) > n + 10,
                          step=0.005, tick=publish), processes.log(ctl)
        return ctl

    ctl = start()
    pid = worker_pid()
    assert pid is not None and _alive(pid)
    os.kill(pid, signal.SIGKILL)
    diags.clear()
    assert probe.spin(30.0, until=lambda: any(d["feedforward_controller: sensing worker"][0] == 2 for d in diags
                                              if "feedforward_controller: sensing worker" in d),
                      step=0.005, tick=publish), (diags[-1:], processes.log(ctl))
    n = len(commands)
    assert probe.spin(30.0, until=lambda: len(commands) > n + 50, step=0.005, tick=publish), processes.log(ctl)
    assert ctl.poll() is None and "exited" in processes.log(ctl), processes.log(ctl)
    processes.stop(ctl)

    for stop in ("interrupted", "killed"):  # killed outright, the controller cannot close the pipe: EOF all the same
        ctl = start(old=pid)
        pid = worker_pid()
        assert pid is not None and _alive(pid)
        if stop == "killed":
            ctl.kill()
            ctl.wait(10)
        else:
            assert processes.stop(ctl) == 0, processes.log(ctl)
        deadline = time.monotonic() + 30
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(pid), f"the sensing worker {pid} outlived its {stop} controller"


@pytest.mark.parametrize("worker", ["true", "false"])
def test_a_sensor_that_cannot_be_built_stops_the_controller_at_start(processes, worker):
    bad = [a.replace(":=link3", ":=no_such_link") for a in WORKER]
    ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS, *bad,
                           "-p", f"sensing_worker:={worker}"], "ffc")
    assert ctl.wait(120) == 2, processes.log(ctl)  # a configuration error, named, without a traceback
    log = processes.log(ctl)
    assert "no frame 'no_such_link'" in log and "Traceback" not in log, log
    assert ("could not build the force sensor" in log) == (worker == "true"), log
