"""Prismatic joints (issue 40 item 3): an arm on a prismatic lift is described, simulated, trained and controlled in
each joint's own units (m, m/s, m/s², N for the lift; rad and N·m for the arm). Before, ``robot show`` printed the
lift as revolute in rad and N·m, ``simulate`` refused it (a 0.2 rad margin on a 0.4 m stroke), and the lift's force
(over 200 N) relabelled every joint's effort "unknown", so the controller refused the trained model."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.data.effort_units import guess_effort_units, not_si, with_joint_kinds
from deadzone_id_ros.errors import ArtifactError, RobotDescriptionError
from deadzone_id_ros.robot import load_robot_description
from deadzone_id_ros.robot.derived import derive_robot
from deadzone_id_ros.robot.profile import load_profile

STROKE = 0.4  # [m]
CARRIAGE_MASS = 20.0  # [kg]: the lift holds (20 + 2.5) kg * 9.81 m/s^2 = 221 N, implausible as N·m


def _link(name: str, mass: float, z: float = 0.1) -> str:
    return (f'<link name="{name}"><inertial><origin xyz="0 0 {z}"/><mass value="{mass}"/>'
            f'<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.01"/></inertial></link>')


@pytest.fixture
def lift_robot(tmp_path):
    """A 2-joint arm on a vertical prismatic lift, its URDF and profile (no home: derived)."""
    urdf = tmp_path / "lift_arm.urdf"
    urdf.write_text(
        '<?xml version="1.0"?><robot name="lift_arm"><link name="base"/>'
        + _link("carriage", CARRIAGE_MASS, 0.0) + _link("upper", 1.5) + _link("fore", 1.0)
        + f'<joint name="lift" type="prismatic"><parent link="base"/><child link="carriage"/><axis xyz="0 0 1"/>'
        f'<limit lower="0" upper="{STROKE}" effort="400" velocity="0.3"/><dynamics damping="20" friction="5"/></joint>'
        '<joint name="shoulder" type="revolute"><parent link="carriage"/><child link="upper"/>'
        '<origin xyz="0 0 0.1"/><axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="30" velocity="2"/>'
        '<dynamics damping="0.1" friction="0.2"/></joint>'
        '<joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/><origin xyz="0 0 0.3"/>'
        '<axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="15" velocity="2"/>'
        '<dynamics damping="0.05" friction="0.1"/></joint></robot>')
    profile = tmp_path / "lift_arm.yaml"
    profile.write_text("name: lift_arm\nurdf: lift_arm.urdf\njoints: [lift, shoulder, elbow]\n")
    return urdf, profile


def test_robot_show_gives_the_lift_in_metres_and_newtons(lift_robot, capsys):
    _, profile = lift_robot
    assert main(["robot", "show", str(profile)]) == 0
    out = capsys.readouterr().out
    lift = out[out.index("  lift (prismatic):"):out.index("  shoulder (revolute):")]
    for name, unit in (("upper", "m"), ("velocity_limit", "m/s"), ("effort_limit", "N"), ("home", "m"),
                       ("nominal_inertia", "kg"), ("frictionloss", "N"), ("damping", "N*s/m"),
                       ("torque_rate_limit", "N/s"), ("acceleration_limit", "m/s^2")):
        assert any(line.split()[0] == name and line.split()[2] == unit for line in lift.splitlines()[1:]), name
    shoulder = out[out.index("  shoulder (revolute):"):]
    assert any(line.split()[:1] == ["effort_limit"] and line.split()[2] == "N*m" for line in shoulder.splitlines())


def test_the_lift_is_simulated_with_a_margin_in_its_own_unit(lift_robot, tmp_path):
    from deadzone_id_ros.robot_configs import simulation_configs
    from deadzone_id_ros.sim.record import simulate_bag

    _, profile = lift_robot
    robot = derive_robot(load_profile(profile))
    assert 0.0 < robot.home[0] < STROKE, "the lift's default home sits on its lower limit"
    configs = simulation_configs(str(profile))
    rec = simulate_bag(3.0, 1, tmp_path / "bag", **configs).recording
    lift = rec.position[:, 0]
    assert np.ptp(lift) > 0.01, "the lift did not move"
    assert lift.min() >= 0.0 and lift.max() <= STROKE  # within its stroke [m]
    assert np.abs(rec.effort[:, 0]).max() > 200.0  # it carries the arm: a force in N


def test_effort_units_follow_the_joint_kinds_of_the_urdf():
    peaks = {"lift": 239.0, "shoulder": 12.0, "elbow": 4.0}
    loaded, why = guess_effort_units(set(), peaks)
    assert set(loaded.values()) == {"unknown"} and "lift" in why and "--urdf" in why
    kinds = {"lift": "prismatic", "shoulder": "revolute", "elbow": "revolute"}
    units, why = with_joint_kinds(loaded, kinds, peaks, why)
    assert units == {"lift": "N", "shoulder": "N*m", "elbow": "N*m"} and "prismatic" in why
    assert not_si(units, kinds) == {} and not_si(units) == {"lift": "N"}
    # a current bag (mA on every joint, far above any joint force) stays unknown
    current = {"lift": 9000.0, "shoulder": 2400.0, "elbow": 800.0}
    loaded, why = guess_effort_units(set(), current)
    assert with_joint_kinds(loaded, kinds, current, why)[0] == loaded


def test_an_arm_on_a_lift_trains_in_n_and_nm_and_the_controller_takes_the_model(lift_robot, tmp_path,
                                                                                make_config_file, capsys):
    from deadzone_id_ros.models.runtime import load_model
    from deadzone_id_ros.robot_configs import controller_config, simulation_configs
    from deadzone_id_ros.sim.record import simulate_bag

    urdf, profile = lift_robot
    simulate_bag(8.0, 1, tmp_path / "bag", **simulation_configs(str(profile)))
    out = tmp_path / "model"
    assert main(["train", "--bag", str(tmp_path / "bag"), "--method", "masked", "--out", str(out), "--config",
                 str(make_config_file(20)), "--no-onnx", "--urdf", str(urdf)]) == 0
    meta = json.loads((out / "model.json").read_text())
    assert meta["effort_units"] == {"lift": "N", "shoulder": "N*m", "elbow": "N*m"}, capsys.readouterr().err
    assert meta["joint_kinds"]["lift"] == "prismatic" and meta["joint_units"]["lift"]["q"] == "m"
    robot = derive_robot(load_profile(profile))
    load_model(controller_config(robot, model="learned", model_path=str(out)))  # accepted: SI per joint kind
    # a controller whose URDF calls the lift revolute refuses the model
    revolute = tmp_path / "revolute.urdf"
    revolute.write_text(urdf.read_text().replace('type="prismatic"', 'type="revolute"'))
    with pytest.raises(ArtifactError, match=r"joint kinds .*'lift': \('prismatic', 'revolute'\)"):
        load_model(controller_config(robot, model="learned", model_path=str(out), urdf_path=str(revolute)))


def test_a_floating_or_planar_joint_in_the_controlled_set_is_refused_naming_it(tmp_path):
    for kind in ("floating", "planar"):
        urdf = tmp_path / f"{kind}.urdf"
        urdf.write_text(f'<?xml version="1.0"?><robot name="r"><link name="base"/>{_link("body", 1.0)}'
                        f'<joint name="base_joint" type="{kind}"><parent link="base"/><child link="body"/>'
                        '<axis xyz="0 0 1"/></joint></robot>')
        with pytest.raises(RobotDescriptionError, match=rf"joint 'base_joint' is {kind} \(\d DOF\).*lock it"):
            load_robot_description(urdf, ["base_joint"])


def test_a_heavy_arms_torque_within_its_urdf_effort_limits_is_newton_metres():
    """A UR10 in the catalog demo: its shoulder (URDF effort limit 330 N·m) reached 203.8 N·m, above the 200 N·m that
    is implausible for an arm without a URDF, and its models were labelled "unknown" and refused by the controller.
    Within 1.2x each joint's URDF limit the torque is N·m; beyond it, or without limits, it stays unknown."""
    peaks = {"shoulder_pan_joint": 60.0, "shoulder_lift_joint": 203.8, "elbow_joint": 90.0}
    kinds = dict.fromkeys(peaks, "revolute")
    limits = {"shoulder_pan_joint": 330.0, "shoulder_lift_joint": 330.0, "elbow_joint": 150.0}
    loaded, why = guess_effort_units(set(), peaks)
    assert set(loaded.values()) == {"unknown"}
    assert with_joint_kinds(loaded, kinds, peaks, why)[0] == loaded
    units, reason = with_joint_kinds(loaded, kinds, peaks, why, limits)
    assert set(units.values()) == {"N*m"} and "URDF effort limit" in reason
    # a current bag (mA) far above every limit stays unknown
    current = {"shoulder_pan_joint": 2400.0, "shoulder_lift_joint": 3100.0, "elbow_joint": 900.0}
    loaded, why = guess_effort_units(set(), current)
    assert with_joint_kinds(loaded, kinds, current, why, limits)[0] == loaded
    # one joint beyond 1.2x its limit keeps the whole bag unknown (one driver reports one quantity)
    over = {**peaks, "elbow_joint": 250.0}
    loaded, why = guess_effort_units(set(), over)
    assert set(with_joint_kinds(loaded, kinds, over, why, limits)[0].values()) == {"unknown"}
