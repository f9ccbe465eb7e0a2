"""Xacro robot descriptions (issue 40 item 2): a ``.urdf.xacro`` whose gripper comes from a macro in a second file is
expanded with the xacro package and the profile's arguments everywhere a URDF is read, or refused naming the reason.
Read as plain URDF (before), the macro call was dropped without a word and joint3's inertia lacked the gripper."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from deadzone_id_ros.errors import RobotDescriptionError
from deadzone_id_ros.robot import resolve_robot_model
from deadzone_id_ros.robot.derived import derive_robot
from deadzone_id_ros.robot.profile import load_profile
from deadzone_id_ros.robot_configs import sim_config
from deadzone_id_ros.sim import SimArm

JOINTS = ("joint1", "joint2", "joint3")
GRIPPER_MASS = 0.8


def _link(name: str, mass: float = 1.0) -> str:
    return (f'<link name="{name}"><inertial><origin xyz="0 0 0.1"/><mass value="{mass}"/>'
            f'<inertia ixx="0.005" ixy="0" ixz="0" iyy="0.005" iyz="0" izz="0.001"/></inertial></link>')


def _arm_body() -> str:
    joints = "".join(
        f'<joint name="{j}" type="revolute"><parent link="{p}"/><child link="{c}"/><origin xyz="0 0 {z}"/>'
        f'<axis xyz="{ax}"/><limit lower="-2" upper="2" effort="20" velocity="3"/></joint>'
        for j, p, c, z, ax in (("joint1", "base", "l1", 0.1, "0 0 1"), ("joint2", "l1", "l2", 0.2, "0 1 0"),
                               ("joint3", "l2", "l3", 0.3, "0 1 0")))
    return '<link name="base"/>' + "".join(_link(n) for n in ("l1", "l2", "l3")) + joints


def _gripper(parent: str, mass: str) -> str:
    return (f'<link name="gripper_link"><inertial><origin xyz="0.02 0 0.06"/><mass value="{mass}"/>'
            '<inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.001"/></inertial></link>'
            f'<joint name="gripper_mount" type="fixed"><parent link="{parent}"/><child link="gripper_link"/>'
            '<origin xyz="0 0 0.25"/></joint>')


def write_xacro_arm(folder):
    """arm.urdf.xacro includes gripper.xacro (a macro) and calls it on l3 with the mass argument ``gripper_mass``
    (default 0.3); plain.urdf is the same robot written out by hand with the gripper at :data:`GRIPPER_MASS`."""
    (folder / "gripper.xacro").write_text(
        '<?xml version="1.0"?><robot xmlns:xacro="http://www.ros.org/wiki/xacro">'
        f'<xacro:macro name="gripper" params="parent mass">{_gripper("${parent}", "${mass}")}</xacro:macro></robot>')
    (folder / "arm.urdf.xacro").write_text(
        '<?xml version="1.0"?><robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:arg name="gripper_mass" default="0.3"/><xacro:include filename="gripper.xacro"/>'
        f'{_arm_body()}<xacro:gripper parent="l3" mass="$(arg gripper_mass)"/></robot>')
    (folder / "plain.urdf").write_text(f'<?xml version="1.0"?><robot name="arm">{_arm_body()}'
                                       f'{_gripper("l3", str(GRIPPER_MASS))}</robot>')
    (folder / "bare.urdf").write_text(f'<?xml version="1.0"?><robot name="arm">{_arm_body()}</robot>')


def _profile(folder, urdf: str, extra: str = ""):
    path = folder / f"{urdf.split('.')[0]}.yaml"
    path.write_text(f"name: arm\nurdf: {urdf}\njoints: [{', '.join(JOINTS)}]\nhome: [0.0, 0.4, 0.6]\n{extra}")
    return derive_robot(load_profile(path))


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # expansions land in the test's folder


def test_a_xacro_profile_gets_the_included_grippers_inertia_with_its_arguments(tmp_path):
    write_xacro_arm(tmp_path)
    xacro = _profile(tmp_path, "arm.urdf.xacro", f"xacro_args: {{gripper_mass: {GRIPPER_MASS}}}\n")
    plain = _profile(tmp_path, "plain.urdf")
    bare = _profile(tmp_path, "bare.urdf")
    np.testing.assert_allclose(xacro.mass_diagonal, plain.mass_diagonal, rtol=1e-12, atol=0)
    assert xacro.mass_diagonal[2] > 1.5 * bare.mass_diagonal[2], "the gripper is too light for the test"
    # the simulator reads the same expanded robot
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arm, twin = SimArm(sim_config(xacro)), SimArm(sim_config(plain))
    q, dq, ddq = np.array([0.1, 0.4, 0.6]), np.array([0.3, -0.2, 0.5]), np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(arm.inverse_dynamics(q, dq, ddq), twin.inverse_dynamics(q, dq, ddq), rtol=1e-12,
                               atol=1e-12)


def test_the_default_argument_applies_without_xacro_args_and_urdf_paths_expand_too(tmp_path):
    write_xacro_arm(tmp_path)
    text = resolve_robot_model(tmp_path / "arm.urdf.xacro").urdf_path.read_text()  # a plain URDF file (MuJoCo)
    assert 'name="gripper_link"' in text and 'mass value="0.3"' in text and "<xacro:" not in text


def test_a_find_of_a_package_that_is_not_installed_is_refused_naming_it(tmp_path):
    (tmp_path / "arm.urdf.xacro").write_text(
        '<?xml version="1.0"?><robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:include filename="$(find acme_gripper_description)/urdf/gripper.xacro"/>'
        f'{_arm_body()}</robot>')
    with pytest.raises(RobotDescriptionError, match=r"xacro.*\$\(find acme_gripper_description\).*not installed"):
        _profile(tmp_path, "arm.urdf.xacro")


def test_an_undeclared_xacro_argument_and_arguments_for_plain_urdf_are_refused(tmp_path):
    write_xacro_arm(tmp_path)
    with pytest.raises(RobotDescriptionError, match=r"xacro argument\(s\) \['gripper_mas'\] are not declared.*"
                                                    r"gripper_mass"):
        _profile(tmp_path, "arm.urdf.xacro", "xacro_args: {gripper_mas: 0.8}\n")
    with pytest.raises(RobotDescriptionError, match=r"plain.urdf: xacro arguments \['gripper_mass'\] given, but"):
        _profile(tmp_path, "plain.urdf", "xacro_args: {gripper_mass: 0.8}\n")


def test_a_urdf_that_only_declares_the_xacro_namespace_is_read_as_it_is(tmp_path):
    """URDFs generated by xacro keep xmlns:xacro (example-robot-data's panda.urdf): no expansion, same file."""
    from deadzone_id_ros.robot.urdf_text import read_urdf, urdf_file

    path = tmp_path / "generated.urdf"
    path.write_text('<?xml version="1.0"?><robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                    f"{_arm_body()}</robot>")
    assert urdf_file(path) == path and read_urdf(path) == path.read_text()
