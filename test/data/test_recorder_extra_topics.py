"""The recorder's ``extra_topics`` (issue 38, recording a teleoperation): every entry validated with an error naming
the parameter, the entry and the reason; the extras recorded beside the main topics, a JointState extra with the
main state topic's stamp checks, each topic against its own previous stamp, and each arm read back alone."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.config import dataclass_from_dict
from deadzone_id_ros.data.bag import MessageEncoders, open_bag, read_recording
from deadzone_id_ros.data.recorder import EpisodeWriter, RecorderConfig, extra_topic_reason
from deadzone_id_ros.errors import ConfigError

T0 = 1_700_000_000_000_000_000
JS = "sensor_msgs/msg/JointState"
F64 = "std_msgs/msg/Float64MultiArray"


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["/leader/joint_states"], r"extra_topics\[0\] = '/leader/joint_states': must have the form 'TOPIC:TYPE'"),
        ([f"/a:{JS}", "bad topic:" + JS], r"extra_topics\[1\] = 'bad topic:.*': topic 'bad topic' is not a valid"),
        (["/a:sensor_msgs/msg/NoSuchState"], r"extra_topics\[0\] = .*message type 'sensor_msgs/msg/NoSuchState' is "
                                             "not one the bag typestore knows$"),
        (["/a:sensor_msgs/JointState"], r"extra_topics\[0\] = .*not one the bag typestore knows \(the full name is "
                                        "'sensor_msgs/msg/JointState'\\?\\)"),
        ([f"/joint_states:{JS}"], r"extra_topics\[0\] = '/joint_states:.*': topic '/joint_states' is recorded "
                                  "already"),
        ([f"/a:{JS}", f"/a:{F64}"], r"extra_topics\[1\] = '/a:std_msgs.*': topic '/a' is recorded already"),
        ([3], r"extra_topics\[0\] = 3: must be a string 'TOPIC:TYPE', got int"),
        ([f"/a//b:{JS}"], r"extra_topics\[0\] = '/a//b:.*': topic '/a//b' is not a valid topic name \(no empty part"),
        ([f"/a/:{JS}"], r"extra_topics\[0\] = '/a/:.*': topic '/a/' is not a valid topic name"),
        ("/a:" + JS, r"extra_topics = '/a:.*' must be a list of 'TOPIC:TYPE'"),
    ],
)
def test_extra_topics_validation_names_the_entry_and_the_reason(extra, match):
    with pytest.raises(ValueError, match=r"RecorderConfig\." + match):
        RecorderConfig(extra_topics=extra)


@pytest.mark.parametrize("field", ["joint_state_topic", "wrench_topic", "band_topic"])
def test_a_main_topic_with_an_empty_part_is_refused_like_an_extra_one(field):
    with pytest.raises(ValueError, match=rf"RecorderConfig\.{field} = '/a//b' is not a valid topic name"):
        RecorderConfig(**{field: "/a//b"})


def test_extra_topics_from_a_parameter_file_become_a_tuple_and_follow_the_main_topics():
    cfg = dataclass_from_dict(RecorderConfig, {"extra_topics": [f"/leader/joint_states:{JS}", f"~/x:{F64}"],
                                               "contact_topic": ""}, "test")
    assert cfg.extra_topics == (f"/leader/joint_states:{JS}", f"~/x:{F64}")
    assert list(cfg.topics())[-2:] == ["/leader/joint_states", "~/x"]
    assert cfg.topics()["/leader/joint_states"] == JS and cfg.topics()["~/x"] == F64
    assert "/feedforward_controller/contact" not in cfg.topics()
    assert extra_topic_reason(f"/a/b:{JS}") is None
    with pytest.raises(ConfigError, match=r"extra_topics\[0\] = '/x:nope/msg/Y'"):
        dataclass_from_dict(RecorderConfig, {"extra_topics": ["/x:nope/msg/Y"]}, "test")


def test_two_arms_recorded_with_per_topic_stamp_checks_and_read_back_each(tmp_path):
    """Both arms' states share every stamp (lockstep): each topic is checked against its own previous stamp, so both
    are written in full; a zero stamp and a repeated stamp on the extra arm are dropped and counted under its name."""
    cfg = RecorderConfig(output_dir=str(tmp_path), joint_state_topic="/follower/joint_states",
                         command_topic="/follower/effort_controller/commands", reference_topic="",
                         external_torque_topic="", contact_topic="", wrench_topic="", band_topic="",
                         extra_topics=(f"/leader/joint_states:{JS}", f"/leader/effort_controller/commands:{F64}",
                                       f"/teleop_bilateral/force_channel:{JS}"))
    w = EpisodeWriter(cfg)
    follower, leader = MessageEncoders(["j1", "j2"]), MessageEncoders(["a", "b", "c"])
    path = w.start(T0)
    w.set_joint_names(["j1", "j2"])
    n = 40
    for k in range(n):
        t = T0 + k * 1_000_000
        stamp = 0 if k == 0 else t  # lockstep's first state, before any command: stamped 0
        w.write("/follower/joint_states", t, follower.joint_state(stamp, [k, -k], [1.0, 1.0], [0.1, 0.2]))
        w.write("/leader/joint_states", t, leader.joint_state(stamp, [k, 2 * k, 3 * k], [0.0] * 3, [0.0] * 3))
        if k == 10:  # the leader's state repeated with its stamp
            w.write("/leader/joint_states", t, leader.joint_state(stamp, [k, 2 * k, 3 * k], [0.0] * 3, [0.0] * 3))
        w.write("/follower/effort_controller/commands", t, follower.command([0.5, -0.5]))
        w.write("/leader/effort_controller/commands", t, leader.command([1.0, 2.0, 3.0]))
        w.write("/teleop_bilateral/force_channel", t, follower.joint_state(stamp, [0.0, 0.0], [0.0, 0.0], [k, k]))
    _, counts = w.stop(T0 + n * 1_000_000)
    assert counts == {"/follower/joint_states": n - 1, "/follower/effort_controller/commands": n,
                      "/leader/joint_states": n - 1, "/leader/effort_controller/commands": n,
                      "/teleop_bilateral/force_channel": n - 1}, (counts, w.skipped)
    assert w.skipped == {"/follower/joint_states: zero header stamp": 1, "/leader/joint_states: zero header stamp": 1,
                         "/leader/joint_states: header stamp not after the previous one": 1,
                         "/teleop_bilateral/force_channel: zero header stamp": 1}
    lead = read_recording(path, joint_state_topic="/leader/joint_states",
                          command_topic="/leader/effort_controller/commands", reference_topic="/leader/reference")
    foll = read_recording(path, joint_state_topic="/follower/joint_states",
                          command_topic="/follower/effort_controller/commands", reference_topic="/follower/reference")
    assert lead.joint_names == ("a", "b", "c") and foll.joint_names == ("j1", "j2")
    assert np.all(np.diff(lead.state_t_ns) > 0) and len(lead.state_t_ns) == n - 1
    assert np.array_equal(lead.state_t_ns, foll.state_t_ns)
    assert np.allclose(lead.position[:, 2], 3 * np.arange(1, n))
    assert lead.command is not None and np.allclose(lead.command, [1.0, 2.0, 3.0])
    with open_bag(path) as handle:
        assert {c.topic: c.msgtype for c in handle.reader.connections}["/teleop_bilateral/force_channel"] == JS
