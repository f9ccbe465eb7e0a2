"""Robot models by name: bundled URDFs and the example-robot-data collection (optional extra)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import needs_erd

from deadzone_id_ros.errors import RobotDescriptionError
from deadzone_id_ros.robot import ERD_DISTRIBUTION, available_robots, resolve_robot_model

BUNDLED = {"three_dof_arm", "kuka_lwr4plus", "dfki_double_pendulum_a0", "dfki_double_pendulum_c0"}


def test_bundled_models_resolve_by_name_and_load_without_geometry():
    robots = available_robots()
    assert BUNDLED <= set(robots)
    for name in BUNDLED:
        entry = resolve_robot_model(name)
        assert entry.origin == "bundled" and entry.urdf_path.is_file()
        pin.buildModelFromUrdf(str(entry.urdf_path))  # dynamics only: no meshes needed
    kuka = pin.buildModelFromUrdf(str(resolve_robot_model("kuka_lwr4plus").urdf_path))
    # the joint names the real recording's /joint_states carries
    assert list(kuka.names)[1:] == [f"lwr_arm_{i}_joint" for i in range(7)]


def test_file_path_wins_and_unknown_names_list_the_known_ones(tmp_path):
    path = tmp_path / "x.urdf"
    path.write_text(resolve_robot_model("three_dof_arm").urdf_path.read_text())
    assert resolve_robot_model(str(path)).origin == "file"
    with pytest.raises(RobotDescriptionError, match=r"--urdf 'pandaa' is neither a file nor a known robot model "
                                                    r"\(known: .*three_dof_arm"):
        resolve_robot_model("pandaa")
    with pytest.raises(FileNotFoundError, match="nope.urdf does not exist"):
        resolve_robot_model(tmp_path / "nope.urdf")


@needs_erd
def test_example_robot_data_names():
    robots = available_robots()
    for name in ("panda", "ur5_robot", "z1", "xarm7", "so100", "double_pendulum"):
        assert robots[name].origin == ERD_DISTRIBUTION, name
        assert robots[name].urdf_path.is_file()
    # two packages ship anymal.urdf: both reachable, qualified by package
    assert {"anymal_b_simple/anymal", "anymal_c_simple/anymal"} <= set(robots)
    model = pin.buildModelFromUrdf(str(robots["panda"].urdf_path))
    assert "panda_finger_joint1" in list(model.names)


@needs_erd
@pytest.mark.parametrize(("name", "joints", "locked"), [
    ("ur5_robot", ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
                   "wrist_3_joint"), {}),
    ("z1", tuple(f"joint{i}" for i in range(1, 7)), {"jointGripper": 0.0}),
    ("panda_collision", tuple(f"panda_joint{i}" for i in range(1, 8)),
     {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
])
def test_a_catalog_arm_resolves_to_a_derived_profile(name, joints, locked, capsys):
    """Issue 36: ``--robot NAME`` of a fixed-base serial arm of the catalog: its joints in series from the base, the
    gripper locked, a home pose inside the limits; ``robot show`` prints how it was derived."""
    from deadzone_id_ros.cli.main import main
    from deadzone_id_ros.robot import derive_robot, resolve_profile

    profile = resolve_profile(name)
    assert profile.joint_names == joints and dict(profile.locked) == locked and profile.urdf == name
    robot = derive_robot(profile)
    assert np.all(robot.home > robot.description.lower) and np.all(robot.home < robot.description.upper)
    assert robot.origin["armature"] == ("derived",) * len(joints)  # the catalog gives no rotor inertia: the rule
    assert main(["robot", "show", name]) == 0
    out = capsys.readouterr().out
    assert "derived from the catalog URDF" in out and "why dob_cutoff" in out


@needs_erd
@pytest.mark.parametrize(("name", "why"), [
    ("solo12", r"branches after the base into 4 chains.*legs"),  # a quadruped
    ("allegro_right_hand", r"branches after the base into 4 chains.*fingers of a hand"),
    ("talos_reduced", r"branches after the base into 3 chains"),  # a humanoid
    ("finger_edu", r"looks like a gripper's or a hand's"),
])
def test_a_catalog_robot_that_is_not_an_arm_is_refused_with_the_reason(name, why):
    from deadzone_id_ros.errors import ConfigError
    from deadzone_id_ros.robot import resolve_profile

    with pytest.raises(ConfigError, match=rf"--robot '{name}': the catalog robot is not a fixed-base serial arm: "
                                          rf".*{why}.*Write a profile naming the joints"):
        resolve_profile(name)


def test_a_written_profile_still_wins_over_the_catalog():
    from deadzone_id_ros.robot import resolve_profile

    assert resolve_profile("three_dof_arm").derivation == ""  # the shipped profile, not the bundled URDF's tree
    catalog = resolve_profile("catalog:three_dof_arm")  # the bundled URDF's tree, no hand-written setting
    assert catalog.derivation and catalog.joint_names == ("joint1", "joint2", "joint3") and not catalog.settings
