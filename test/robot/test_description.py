"""The robot description: URDF joints and limits, and the configs that must agree with it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
import yaml
from conftest import REPO

from deadzone_id_ros.errors import RobotDescriptionError
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot import load_robot_description

URDF = REPO / "urdf" / "three_dof_arm.urdf"


def test_limits_are_read_by_name_in_the_order_asked():
    d = load_robot_description(URDF, ["joint3", "joint1"])
    assert d.joint_names == ("joint3", "joint1")
    np.testing.assert_array_equal(d.effort_limit, [5.0, 4.0])
    np.testing.assert_array_equal(d.friction, [0.15, 0.12])
    assert d.limits("joint1").upper == 2.6


def test_missing_joint_is_named(tmp_path):
    with pytest.raises(RobotDescriptionError, match=r"\['wrist'\] not in the URDF"):
        load_robot_description(URDF, ["joint1", "wrist"])
    with pytest.raises(RobotDescriptionError, match="no joint named 'x'"):
        load_robot_description(URDF).limits("x")


def test_unparseable_urdf_is_refused(tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'></robot>")
    with pytest.raises(RobotDescriptionError, match="bad.urdf"):
        load_robot_description(bad)


def test_ros2_control_block_declares_effort_command_and_three_state_interfaces():
    root = ET.parse(default_urdf()).getroot()
    block = root.find("ros2_control")
    assert block is not None
    joints = block.findall("joint")
    assert [j.get("name") for j in joints] == list(load_robot_description(URDF).joint_names)
    limits = load_robot_description(URDF).effort_limit
    for j, limit in zip(joints, limits):
        assert [c.get("name") for c in j.findall("command_interface")] == ["effort"]
        assert sorted(s.get("name") for s in j.findall("state_interface")) == ["effort", "position", "velocity"]
        params = {p.get("name"): float(p.text) for p in j.find("command_interface").findall("param")}
        assert params == {"min": -limit, "max": limit}


def test_controller_configs_agree_with_the_urdf_joint_order():
    urdf_joints = list(load_robot_description(URDF).joint_names)
    controllers = yaml.safe_load((REPO / "config" / "ros2_controllers.yaml").read_text())
    effort = controllers["effort_controller"]["ros__parameters"]
    assert effort["joints"] == urdf_joints and effort["interface_name"] == "effort"
    # the parameter files name no joints: the bundled arm's profile gives the command order and the simulated joints
    from deadzone_id_ros.control.feedforward_controller_params import load_controller_config
    from deadzone_id_ros.sim.sim_arm_params import load_sim_config

    assert list(load_controller_config(REPO / "config" / "feedforward_controller.yaml")[1].command_joint_names) \
        == effort["joints"]
    assert list(load_sim_config(REPO / "config" / "sim_arm.yaml")[0].joint_names) == urdf_joints
