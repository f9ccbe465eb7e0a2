"""Which URDF the rigid-body model gets: only one the user named, or the bundled arm for simulator data."""

from __future__ import annotations

import pytest

from deadzone_id_ros.errors import RobotDescriptionError
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.training.sources import resolve_urdf

SIM_JOINTS = ("joint1", "joint2", "joint3")


def test_matching_joint_names_alone_never_pick_the_bundled_arm():
    xml, why = resolve_urdf(None, SIM_JOINTS)  # a real robot whose joints happen to be named joint1..3
    assert xml is None
    assert "does not say it came from the simulator" in why and "pass --urdf" in why


def test_simulator_data_gets_the_bundled_arm_only_when_the_joints_match():
    xml, source = resolve_urdf(None, SIM_JOINTS, simulated=True)
    assert xml == default_urdf().read_text() and source.endswith("three_dof_arm.urdf")
    xml, why = resolve_urdf(None, ("a", "b"), simulated=True)
    assert xml is None and "are not the data's ['a', 'b']" in why


def test_named_urdf_is_used_by_path_or_by_name(tmp_path):
    path = tmp_path / "mine.urdf"
    path.write_text(default_urdf().read_text())
    assert resolve_urdf(str(path), ("x",)) == (path.read_text(), str(path))
    xml, source = resolve_urdf("kuka_lwr4plus", ("lwr_arm_0_joint",))
    assert "lwr_arm_6_joint" in xml and source.startswith("kuka_lwr4plus (")
    with pytest.raises(FileNotFoundError, match="missing.urdf does not exist"):
        resolve_urdf(str(tmp_path / "missing.urdf"), SIM_JOINTS)
    with pytest.raises(RobotDescriptionError, match=r"'no_such_robot' is neither a file nor a known robot model.*"
                                                    r"kuka_lwr4plus"):
        resolve_urdf("no_such_robot", SIM_JOINTS)


def test_the_simulators_physics_is_found_past_a_live_recording_without_it(tmp_path):
    """A live recording through sim_arm (episode.yaml without sim_config) listed before offline-simulated bags:
    ``--simulator yes`` still takes the physics (hence the noise floor) from the offline ones (issue 20)."""
    import dataclasses

    import yaml

    from deadzone_id_ros.robot_configs import bundled_sim_config
    from deadzone_id_ros.training.sources import detect_simulator

    live, offline = tmp_path / "live", tmp_path / "sim_seed1"
    live.mkdir()
    offline.mkdir()
    (live / "episode.yaml").write_text(yaml.safe_dump({"robot": "three_dof_arm", "notes": ""}))
    physics = dataclasses.replace(bundled_sim_config(), seed=7, profile="ideal")
    (offline / "episode.yaml").write_text(yaml.safe_dump({
        "robot": "three_dof_arm", "generator": "deadzone_id_ros.sim.offline.simulate",
        "sim_config": json_ready(dataclasses.asdict(physics))}))
    simulated, cfg, why = detect_simulator([live, offline])
    assert not simulated and why == f"{live}: episode.yaml does not name the simulator"
    assert cfg is not None and cfg.profile == "ideal" and cfg.seed == 7
    assert detect_simulator([offline])[:2] == (True, cfg)


def json_ready(value):
    """Tuples as lists, as the YAML writer of the episode files stores them."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return value
