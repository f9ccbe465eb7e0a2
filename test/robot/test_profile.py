"""Robot profiles: loading (unknown keys and unsourced numbers refused), the values derived from the URDF against
closed forms, the shipped profiles, and ``deadzone-id robot show / ros2-control``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.errors import ConfigError, RobotDescriptionError
from deadzone_id_ros.robot import derive_robot, load_profile, resolve_profile
from deadzone_id_ros.robot.derived import DOB_CAP_FRACTION
from deadzone_id_ros.robot.profile import profile_from_dict

# Two point masses on massless links about parallel z axes: m1 at l1 from joint a, m2 at l2 from joint b (which sits
# at l1). Joint-space inertia of joint a with b at angle t: m1 l1^2 + m2 (l1^2 + l2^2 + 2 l1 l2 cos t).
M1, L1, M2, L2 = 2.0, 0.4, 1.5, 0.3


def _urdf(effort_b: float = 5.0) -> str:
    tiny = 'ixx="1e-9" iyy="1e-9" izz="1e-9" ixy="0" ixz="0" iyz="0"'
    return f"""<robot name="planar">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="{L1} 0 0"/><mass value="{M1}"/><inertia {tiny}/></inertial></link>
  <link name="l2"><inertial><origin xyz="{L2} 0 0"/><mass value="{M2}"/><inertia {tiny}/></inertial></link>
  <joint name="a" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="8" velocity="3"/><dynamics damping="0.1" friction="0.2"/></joint>
  <joint name="b" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="{L1} 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="{effort_b}" velocity="3"/></joint>
