"""Joint map between a recording and a URDF, and locking the URDF joints the data lacks (pinocchio reduced model)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from deadzone_id_ros.errors import RobotDescriptionError
from deadzone_id_ros.robot import build_reduced_model, match_joints, parse_joint_map, parse_locked, resolve_robot_model

try:
    import importlib.metadata as _md

    _md.distribution("example-robot-data")
    _HAVE_ERD = True
except Exception:  # PackageNotFoundError
    _HAVE_ERD = False
needs_erd = pytest.mark.skipif(not _HAVE_ERD, reason="example-robot-data not installed (make test installs it)")


def test_parse_joint_map_and_locked():
    assert parse_joint_map(["j1:lwr_arm_0_joint", " j2 : b "]) == {"j1": "lwr_arm_0_joint", "j2": "b"}
    assert parse_joint_map(None) == {}
    for bad, msg in ((["j1"], "expected bag_name:urdf_name"), (["j1:"], "expected"), (["a:b:c"], "expected"),
                     (["a:x", "a:y"], "bag joint 'a' is mapped twice"), (["a:x", "b:x"], "'x' is the target of two")):
        with pytest.raises(RobotDescriptionError, match=msg):
            parse_joint_map(bad)
    assert parse_locked(["f1=0.02", "g=-1"]) == {"f1": 0.02, "g": -1.0}
    for bad in (["f1"], ["f1=abc"], ["=1"], ["f=nan"]):
        with pytest.raises(RobotDescriptionError, match="expected urdf_joint=value"):
            parse_locked(bad)


def test_match_joints_refuses_with_both_name_lists():
    urdf = ["shoulder", "elbow", "wrist"]
    assert match_joints(["elbow", "shoulder"], urdf) == ("elbow", "shoulder")
    assert match_joints(["q1", "q2"], urdf, {"q1": "shoulder", "q2": "elbow"}) == ("shoulder", "elbow")
    with pytest.raises(RobotDescriptionError, match=r"a.urdf: joint\(s\) \['q2'\] not in the URDF; .*pass --joint-map "
                                                    r".*data joints \['q1', 'q2'\], URDF joints \['shoulder', "
                                                    r"'elbow', 'wrist'\]"):
        match_joints(["q1", "q2"], urdf, {"q1": "shoulder"}, source="a.urdf")
    with pytest.raises(RobotDescriptionError, match=r"\['q1->hip'\] not in the URDF"):
        match_joints(["q1"], urdf, {"q1": "hip"})
    with pytest.raises(RobotDescriptionError, match=r"names joint\(s\) \['zz'\] the recording lacks"):
        match_joints(["q1"], urdf, {"zz": "shoulder", "q1": "elbow"})
    with pytest.raises(RobotDescriptionError, match="two data joints map to one URDF joint"):
        match_joints(["elbow", "q"], urdf, {"q": "elbow"})


def test_locking_matches_the_full_model_with_the_joint_held():
    xml = resolve_robot_model("kuka_lwr4plus").urdf_path.read_text()
    data = [f"lwr_arm_{i}_joint" for i in (0, 1, 2, 3)]
    robot = build_reduced_model(xml, data, locked={"lwr_arm_5_joint": 0.7})
    assert robot.locked == {"lwr_arm_4_joint": 0.0, "lwr_arm_5_joint": 0.7, "lwr_arm_6_joint": 0.0}
    assert "lwr_arm_5_joint=0.7" in robot.describe()
    assert robot.model.nv == 4
    full = pin.buildModelFromXML(xml)
    rng = np.random.default_rng(0)
    q, v, a = rng.normal(size=(3, 4))
    held = np.array([0.0, 0.7, 0.0])
    tau_full = pin.rnea(full, full.createData(), np.r_[q, held], np.r_[v, 0, 0, 0], np.r_[a, 0, 0, 0])[:4]
    tau_red = pin.rnea(robot.model, robot.model.createData(), robot.configuration(q[None])[0], v, a)
    np.testing.assert_allclose(tau_red, tau_full, rtol=1e-12, atol=1e-12)
    with pytest.raises(RobotDescriptionError, match=r"cannot lock \['lwr_arm_0_joint', 'nope'\]"):
        build_reduced_model(xml, data, locked={"lwr_arm_0_joint": 1.0, "nope": 0.0})
    with pytest.raises(RobotDescriptionError, match="cannot parse"):
        build_reduced_model("<robot", data, source="bad.urdf")


@needs_erd
def test_panda_as_shipped_locks_its_fingers():
    from deadzone_id_ros.models import RigidBodyRegressor

    xml = resolve_robot_model("panda").urdf_path.read_text()
    arm = [f"panda_joint{i}" for i in range(1, 8)]
    reg = RigidBodyRegressor(xml, arm, 0.01, source="panda", locked={"panda_finger_joint1": 0.02})
    assert reg.locked == {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.0}
    assert reg.n_joints == 7 and reg.model.nv == 7


def test_a_joint_named_like_a_link_can_be_locked():
    # URDF keeps link and joint names apart, pinocchio makes both frames: locking joint "gripper" (gripper link ->
    # jaw) beside a link "gripper" (the wrist's child) failed with "Several frames match the filter" (the SO-100 of
    # example-robot-data)
    inertial = ('<inertial><mass value="{m}"/><origin xyz="0.05 0 0"/>'
                '<inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>')
    urdf = f"""<robot name="r">
      <link name="base"/>
      <link name="arm">{inertial.format(m=1.0)}</link>
      <link name="gripper">{inertial.format(m=0.2)}</link>
      <link name="jaw">{inertial.format(m=0.1)}</link>
      <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
        <limit lower="-3" upper="3" effort="5" velocity="5"/></joint>
      <joint name="wrist" type="revolute"><parent link="arm"/><child link="gripper"/><origin xyz="0.2 0 0"/>
        <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="2" velocity="5"/></joint>
      <joint name="gripper" type="revolute"><parent link="gripper"/><child link="jaw"/><origin xyz="0.1 0 0"/>
        <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="5"/></joint>
    </robot>"""
    reduced = build_reduced_model(urdf, ["shoulder", "wrist"], source="r.urdf")
    assert reduced.model.nv == 2 and reduced.urdf_joint_names == ("shoulder", "wrist")
    # the jaw's mass is still there, welded to the gripper: 1.3 kg in all
    assert sum(i.mass for i in reduced.model.inertias) == pytest.approx(1.3)
    # the link keeps its place under its name: its body frame, not the joint "gripper"'s frame 0.1 m further
    from deadzone_id_ros.robot.urdf_text import link_frame_id

    data = reduced.model.createData()
    pin.framesForwardKinematics(reduced.model, data, pin.neutral(reduced.model))
    fid = link_frame_id(reduced.model, "gripper")
    assert np.allclose(data.oMf[fid].translation, [0.2, 0.0, 0.0]) and reduced.model.frames[fid].type == \
        pin.FrameType.BODY
    assert np.allclose(data.oMf[link_frame_id(reduced.model, "jaw")].translation, [0.3, 0.0, 0.0])
