"""The recorder node's ``extra_topics`` (issue 38): a type is subscribed by its rclpy class or refused naming the
parameter; a recorder given an entry it cannot record exits with status 2 naming the entry; two recorded topics that
resolve to one name are refused."""

from __future__ import annotations

import pytest
from conftest import executable

from deadzone_id_ros.errors import ConfigError


def test_ros_message_class_imports_a_type_or_names_the_parameter():
    from std_msgs.msg import String

    from deadzone_id_ros.nodes.recorder import ros_message_class

    assert ros_message_class("std_msgs/msg/String", "here") is String
    with pytest.raises(ConfigError, match=r"^here: message type 'nope_msgs/msg/X' cannot be subscribed to: the "
                                          r"Python module nope_msgs.msg"):
        ros_message_class("nope_msgs/msg/X", "here")


@pytest.mark.integration
def test_recorder_refuses_an_extra_topic_it_cannot_record(processes, tmp_path):
    proc = processes.start([executable("recorder"), "--ros-args", "-p", f"output_dir:={tmp_path / 'rec'}",
                            "-p", "extra_topics:=['/leader/joint_states:sensor_msgs/JointState']"], "recorder")
    assert proc.wait(120) == 2, processes.log(proc)
    text = processes.log(proc)
    assert "extra_topics[0] = '/leader/joint_states:sensor_msgs/JointState'" in text, text
    assert "(the full name is 'sensor_msgs/msg/JointState'?)" in text and "Traceback" not in text, text
    assert not (tmp_path / "rec").exists(), "a refused recorder created its output directory"


def test_two_recorded_topics_resolving_to_one_name_are_refused(tmp_path):
    import rclpy
    from rclpy.parameter import Parameter

    from deadzone_id_ros.nodes.recorder import RecorderNode

    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    try:
        with pytest.raises(ConfigError, match=r"two recorded topics resolve to the same name: .*'/joint_states'.*"
                                              r"'joint_states'"):
            RecorderNode(context=ctx, parameter_overrides=[
                Parameter("output_dir", value=str(tmp_path / "rec")),
                Parameter("extra_topics", value=["joint_states:sensor_msgs/msg/JointState"])])
    finally:
        rclpy.shutdown(context=ctx)