</robot>"""


def _profile(tmp_path, urdf: str | None = None, **values):
    (tmp_path / "planar.urdf").write_text(urdf or _urdf())
    doc = {"name": "planar", "urdf": "planar.urdf", "joints": ["a"], "locked": {"b": 0.7}, "home": [0.1], **values}
    path = tmp_path / "planar.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_nominal_inertia_is_the_mass_matrix_diagonal_at_home_with_locked_joints(tmp_path):
    armature = {"value": 0.01, "source": "test figure"}
    robot = derive_robot(load_profile(_profile(tmp_path, settings={"a": {"armature": armature}})))
    expected = M1 * L1**2 + M2 * (L1**2 + L2**2 + 2 * L1 * L2 * math.cos(0.7))
    np.testing.assert_allclose(robot.mass_diagonal, [expected], rtol=1e-6)
    np.testing.assert_allclose(robot.nominal_inertia, [expected + 0.01], rtol=1e-6)
    assert robot.origin["nominal_inertia"] == ("derived",) and robot.origin["armature"] == ("profile",)
    np.testing.assert_array_equal(robot.frictionloss, [0.2])  # from the URDF
    assert robot.origin["frictionloss"] == ("urdf",)


def test_gains_follow_the_stated_bandwidth_and_the_dob_cutoff_stays_below_nyquist(tmp_path):
    robot = derive_robot(load_profile(_profile(tmp_path, bandwidth=30.0, damping_ratio=0.8, torque_rise_time=0.02)))
    np.testing.assert_allclose(robot.kp, [900.0])
    np.testing.assert_allclose(robot.kd, [2 * 0.8 * 30.0])
    np.testing.assert_allclose(robot.dob_cutoff, [7.5 * 30.0])
    np.testing.assert_allclose(robot.torque_rate_limit, [8.0 / 0.02])
    # 20 Hz, no actuation delay: T_d = T / 2, and the 45 deg phase-margin bound (pi/4) / T_d meets the Nyquist cap
    slow = derive_robot(load_profile(_profile(tmp_path, bandwidth=30.0, control_rate=20.0, actuation_delay=0.0)))
    np.testing.assert_allclose(slow.dob_cutoff, [DOB_CAP_FRACTION * math.pi * 20.0])  # 225 capped to 31.4 rad/s
    np.testing.assert_allclose(slow.bandwidth, [math.pi / 4 / 0.025 / 2])  # kd = 2 w within the bound: w <= 15.7


def _planar_mass(t: np.ndarray, armature: float) -> np.ndarray:
    """(N, 2, 2) joint-space inertia of the planar arm with joint b at angle t (closed form) plus armature."""
    c = np.cos(t)
    m = np.empty((len(t), 2, 2))
    m[:, 0, 0] = M1 * L1**2 + M2 * (L1**2 + L2**2 + 2 * L1 * L2 * c)
    m[:, 0, 1] = m[:, 1, 0] = M2 * (L2**2 + L1 * L2 * c)
    m[:, 1, 1] = M2 * L2**2
    return m + armature * np.eye(2)


def test_dob_cutoff_keeps_its_phase_margin_on_the_lightest_sampled_arm(tmp_path):
    """Issue 36: g = (pi/2 - 45 deg) / T_d / kappa, kappa the largest eigenvalue of diag(Jn) M(q)^-1 over the sampled
    poses, checked against the closed-form inertia of the planar arm; a ratio-based 7.5 w would be far above it."""
    armature = {"value": 0.002, "source": "test figure"}
    path = _profile(tmp_path, joints=["a", "b"], locked={}, home=[0.0, 0.0],
                    settings={"a": {"armature": armature}, "b": {"armature": armature}})
    robot = derive_robot(load_profile(path))
    jn = np.diagonal(_planar_mass(np.array([0.0]), 0.002)[0])
    np.testing.assert_allclose(robot.nominal_inertia, jn, rtol=1e-6)
    grid = _planar_mass(np.linspace(-2.0, 2.0, 4001), 0.002)  # every pose of joint b (a does not change M)
    worst = np.linalg.eigvals(jn[None, :, None] * np.linalg.inv(grid)).real.max()
    at_home = np.linalg.eigvals(jn[:, None] * np.linalg.inv(grid[2000])).real.max()
    assert at_home * (1 - 1e-6) <= robot.inertia_gain <= worst * (1 + 1e-6)  # link inertias of 1e-9 kg*m^2 aside
    w_max = (math.pi / 2 - math.pi / 4) / (0.001 + 0.0005)  # 1 kHz: one period of actuation delay + half a period
    np.testing.assert_allclose(robot.loop_crossover_limit, w_max)
    np.testing.assert_allclose(robot.dob_cutoff, [w_max / robot.inertia_gain] * 2)
    assert robot.dob_cutoff[0] < 7.5 * 20.0 and "w_max / kappa" in robot.reasons["dob_cutoff"]


def test_a_joint_without_rotor_inertia_gets_the_documented_default(tmp_path):
    robot = derive_robot(load_profile(_profile(tmp_path, joints=["a", "b"], locked={}, home=[0.0, 0.0])))
    grid = _planar_mass(np.linspace(-2.0, 2.0, 4001), 0.0)
    largest = np.diagonal(grid, axis1=1, axis2=2).max(axis=0)
    assert robot.origin["armature"] == ("derived", "derived") and "rule" in robot.reasons["armature"]
    # max(effort / 1000 rad/s^2, 0.1 x the largest M_jj over the sampled poses); here the link inertia wins: joint b's
    # is constant, joint a's at most the closed-form peak
    np.testing.assert_allclose(robot.armature[1], 0.1 * largest[1], rtol=1e-6)
    assert 0.09 * largest[0] < robot.armature[0] <= 0.1 * largest[0] * (1 + 1e-6)
    assert np.all(robot.armature >= np.array([8.0, 5.0]) / 1000.0)  # never below effort limit / 1000 rad/s^2


def test_overrides_beat_derived_values(tmp_path):
    robot = derive_robot(load_profile(_profile(tmp_path, overrides={"kp": [123.0], "nominal_inertia": [0.5]})))
    assert robot.values("kp") == (123.0,) and robot.values("nominal_inertia") == (0.5,)
    assert robot.origin["kp"] == ("override",)


def test_effort_limit_zero_is_refused(tmp_path):
    path = _profile(tmp_path, urdf=_urdf(effort_b=0.0), joints=["a", "b"], locked={}, home=[0.0, 0.0])
    with pytest.raises(RobotDescriptionError, match=r"\['b'\].*positive effort limit"):
        derive_robot(load_profile(path))


@pytest.mark.parametrize(("values", "match"), [
    ({"urdf": "x.urdf", "joints": ["a"], "colour": 1}, r"unknown key\(s\) \['colour'\]"),
    ({"urdf": "x.urdf", "joints": ["a"], "settings": {"a": {"frictionloss": {"value": 0.1, "source": " "}}}},
     "needs a source"),
    ({"urdf": "x.urdf", "joints": ["a"], "settings": {"a": {"frictionloss": 0.1}}}, "value: NUMBER, source"),
    ({"urdf": "x.urdf", "joints": ["a"], "settings": {"z": {}}}, "settings.z: not a controlled joint"),
    ({"urdf": "x.urdf", "joints": ["a"], "overrides": {"kp": [1.0, 2.0]}}, "overrides.kp has 2 values"),
    ({"urdf": "x.urdf", "joints": ["a", "b"], "command_joints": ["a", "c"]}, "same joints"),
    ({"urdf": "x.urdf", "joints": ["a"], "locked": {"a": 0.0}}, "also controlled"),
])
def test_bad_profiles_are_refused_naming_the_key(values, match):
    with pytest.raises(ConfigError, match=match):
        profile_from_dict(values, "bad.yaml")


def test_bundled_profile_reproduces_the_defaults_before_profiles():
    robot = derive_robot(resolve_profile("three_dof_arm"))
    assert robot.joint_names == ("joint1", "joint2", "joint3")
    assert robot.values("kp") == (400.0,) * 3 and robot.values("kd") == (40.0,) * 3
    assert robot.values("nominal_inertia") == (0.03, 0.09, 0.011)
    assert robot.values("dob_cutoff") == (90.0, 150.0, 150.0)  # joint1 at the derived bound: 150 chattered
    np.testing.assert_allclose(robot.torque_rate_limit, [400.0, 1000.0, 500.0])
    assert robot.values("armature") == (0.002, 0.003, 0.001)
    assert robot.values("torque_noise_std") == (0.005, 0.01, 0.005)
    assert robot.values("home") == (0.0, 0.3, 0.6)
    assert robot.values("frictionloss") == (0.12, 0.40, 0.15)  # the URDF's <dynamics friction>


@pytest.mark.parametrize(("name", "n_joints", "locked"), [
    ("so101", 5, {"gripper"}), ("panda", 7, {"panda_finger_joint1", "panda_finger_joint2"})])
def test_shipped_arm_profiles_resolve_with_cited_friction(name, n_joints, locked):
    robot = derive_robot(resolve_profile(name))
    assert len(robot.joint_names) == n_joints and set(robot.profile.locked) == locked
    assert all(o == "profile" for o in robot.origin["frictionloss"])
    assert all(robot.profile.setting(j, "frictionloss").source for j in robot.joint_names)
    assert np.all(robot.nominal_inertia > 0) and np.all(robot.frictionloss > 0)


def test_robot_show_marks_derived_values(capsys):
    assert main(["robot", "show", "panda"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("nominal_inertia"))
    assert line.endswith("[derived]")
    assert "Gaz et al. 2019" in out and "effort_limit" in out
    assert main(["robot", "show", "nope"]) == 2
    assert "neither a profile file nor a shipped profile" in capsys.readouterr().err


def test_robot_ros2_control_writes_the_command_order(tmp_path, capsys):
    path = _profile(tmp_path, joints=["a", "b"], command_joints=["b", "a"], locked={}, home=[0.0, 0.0])
    out = tmp_path / "controllers.yaml"
    assert main(["robot", "ros2-control", str(path), "-o", str(out)]) == 0
    doc = yaml.safe_load(out.read_text())
    assert doc["effort_controller"]["ros__parameters"] == {"joints": ["b", "a"], "interface_name": "effort"}
    managers = doc["controller_manager"]["ros__parameters"]
    assert managers["effort_controller"]["type"] == "forward_command_controller/ForwardCommandController"
    assert managers["joint_state_broadcaster"]["type"] == "joint_state_broadcaster/JointStateBroadcaster"
