"""Issue 39 items 3 and 7: a profile whose URDF cannot be found is named, with the path looked for, by `robot show`
and by `launch robot:=FILE`; the launch starts nothing and leaves nothing in the output folder. A shipped profile
whose URDF is an example-robot-data model says that package is missing, not that a --urdf flag was wrong."""

from __future__ import annotations

import pytest

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.robot import catalog, defaults


def _profile(tmp_path, urdf: str):
    path = tmp_path / "desk4.yaml"
    path.write_text(f"name: desk4\nurdf: {urdf}\njoints: [shoulder, elbow]\n")
    return path


def test_robot_show_names_the_profile_and_where_it_looked_for_the_urdf(tmp_path, capsys):
    profile = _profile(tmp_path, "desk4_v2.urdf")
    assert main(["robot", "show", str(profile)]) == 2
    err = capsys.readouterr().err
    assert f"robot profile desk4 ({profile}): its URDF 'desk4_v2.urdf' does not exist (looked for " \
           f"{(tmp_path / 'desk4_v2.urdf').resolve()})" in err, err


def test_a_launch_with_a_broken_profile_starts_nothing_and_leaves_no_episode(tmp_path, capsys):
    profile = _profile(tmp_path, "desk4_v2.urdf")
    out = tmp_path / "runs"
    defaults.load_robot.cache_clear()
    status = main(["launch", "sim_feedforward.launch.yaml", f"robot:={profile}", f"output_dir:={out}",
                   "use_sim_time:=true", "lockstep:=true", "duration:=5"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert f"robot:={profile}: robot profile desk4 ({profile}): its URDF 'desk4_v2.urdf' does not exist " \
           f"(looked for {(tmp_path / 'desk4_v2.urdf').resolve()})" in err, err
    assert "parameter file" not in err, err
    assert not out.exists() or not any(out.iterdir()), list(out.iterdir())


def test_a_node_blames_the_profile_not_its_parameter_file(tmp_path):
    from deadzone_id_ros.errors import ConfigError
    from deadzone_id_ros.sim.config import SimArmConfig

    profile = _profile(tmp_path, "desk4_v2.urdf")
    defaults.load_robot.cache_clear()
    with pytest.raises(ConfigError) as info:
        defaults.fill_required(SimArmConfig, {}, source="node /sim_arm parameters (parameter file config/sim_arm.yaml)",
                               robot=str(profile))
    assert str(info.value).startswith(f"robot:={profile}: robot profile desk4 ({profile}): its URDF"), info.value
    assert "parameter file" not in str(info.value)


def test_a_shipped_profile_whose_urdf_package_is_missing_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setattr(catalog, "_example_robot_data", dict)  # example-robot-data not installed
    defaults.load_robot.cache_clear()
    try:
        assert main(["robot", "show", "so101"]) == 2
    finally:
        defaults.load_robot.cache_clear()
    err = capsys.readouterr().err
    assert "robot profile so101 (" in err and "its URDF 'so101' is neither a file" in err, err
    assert "example-robot-data, which is not installed: `pip install -r requirements-robots.txt" in err, err
    assert "--urdf" not in err, err
