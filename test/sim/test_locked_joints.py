"""The simulator builds the same robot as pinocchio's reduced model (issue 40 item 1): every URDF joint that is not
controlled is welded where the profile locks it. Before, MuJoCo left them free: the SO-101's "locked" gripper swung to
its limit, a locked planar base of massless links was refused (mjMINVAL) and, with masses, turned while the arm moved.
"""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import pytest
from conftest import needs_erd

from deadzone_id_ros.errors import RobotDescriptionError
from deadzone_id_ros.robot.derived import derive_robot
from deadzone_id_ros.robot.profile import load_profile
from deadzone_id_ros.robot.reduced import build_reduced_model
from deadzone_id_ros.robot.urdf_text import read_urdf
from deadzone_id_ros.robot_configs import load_robot, sim_config
from deadzone_id_ros.sim import SimArm, SimArmConfig

SIM_SECONDS = 1.0


def _quiet_arm(config: SimArmConfig) -> SimArm:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the profiles' friction overrides the URDF's: a FrictionSourceWarning each
        return SimArm(config)


def _locked_pose_error(arm: SimArm, robot, locked: dict[str, float]) -> float:
    """Largest difference between the simulator and pinocchio's reduced model (locked at ``locked``) at the
    simulator's current joint positions, over every controlled joint's moving body: its frame (position [m] and
    rotation matrix), its mass [kg] and its centre of mass [m]. A locked link that is welded elsewhere (or free) moves
    the mass or the centre of mass of the body it belongs to."""
    import pinocchio as pin

    reduced = build_reduced_model(read_urdf(robot.urdf_path), robot.joint_names, locked=locked)
    model, data = reduced.model, reduced.model.createData()
    mujoco.mj_kinematics(arm.model, arm.data)  # poses of the state after the last step (mj_step leaves the former)
    pin.forwardKinematics(model, data, reduced.configuration(arm.q)[0])
    worst = 0.0
    for joint in robot.joint_names:
        jid = model.getJointId(joint)
        body = arm.model.jnt_bodyid[arm.model.joint(joint).id]
        frame, inertia = data.oMi[jid], model.inertias[jid]
        com = frame.act(inertia.lever)
        worst = max(worst, float(np.abs(arm.data.xpos[body] - frame.translation).max()),
                    float(np.abs(arm.data.xmat[body].reshape(3, 3) - frame.rotation).max()),
                    abs(float(arm.model.body_mass[body]) - float(inertia.mass)),
                    float(np.abs(arm.data.xipos[body] - com).max()))
    return worst


@needs_erd
@pytest.mark.parametrize("name", ["so101", "panda"])
def test_the_shipped_profiles_locked_joints_stay_where_the_profile_puts_them(name):
    robot = load_robot(name)
    assert robot.profile.locked, f"{name} locks no joint"
    arm = _quiet_arm(sim_config(robot))
    # one simulated second with the arm falling under gravity (no torque): the locked links swing if they are free
    tau = np.zeros(arm.n_joints)
    arm.step(tau, int(round(SIM_SECONDS / arm.dt)))
    assert np.abs(arm.q - robot.home).max() > 0.01, "the arm did not move: the test would not see a free joint"
    assert _locked_pose_error(arm, robot, dict(robot.profile.locked)) < 1e-9


@needs_erd
@pytest.mark.parametrize("name, locked", [("so101", {"gripper": 0.7}),
                                          ("panda", {"panda_finger_joint1": 0.03, "panda_finger_joint2": 0.01})])
def test_the_simulators_inverse_dynamics_is_the_reduced_models_at_the_locked_values(name, locked):
    """Locked away from zero (a hinge turned, prismatic fingers opened): MuJoCo's rigid body equals pinocchio's."""
    import pinocchio as pin

    robot = load_robot(name)
    cfg = sim_config(robot, locked_joints=tuple(f"{k}={v}" for k, v in locked.items()))
    arm = _quiet_arm(cfg)
    n = arm.n_joints
    q, dq, ddq = robot.home + 0.1, np.linspace(0.1, 0.5, n), np.linspace(-1.0, 1.0, n)
    tau_mj = arm.inverse_dynamics(q, dq, ddq) - np.asarray(cfg.armature) * ddq
    reduced = build_reduced_model(read_urdf(robot.urdf_path), robot.joint_names, locked=locked)
    v, a = np.zeros(reduced.model.nv), np.zeros(reduced.model.nv)
    v[reduced.idx_v], a[reduced.idx_v] = dq, ddq
    tau_pin = pin.rnea(reduced.model, reduced.model.createData(), reduced.configuration(q)[0], v, a)[reduced.idx_v]
    np.testing.assert_allclose(tau_mj, tau_pin, rtol=0, atol=1e-9)
    assert _locked_pose_error(arm, robot, locked) < 1e-9


def _inertial(mass: float) -> str:
    if mass == 0:
        return ""
    return (f'<inertial><origin xyz="0.05 0.02 0.05"/><mass value="{mass}"/>'
            f'<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>')


