"""sim_arm node parameters (sim/sim_arm_params.py): the bundled file, the loader's errors, the timing config."""

from __future__ import annotations

import pytest

from deadzone_id_ros.errors import ConfigError
from deadzone_id_ros.robot_configs import bundled_sim_config
from deadzone_id_ros.sim.sim_arm_params import SimArmNodeConfig, load_sim_config


def test_default_config_file_loads_and_matches_dataclass_defaults():
    sim, node = load_sim_config()
    assert sim == bundled_sim_config()
    assert node.publish_rate == 1000.0 and node.clock_mode == "wall"


def _write_params(tmp_path, body: str):
    path = tmp_path / "sim.yaml"
    path.write_text("/**:\n  ros__parameters:\n" + body)
    return path


def test_negative_friction_is_refused_naming_file_and_key(tmp_path):
    path = _write_params(tmp_path, "    frictionloss: [0.1, -0.2, 0.1]\n")
    with pytest.raises(ConfigError, match=r"sim\.yaml.*frictionloss\[1\] = -0.2 must be a finite non-negative number"):
        load_sim_config(path)


def test_unknown_key_is_refused(tmp_path):
    path = _write_params(tmp_path, "    frictionlos: [0.1, 0.2, 0.1]\n")
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['frictionlos'\]"):
        load_sim_config(path)


def test_malformed_yaml_is_refused(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("/**:\n  ros__parameters: [unclosed\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: malformed YAML"):
        load_sim_config(path)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"lockstep": True}, "lockstep = true needs clock_mode = 'sim'"),
     ({"command_timeout": 0.0}, "command_timeout = 0.0 must be a positive number"),
     ({"real_time_factor": float("inf")}, "real_time_factor = inf must be a positive number"),
     ({"publish_rate": 0.5}, r"publish_rate = 0.5 must be in \[1, 10000\] Hz"),
     ({"clock_mode": "ros"}, "clock_mode = 'ros' must be 'wall' or 'sim'")],
)
def test_node_config_validation_names_the_field(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SimArmNodeConfig(**kwargs)
