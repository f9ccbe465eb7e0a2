"""--joint-map and --lock on train / compare / evaluate: checked, and carried to the rigid-body regressor."""

from __future__ import annotations

import json

import pytest

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.resources import default_urdf


@pytest.fixture(scope="module")
def renamed_urdf(tmp_path_factory):
    """The bundled arm with joints renamed a1..a3 and an extra finger joint on the last link."""
    xml = default_urdf().read_text()
    for k in (1, 2, 3):
        xml = xml.replace(f'name="joint{k}"', f'name="a{k}"')
    finger = ('<joint name="finger" type="prismatic"><parent link="link3"/><child link="finger_link"/>'
              '<origin xyz="0 0 0.1"/><axis xyz="1 0 0"/><limit lower="0" upper="0.04" effort="10" velocity="1"/>'
              '</joint><link name="finger_link"><inertial><mass value="0.3"/>'
              '<inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link></robot>')
    xml = xml.replace("</robot>", finger)
    path = tmp_path_factory.mktemp("urdf") / "renamed_arm.urdf"
    path.write_text(xml)
    return path


def test_unmatched_urdf_is_refused_with_both_name_lists(bag, config_file, tmp_path, capsys):
    for command in (["train", "--method", "rbd"], ["compare", "--methods", "rbd"]):
        code = main([*command, "--bag", str(bag), "--out", str(tmp_path / command[0]), "--config", str(config_file),
                     "--urdf", "kuka_lwr4plus"])
        err = capsys.readouterr().err
        assert code == 2, err
        assert "data joints ['joint1', 'joint2', 'joint3']" in err
        assert "URDF joints ['lwr_arm_0_joint'" in err and "--joint-map" in err
        assert not (tmp_path / command[0] / "model.json").exists()


def test_malformed_joint_map_and_lock_are_refused(bag, config_file, tmp_path, capsys):
    args = ["train", "--method", "rbd", "--bag", str(bag), "--out", str(tmp_path / "m"), "--config", str(config_file)]
    assert main([*args, "--urdf", "three_dof_arm", "--joint-map", "joint1"]) == 2
    assert "expected bag_name:urdf_name" in capsys.readouterr().err
    assert main([*args, "--urdf", "three_dof_arm", "--lock", "finger=abc"]) == 2
    assert "expected urdf_joint=value" in capsys.readouterr().err
    assert main([*args, "--joint-map", "joint1:a1"]) == 2  # the bundled arm (simulator data) has no joint a1
    assert "joint(s) ['joint1->a1'] not in the URDF" in capsys.readouterr().err


def test_joint_map_and_lock_reach_the_regressor(bag, config_file, renamed_urdf, tmp_path, capsys):
    out = tmp_path / "rbd"
    mapping = ["joint1:a1", "joint2:a2", "joint3:a3"]
    assert main(["train", "--method", "rbd", "--bag", str(bag), "--out", str(out), "--config", str(config_file),
                 "--urdf", str(renamed_urdf), "--joint-map", *mapping, "--lock", "finger=0.03"]) == 0
    assert "locked 1 URDF joint(s) the data lacks: finger=0.03" in capsys.readouterr().err
    rbd = json.loads((out / "model.json").read_text())["rbd"]
    assert rbd["joint_map"] == {"joint1": "a1", "joint2": "a2", "joint3": "a3"}
    assert rbd["locked"] == {"finger": 0.03}
    # without the map the renamed URDF cannot be matched
    assert main(["train", "--method", "rbd", "--bag", str(bag), "--out", str(tmp_path / "x"), "--config",
                 str(config_file), "--urdf", str(renamed_urdf)]) == 2
    assert "URDF joints ['a1', 'a2', 'a3', 'finger']" in capsys.readouterr().err
    # evaluate checks the options against the artifact
    assert main(["evaluate", "--model", str(out), "--bag", str(bag), "--joint-map", *mapping,
                 "--lock", "finger=0.03"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(out), "--bag", str(bag), "--lock", "finger=0.01"]) == 2
    assert "differs from the model's locked joints" in capsys.readouterr().err
    assert main(["evaluate", "--model", str(out), "--bag", str(bag), "--joint-map", "joint1:a2"]) == 2
    assert "differs from the map" in capsys.readouterr().err
