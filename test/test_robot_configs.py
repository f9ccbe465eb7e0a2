"""Configs built from robot profiles (issue 20): no dataclass default names a joint; builders take the profile's
values with explicit ones overriding; a parameter file for another arm needs only its joints; the shipped parameter
files name no joint, and the loaders (what the nodes read) take a ``robot`` profile as the in-process builders do."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from deadzone_id_ros.control.excitation_params import load_excitation_config
from deadzone_id_ros.control.feedforward_controller_params import load_controller_config
from deadzone_id_ros.robot.defaults import PROFILE_FIELDS
from deadzone_id_ros.robot_configs import (
    bundled_robot,
    controller_config,
    controller_node_config,
    excitation_config,
    load_robot,
    robot_for,
    sim_config,
)
from deadzone_id_ros.sim.sim_arm_params import load_sim_config

REPO = Path(__file__).resolve().parent.parent

PACKAGE = REPO / "deadzone_id_ros"


def joint_name_defaults(root: Path) -> list[str]:
    """``file:line`` of every class-level annotated field whose default is a non-empty tuple of strings."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for cls in (n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ClassDef)):
            for stmt in cls.body:
                value = stmt.value if isinstance(stmt, ast.AnnAssign) else None
                if (isinstance(value, ast.Tuple) and value.elts
                        and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts)):
                    found.append(f"{path.relative_to(root.parent)}:{stmt.lineno}")
    return found


def test_no_dataclass_default_names_a_joint(tmp_path):
    assert joint_name_defaults(PACKAGE) == []
    bad = tmp_path / "pkg"
    bad.mkdir()
    (bad / "m.py").write_text("class C:\n    joint_names: tuple[str, ...] = ('joint1', 'joint2')\n")
    assert joint_name_defaults(bad) == ["pkg/m.py:2"]


def test_builders_take_the_profile_and_explicit_values_override():
    panda = load_robot("panda")
    cfg = controller_config(panda, mode="pd", kp=(100.0,) * 7)
    assert cfg.joint_names == panda.joint_names and cfg.kp == (100.0,) * 7
    assert cfg.kd == panda.values("kd") and cfg.nominal_inertia == panda.values("nominal_inertia")
    assert cfg.urdf_path == str(panda.urdf_path)
    sim = sim_config(panda, seed=3)
    assert sim.frictionloss == panda.values("frictionloss") and sim.initial_position == panda.values("home")
    assert sim.damping is None  # the URDF's, filled in by the simulator
    assert controller_config(bundled_robot()).urdf_path == ""  # the bundled URDF, stored as before profiles


def test_a_parameter_file_for_another_arm_needs_only_its_joints(tmp_path):
    """Before profiles: "kp has 3 values but joint_names has 4" for any file that named 4 joints."""
    robot = load_robot("so101")
    names = list(robot.joint_names)
    params = tmp_path / "ffc.yaml"
    params.write_text(f"/**:\n  ros__parameters:\n    joint_names: {names}\n    urdf_path: {robot.urdf_path}\n"
                      "    mode: pd\n")
    cfg, node = load_controller_config(params)
    assert cfg.joint_names == tuple(names) and len(cfg.kp) == 5 and node.command_joint_names == tuple(names)
    # URDF-derived (an implicit profile: the gripper locked at 0, no armature setting): diag M(home) plus the default
    # armature rule (issue 36)
    implicit = robot_for(robot.urdf_path, names)
    assert implicit.origin["armature"] == ("derived",) * 5
    assert cfg.kp == implicit.values("kp") and cfg.nominal_inertia == pytest.approx(
        tuple(implicit.mass_diagonal + implicit.armature))
    exc, _ = load_excitation_config()  # the bundled file: the bundled arm
    assert exc.joint_names == bundled_robot().joint_names


def test_shipped_parameter_files_name_no_joint():
    """config/*.yaml leave every field a robot profile gives to the profile (robot:=, default the bundled arm), so
    one file serves every robot: no joint names, no URDF, no per-joint list."""
    from deadzone_id_ros.config import load_ros_parameters

    for name in ("feedforward_controller", "sim_arm", "excitation", "recorder"):
        params = load_ros_parameters(REPO / "config" / f"{name}.yaml", name)
        assert not set(params) & set(PROFILE_FIELDS), (name, sorted(set(params) & set(PROFILE_FIELDS)))
        assert not any("joint1" in str(v) for v in params.values()), name


@pytest.mark.parametrize("name", ["three_dof_arm", "so101", "panda"])
def test_parameter_files_with_a_robot_give_the_in_process_configs(name):
    """What a node reads from the shipped parameter file with robot:=NAME is what the in-process stages build from
    the profile (the live and the offline paths run the same robot); an explicit value still wins."""
    robot = load_robot(name)
    ctrl, node = load_controller_config(robot=name)
    assert ctrl == controller_config(robot) and node == controller_node_config(robot)
    assert load_sim_config(robot=name)[0] == sim_config(robot)
    assert load_excitation_config(robot=name)[0] == excitation_config(robot)
    n = len(robot.joint_names)
    ctrl, _ = load_controller_config(None, {"robot": name, "kp": [100.0] * n})
    assert ctrl.kp == (100.0,) * n and ctrl.kd == robot.values("kd") and ctrl.joint_names == robot.joint_names


def test_a_robot_that_does_not_exist_is_named():
    from deadzone_id_ros.errors import ConfigError

    with pytest.raises(ConfigError, match=r"'no_such_arm' is neither a profile file nor a shipped profile"):
        load_sim_config(robot="no_such_arm")
