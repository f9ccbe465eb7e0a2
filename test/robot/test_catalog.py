"""Robot models by name: bundled URDFs and the example-robot-data collection (optional extra)."""

from __future__ import annotations

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
