"""``deadzone-id robots``: the names --urdf accepts, and one model's joints."""

from __future__ import annotations

import json

from deadzone_id_ros.cli.main import main


def test_robots_lists_bundled_names(capsys):
    assert main(["robots"]) == 0
    out = capsys.readouterr().out
    assert "bundled (" in out and "kuka_lwr4plus" in out and "dfki_double_pendulum_c0" in out
    assert main(["robots", "--json"]) == 0
    names = {e["name"]: e for e in json.loads(capsys.readouterr().out)}
    assert names["three_dof_arm"]["origin"] == "bundled"


def test_robots_joints_and_unknown_name(capsys):
    assert main(["robots", "--joints", "dfki_double_pendulum_a0"]) == 0
    assert capsys.readouterr().out.split() == ["shoulder", "elbow"]
    assert main(["robots", "--joints", "nope"]) == 2
    assert "neither a file nor a known robot model" in capsys.readouterr().err
