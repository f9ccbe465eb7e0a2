"""The simulated arm's own links never collide (issue 36): primitive collision shapes that a URDF carries (the Unitree
Z1's) made links touch under a full-range excitation, putting contact forces into the loop and into the "true"
inverse dynamics."""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np

from deadzone_id_ros.robot_configs import bundled_sim_config
from deadzone_id_ros.sim import SimArm

_LINK = """  <link name="{name}">
    <inertial><origin xyz="0.1 0 0"/><mass value="1.0"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0"
      iyz="0"/></inertial>{collision}
  </link>"""
_BOX = """
    <collision><origin xyz="0.3 0 0"/><geometry><box size="0.2 0.2 0.2"/></geometry></collision>"""
_JOINT = """  <joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="50" velocity="3"/></joint>"""


def _folded_arm(tmp_path):
    """Three joints about one vertical axis; link1 and link3 (not parent and child) carry the same box, so at q = 0
    they overlap."""
    links = [_LINK.format(name="link1", collision=_BOX), _LINK.format(name="link2", collision=""),
             _LINK.format(name="link3", collision=_BOX)]
    joints = [_JOINT.format(name="joint1", parent="base_link", child="link1"),
              _JOINT.format(name="joint2", parent="link1", child="link2"),
              _JOINT.format(name="joint3", parent="link2", child="link3")]
    path = tmp_path / "folded.urdf"
    path.write_text('<robot name="folded">\n  <link name="base_link"/>\n' + "\n".join(links + joints) + "\n</robot>\n")
    return path


def test_overlapping_links_make_no_contact_and_no_constraint_torque(tmp_path):
    cfg = dataclasses.replace(bundled_sim_config(profile="ideal"), urdf_path=str(_folded_arm(tmp_path)),
                              joint_names=("joint1", "joint2", "joint3"), effort_limit=(50.0, 50.0, 50.0))
    arm = SimArm(cfg)
    data = mujoco.MjData(arm.model)
    mujoco.mj_forward(arm.model, data)
    assert arm.model.ngeom == 2  # the boxes are there ...
    assert data.ncon == 0  # ... and do not touch
    # no gravity torque about a vertical axis, no contact force: the true inverse dynamics at rest is zero
    np.testing.assert_allclose(arm.inverse_dynamics(np.zeros(3), np.zeros(3), np.zeros(3)), 0.0, atol=1e-9)
