"""bag_replay in lockstep as its own process, against a test node standing in for the simulator: each state is
answered once (zero torque before the first recorded command), a repeated state is answered again only when the
answer was evidently lost, and the recorded commands follow the state stamps."""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import executable
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

pytestmark = pytest.mark.integration

NAMES = ["joint1", "joint2", "joint3"]


def _bag(tmp_path):
    """A 0.3 s recording whose commands start 10 ms after its first state."""
    from deadzone_id_ros.data.bag import write_recording
    from deadzone_id_ros.data.types import Recording

    n = 300
    t = np.arange(n, dtype=np.int64) * 1_000_000
    cmd_t = t[10:]
    cmd = np.column_stack([np.arange(len(cmd_t)) * 1e-3 + 1.0, np.full(len(cmd_t), 2.0), np.full(len(cmd_t), 3.0)])
    rec = Recording(tuple(NAMES), t + 1_000_000_000, np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3)),
                    command_t_ns=cmd_t + 1_000_000_000, command=cmd)
    return write_recording(rec, tmp_path / "bag"), cmd


def _state(stamp_ns: int) -> JointState:
    msg = JointState(name=NAMES, position=[0.0] * 3, velocity=[0.0] * 3, effort=[0.0] * 3)
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    return msg


def test_lockstep_answers_each_state_once_and_a_lost_answer_again(processes, ros_probe, tmp_path):
    bag, cmd = _bag(tmp_path)
    answers = ros_probe.listen("/effort_controller/commands", Float64MultiArray, keep=lambda m: list(m.data))
    pub = ros_probe.publisher(JointState, "/joint_states")
    proc = processes.start([executable("bag_replay"), "--ros-args", "-p", f"bag:={bag}", "-p", "lockstep:=true"],
                           "bag_replay_lockstep")
    # the simulator's idle loop: its first state (stamp 5 s), repeated every 0.1 s until answered
    first = _state(5 * 10**9)
    assert ros_probe.spin(30.0, until=lambda: len(answers) > 0, step=0.02, tick=lambda: pub.publish(first)), \
        processes.log(proc)
    assert answers[0] == [0.0, 0.0, 0.0]  # before the first recorded command (10 ms in): zero torque
    # the same state repeated quickly: no second answer (it would step the simulator twice)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 0.3:
        pub.publish(_state(5 * 10**9))
        ros_probe.spin(0.05)
    assert len(answers) == 1, answers
    # still the same state after LOCKSTEP_REANSWER_S: the answer was lost, so it goes out again, once
    ros_probe.spin(0.4)
    pub.publish(_state(5 * 10**9))
    ros_probe.spin(3.0, until=lambda: len(answers) >= 2, step=0.02)
    assert len(answers) == 2 and answers[1] == answers[0], answers
    # newer states: each answered once with the command recorded at that time since the first state
    for k in (11, 12, 40):
        before = len(answers)
        pub.publish(_state(5 * 10**9 + k * 1_000_000))
        assert ros_probe.spin(10.0, until=lambda: len(answers) > before, step=0.02), processes.log(proc)  # noqa: B023
        np.testing.assert_allclose(answers[-1], cmd[k - 10])
    assert processes.stop(proc) == 0
