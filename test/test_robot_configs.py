"""Configs built from robot profiles (issue 20): no dataclass default names a joint; builders take the profile's
values with explicit ones overriding; a parameter file for another arm needs only its joints."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from deadzone_id_ros.control.excitation_params import load_excitation_config
from deadzone_id_ros.control.feedforward_controller_params import load_controller_config
from deadzone_id_ros.robot_configs import bundled_robot, controller_config, load_robot, sim_config

PACKAGE = Path(__file__).resolve().parent.parent / "deadzone_id_ros"


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
    # URDF-derived (an implicit profile: the gripper locked at 0, no armature setting): diag M(home) itself
    assert cfg.kp == (400.0,) * 5 and cfg.nominal_inertia == pytest.approx(robot.values("mass_diagonal"))
    exc, _ = load_excitation_config()  # the bundled file: the bundled arm
    assert exc.joint_names == bundled_robot().joint_names
