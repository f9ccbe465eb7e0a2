"""Issue 20: an arm of the user's own, described by one robot profile, through simulate -> compare -> closed-loop in
process. The arm is built inline: 4 controlled joints (a continuous first joint) and a finger that mimics the wrist,
locked by the profile. Kept tiny: it runs in CI on 2 cores."""

from __future__ import annotations

import json

import pytest
import yaml

from deadzone_id_ros.cli.main import main
from deadzone_id_ros.sim.config import FrictionSourceWarning

LIMITS = {"shoulder": (-0.5, 1.0), "elbow": (-2.0, 0.25), "wrist": (0.3, 1.7)}
NAMES = ("wrist_yaw", "shoulder", "elbow", "wrist")


def _link(name: str) -> str:
    return (f'<link name="{name}"><inertial><origin xyz="0 0 0.1"/><mass value="0.5"/>'
            f'<inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.001"/></inertial></link>')


def _four_joint_urdf() -> str:
    joints = ['<joint name="wrist_yaw" type="continuous"><parent link="base"/><child link="l0"/>'
              '<axis xyz="0 0 1"/><limit effort="5" velocity="3"/><dynamics damping="0.02" friction="0.1"/></joint>']
    parent = "l0"
    for i, name in enumerate(("shoulder", "elbow", "wrist"), start=1):
        lo, hi = LIMITS[name]
        joints.append(f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="l{i}"/>'
                      f'<origin xyz="0 0 0.2"/><axis xyz="0 1 0"/><limit lower="{lo}" upper="{hi}" effort="5" '
                      f'velocity="3"/><dynamics damping="0.02" friction="0.1"/></joint>')
        parent = f"l{i}"
    joints.append('<joint name="finger" type="prismatic"><parent link="l3"/><child link="finger"/>'
                  '<axis xyz="1 0 0"/><limit lower="0" upper="0.02" effort="5" velocity="0.1"/>'
                  '<mimic joint="wrist" multiplier="0.01"/></joint>')
    links = "".join(_link(n) for n in ("base", "l0", "l1", "l2", "l3", "finger"))
    return f'<?xml version="1.0"?><robot name="four">{links}{"".join(joints)}</robot>'


@pytest.mark.filterwarnings("ignore::deadzone_id_ros.sim.config.FrictionSourceWarning")  # asserted once below
def test_own_four_joint_arm_from_its_profile_through_simulate_compare_closed_loop(tmp_path, capsys):
    (tmp_path / "four.urdf").write_text(_four_joint_urdf())
    friction = {"value": 0.15, "source": "test arm: a round figure above the URDF's 0.1 N*m"}
    profile = tmp_path / "four.yaml"
    profile.write_text(yaml.safe_dump({
        "name": "four", "urdf": "four.urdf", "joints": list(NAMES), "command_joints": list(reversed(NAMES)),
        "locked": {"finger": 0.0}, "home": [0.0, 0.2, -0.5, 0.8],
        "settings": {j: {"frictionloss": friction} for j in NAMES}}))
    assert main(["robot", "show", str(profile)]) == 0
    shown = capsys.readouterr().out
    assert "wrist_yaw (continuous)" in shown and "locked: finger=0" in shown

    bag = tmp_path / "bag"
    with pytest.warns(FrictionSourceWarning, match="wrist_yaw: frictionloss = 0.15"):  # the profile beats the URDF
        assert main(["simulate", "--duration", "6", "--seed", "1", "--out", str(bag), "--robot", str(profile),
                     "--no-progress"]) == 0
    episode = yaml.safe_load((bag / "episode.yaml").read_text())
    assert episode["robot"] == "four"
    assert tuple(episode["sim_config"]["joint_names"]) == NAMES
    assert episode["sim_config"]["frictionloss"] == [0.15] * 4  # the profile's setting, not the URDF's 0.1

    cmp = tmp_path / "cmp"
    assert main(["compare", "--bag", str(bag), "--out", str(cmp), "--quick", "--seeds", "1", "--max-steps", "60",
                 "--robot", str(profile), "--methods", "rbd", "masked", "conventional", "--no-progress"]) == 0
    report = json.loads((cmp / "report.json").read_text())
    assert set(report["methods"]) >= {"rbd", "masked", "conventional"}
    assert all(len(m["rmse_per_joint"]) == 4 for m in report["methods"].values())

    assert main(["closed-loop", "--compare", str(cmp), "--robot", str(profile), "--seeds", "3", "--duration", "1",
                 "--workers", "1"]) == 0
    closed = json.loads((cmp / "closed_loop.json").read_text())
    assert closed, "closed_loop.json is empty"
    text = (cmp / "closed_loop.md").read_text()
    assert "rbd" in text


@pytest.mark.filterwarnings("ignore::deadzone_id_ros.sim.config.FrictionSourceWarning")
def test_replay_takes_a_robot_profile(tmp_path, capsys):
    """``replay --robot so101``: a simulated SO-101 bag is replayed on the profile's simulated arm (5 joints) in
    closed loop with the profile's controller; ``--urdf`` and ``--robot`` together are refused."""
    bag = tmp_path / "so101"
    assert main(["simulate", "--duration", "0.5", "--seed", "2", "--out", str(bag), "--robot", "so101",
                 "--no-progress"]) == 0
    out = tmp_path / "replay"
    assert main(["replay", str(bag), "--robot", "so101", "--closed-loop", "--out", str(out)]) == 0
    assert "simulating robot profile so101" in capsys.readouterr().out
    summary = json.loads((out / "report.json").read_text())
    assert len(summary["joints"]) == 5 and summary["mode"] == "closed_loop", summary
    assert main(["replay", str(bag), "--robot", "so101", "--urdf", "so101", "--out", str(tmp_path / "x")]) == 2
    assert "give --urdf or --robot, not both" in capsys.readouterr().err
