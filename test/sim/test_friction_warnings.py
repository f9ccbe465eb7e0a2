"""Issue 39 item 4: a simulator whose friction overrides its URDF's says so once per joint, not once per arm built
(a quick demo on the so101 profile printed 210 lines), and a shipped profile, which overrides its URDF on purpose
with cited values, does not warn about itself at all. Real MuJoCo arms built from real profiles."""

from __future__ import annotations

import warnings

import numpy as np
from conftest import needs_erd

from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot.defaults import load_robot
from deadzone_id_ros.robot_configs import sim_config
from deadzone_id_ros.sim.arm import SimArm
from deadzone_id_ros.sim.config import FrictionSourceWarning


def _build(n: int, config) -> list[str]:
    """Messages of every FrictionSourceWarning while ``n`` arms are built from ``config``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FrictionSourceWarning)
        for _ in range(n):
            SimArm(config)
    return [str(w.message) for w in caught if issubclass(w.category, FrictionSourceWarning)]


@needs_erd
def test_the_shipped_so101_profile_does_not_warn_about_itself():
    robot = load_robot("so101")
    config = sim_config(robot)
    urdf = robot.description
    # the profile does override its URDF (else this test could not fail): friction and damping differ
    assert not np.allclose(config.frictionloss, urdf.friction) or not np.allclose(config.damping, urdf.damping)
    assert _build(3, config) == []


def test_a_user_profile_that_overrides_its_urdf_is_said_once_per_joint(tmp_path):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(default_urdf().read_text())
    profile = tmp_path / "arm.yaml"
    profile.write_text(
        f"name: myarm\nurdf: {urdf.name}\njoints: [joint1, joint2, joint3]\nsettings:\n"
        "  joint2:\n    frictionloss: {value: 0.123, source: measured on my arm}\n")
    robot = load_robot(str(profile))
    said = _build(4, sim_config(robot))
    assert len(said) == 1 and said[0].startswith("joint joint2: frictionloss = 0.123"), said