def mobile_base_profile(tmp_path, base_mass: float):
    """A planar mobile base (x, y slides and a yaw hinge, the usual URDF of a mobile manipulator) under a 2-joint
    arm; the profile locks the base at (0.5 m, -0.2 m, 0.3 rad). ``base_mass`` 0: the base's links carry no
    inertial (the form that MuJoCo refused)."""
    arm_link = ('<inertial><origin xyz="0 0 0.15"/><mass value="1.0"/>'
                '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.002"/></inertial>')
    urdf = f"""<?xml version="1.0"?>
<robot name="mobile">
  <link name="odom"/>
  <link name="base_x_link">{_inertial(base_mass)}</link>
  <link name="base_y_link">{_inertial(base_mass)}</link>
  <link name="base_link">{_inertial(base_mass)}</link>
  <link name="upper">{arm_link}</link>
  <link name="fore">{arm_link}</link>
  <joint name="base_x" type="prismatic"><parent link="odom"/><child link="base_x_link"/><axis xyz="1 0 0"/>
    <limit lower="-10" upper="10" effort="100" velocity="1"/></joint>
  <joint name="base_y" type="prismatic"><parent link="base_x_link"/><child link="base_y_link"/><axis xyz="0 1 0"/>
    <limit lower="-10" upper="10" effort="100" velocity="1"/></joint>
  <joint name="base_theta" type="continuous"><parent link="base_y_link"/><child link="base_link"/>
    <axis xyz="0 0 1"/><limit effort="100" velocity="1"/></joint>
  <joint name="shoulder" type="revolute"><parent link="base_link"/><child link="upper"/><origin xyz="0.1 0 0.3"/>
    <axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="20" velocity="3"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/><origin xyz="0 0 0.3"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="20" velocity="3"/></joint>
</robot>
"""
    (tmp_path / "mobile.urdf").write_text(urdf)
    profile = tmp_path / "mobile.yaml"
    profile.write_text("name: mobile\nurdf: mobile.urdf\njoints: [shoulder, elbow]\n"
                       "locked: {base_x: 0.5, base_y: -0.2, base_theta: 0.3}\n")
    return derive_robot(load_profile(profile))


@pytest.mark.parametrize("base_mass", [0.0, 5.0])
def test_a_locked_planar_base_builds_and_stays_put_while_the_arm_moves(tmp_path, base_mass):
    robot = mobile_base_profile(tmp_path, base_mass)
    arm = _quiet_arm(sim_config(robot))
    # the arm swings hard: its reaction torque turned a free base
    arm.step(np.array([15.0, 10.0]), int(round(0.5 / arm.dt)))
    assert np.abs(arm.q).max() > 0.5, "the arm did not move"
    shoulder = arm.data.xpos[arm.model.jnt_bodyid[arm.model.joint("shoulder").id]]
    turn = np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]])
    np.testing.assert_allclose(shoulder, [*(np.array([0.5, -0.2]) + turn @ [0.1, 0.0]), 0.3], rtol=0, atol=1e-12)
    assert _locked_pose_error(arm, robot, dict(robot.profile.locked)) < 1e-9


def test_a_locked_joint_the_urdf_lacks_is_refused_naming_it(tmp_path):
    robot = mobile_base_profile(tmp_path, 5.0)
    with pytest.raises(RobotDescriptionError, match=r"cannot lock joint\(s\) \['base_z'\]"):
        _quiet_arm(sim_config(robot, locked_joints=("base_z=0.1",)))


def test_the_locked_joints_travel_with_the_configs_dict_form(tmp_path):
    """episode.yaml stores the SimArmConfig as a dict: a replay rebuilds the same locked robot from it."""
    import dataclasses

    from deadzone_id_ros.sim.config import sim_config_from_metadata

    robot = mobile_base_profile(tmp_path, 5.0)
    cfg = sim_config(robot)
    assert cfg.locked_positions == {"base_x": 0.5, "base_y": -0.2, "base_theta": 0.3}
    stored = {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(cfg).items()}
    again = sim_config_from_metadata(stored, "episode.yaml")
    assert again.locked_positions == cfg.locked_positions
    assert mujoco.mj_name2id(_quiet_arm(again).model, mujoco.mjtObj.mjOBJ_JOINT, "base_theta") == -1


@needs_erd
@pytest.mark.parametrize("name", ["so101", "panda"])
def test_every_simulator_entry_point_carries_the_profiles_locked_joints(name):
    """simulate / demo (simulation_configs), closed-loop and improve (their default configs), the sim_arm node and
    replay of a parameter file (load_sim_config with the robot parameter) all build the profile's locked robot."""
    from deadzone_id_ros.experiments.closed_loop.run import _default_configs
    from deadzone_id_ros.robot_configs import simulation_configs
    from deadzone_id_ros.sim.sim_arm_params import load_sim_config

    want = dict(load_robot(name).profile.locked)
    assert want
    assert simulation_configs(name)["sim_config"].locked_positions == want
    assert _default_configs(name)[0].locked_positions == want
    assert load_sim_config(None, robot=name)[0].locked_positions == want


def test_a_controlled_joint_moving_a_link_without_inertial_is_refused_at_profile_load_naming_it(tmp_path):
    """The massless base links are welded when locked (above); controlled, the first stage refuses them, naming the
    link, where MuJoCo would refuse the model later (mjMINVAL) and pinocchio had no inertia of its own there."""
    mobile_base_profile(tmp_path, 0.0)
    profile = tmp_path / "driven.yaml"
    profile.write_text("name: driven\nurdf: mobile.urdf\njoints: [base_x, shoulder, elbow]\n"
                       "locked: {base_y: 0.0, base_theta: 0.0}\n")
    with pytest.raises(RobotDescriptionError, match=r"joint 'base_x' moves link\(s\) \['base_x_link', "
                                                    r"'base_y_link', 'base_link'\] with mass 0 kg.*<inertial>"):
        derive_robot(load_profile(profile))
