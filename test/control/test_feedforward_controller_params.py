"""feedforward_controller node parameters (control/feedforward_controller_params.py): the file loader, node-only
config."""

from __future__ import annotations

import dataclasses

import pytest

from deadzone_id_ros.control.feedforward_controller_params import ControllerNodeConfig, load_controller_config
from deadzone_id_ros.errors import ConfigError
from deadzone_id_ros.robot_configs import bundled_controller_config

NAMES = ("joint1", "joint2", "joint3")


def test_parameter_file_loads_and_rejects_unknown_keys(tmp_path):
    cfg, node = load_controller_config()
    assert cfg == dataclasses.replace(bundled_controller_config(), **{})  # the file states the defaults
    assert node.command_joint_names == NAMES
    bad = tmp_path / "ffc.yaml"
    bad.write_text("/**:\n  ros__parameters:\n    mode: pd\n    gain: 3.0\n")
    with pytest.raises(ConfigError, match=r"ffc.yaml: unknown key\(s\) \['gain'\]"):
        load_controller_config(bad)
    bad.write_text("/**:\n  ros__parameters:\n    mode: fast\n")
    with pytest.raises(ConfigError, match="mode = 'fast' must be one of"):
        load_controller_config(bad)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"command_joint_names": ("a", "a")}, r"command_joint_names has duplicates: \['a', 'a'\]"),
     ({"diagnostics_rate": 0.0}, "diagnostics_rate = 0.0 must be a positive number"),
     ({"diagnostics_rate": 200.0}, "diagnostics_rate = 200.0 must be <= 100 Hz"),
     ({"debug_decimation": -1}, "debug_decimation = -1 must be a non-negative integer"),
     ({"sensing_worker": "yes"}, "sensing_worker = 'yes' must be true or false"),
     ({"sensing_worker_priority": 100}, r"sensing_worker_priority = 100 must be an integer in \[0, 99\]"),
     # a sensing worker may never preempt the control loop: below the loop's priority, or normal scheduling
     ({"sensing_worker_priority": 40}, "sensing_worker_priority = 40 must be below thread_priority = 0"),
     ({"sensing_worker_priority": 50, "thread_priority": 50}, "must be below thread_priority = 50")],
)
def test_node_config_validation_names_the_field(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ControllerNodeConfig(**{"command_joint_names": ("j1", "j2"), **kwargs})
