"""Joint kinds of real URDFs (issue 20 item 4): a continuous joint must not shift any later joint's position limits
(pinocchio's position-limit arrays are indexed in q, where a continuous joint takes two entries; indexing them in v
gave every later joint its predecessor's limits, as in ros2_controllers PR 2523), and a controlled joint with effort
limit 0 (CAD exports, dex-urdf issue 29) is refused at start-up instead of commanding 0 N·m forever."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.control import ControllerConfig, ExcitationConfig, generate_excitation
from deadzone_id_ros.control.safety import SafetyMonitor
from deadzone_id_ros.errors import RobotDescriptionError
from deadzone_id_ros.robot import load_robot_description

NAMES = ("wrist_yaw", "shoulder", "elbow", "wrist")
LIMITS = {"shoulder": (-0.5, 1.0), "elbow": (-2.0, 0.25), "wrist": (0.3, 1.7)}


def _link(name: str) -> str:
    return (f'<link name="{name}"><inertial><origin xyz="0 0 0.1"/><mass value="0.5"/>'
            f'<inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.001"/></inertial></link>')


def four_joint_urdf(tmp_path, first="continuous", effort="5"):
    """A 4-joint arm: ``first`` joint (continuous by default, no position limit) then three revolute joints with
    different limits, and a gripper finger that mimics the wrist."""
    joints = [f'<joint name="wrist_yaw" type="{first}"><parent link="base"/><child link="l0"/>'
              f'<axis xyz="0 0 1"/><limit effort="{effort}" velocity="3"'
              + (' lower="-1" upper="1"' if first == "revolute" else "") + "/></joint>"]
    parent = "l0"
    for i, name in enumerate(("shoulder", "elbow", "wrist"), start=1):
        lo, hi = LIMITS[name]
        joints.append(f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="l{i}"/>'
                      f'<origin xyz="0 0 0.2"/><axis xyz="0 1 0"/>'
                      f'<limit lower="{lo}" upper="{hi}" effort="5" velocity="3"/></joint>')
        parent = f"l{i}"
    joints.append('<joint name="finger" type="prismatic"><parent link="l3"/><child link="finger"/>'
                  '<axis xyz="1 0 0"/><limit lower="0" upper="0.02" effort="5" velocity="0.1"/>'
                  '<mimic joint="wrist" multiplier="0.01"/></joint>')
    links = "".join(_link(n) for n in ("base", "l0", "l1", "l2", "l3", "finger"))
    path = tmp_path / "four.urdf"
    path.write_text(f'<?xml version="1.0"?><robot name="four">{links}{"".join(joints)}</robot>')
    return path


def test_a_continuous_first_joint_keeps_every_later_joints_own_limits(tmp_path):
    desc = load_robot_description(four_joint_urdf(tmp_path), NAMES)
    assert desc.continuous.tolist() == [True, False, False, False]
    assert desc.lower[0] == -np.inf and desc.upper[0] == np.inf
    for j, name in enumerate(NAMES[1:], start=1):
        assert (desc.lower[j], desc.upper[j]) == LIMITS[name], name
        assert desc.limits(name).lower == LIMITS[name][0]
    # the safe state: legal positions of every joint pass, and the elbow beyond its own upper limit latches
    monitor = SafetyMonitor(NAMES, np.full(4, 0.5), desc.lower, desc.upper, 0.05, 0.5)
    legal = np.array([7.0, 0.9, -1.9, 1.6])  # the continuous joint at any angle
    assert not monitor.check(0.0, legal, np.zeros(4)), monitor.fault
    beyond = legal.copy()
    beyond[2] = 0.25 + 0.15
    assert monitor.check(0.001, beyond, np.zeros(4))
    assert "elbow" in monitor.fault, monitor.fault


def test_the_excitation_moves_every_joint_within_its_own_limits(tmp_path):
    urdf = four_joint_urdf(tmp_path)
    cfg = ExcitationConfig(joint_names=NAMES, urdf_path=str(urdf), duration=20.0, seed=3, center_from_start=True,
                           amplitude=(1.0,) * 4, acceleration_limit=(20.0,) * 4, center=(0.0,) * 4)
    start = [0.0, 0.25, -0.9, 1.0]
    pts = generate_excitation(cfg, start=start)
    for j, name in enumerate(NAMES):
        assert np.ptp(pts.position[:, j]) > 0.1, f"{name} does not move"
        if name in LIMITS:
            lo, hi = LIMITS[name]
            assert lo + cfg.position_margin - 1e-9 <= pts.position[:, j].min(), name
            assert pts.position[:, j].max() <= hi - cfg.position_margin + 1e-9, name
    assert np.all(np.abs(pts.position[:, 0] - start[0]) <= np.pi + 1e-9)  # one turn each way at most


def test_a_controlled_joint_with_effort_limit_zero_is_refused_at_start_up(tmp_path):
    from deadzone_id_ros.control import build_controller

    urdf = four_joint_urdf(tmp_path, first="revolute", effort="0")
    cfg = ControllerConfig(joint_names=NAMES, urdf_path=str(urdf), mode="pd_dob", model="none", kp=(400.0,) * 4,
                           kd=(40.0,) * 4, nominal_inertia=(0.01,) * 4, dob_cutoff=(100.0,) * 4,
                           torque_rate_limit=(500.0,) * 4)
    with pytest.raises(RobotDescriptionError, match=r"joint\(s\) \['wrist_yaw'\] have effort limit\(s\) \[0\.0\] "
                                                    r"N\*m.*<limit effort="):
        build_controller(cfg)
