"""bag_replay node parameters (sim/bag_replay_params.py): validation names the field."""

from __future__ import annotations

import pytest

from deadzone_id_ros.sim.bag_replay_params import BagReplayNodeConfig


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, r"bag = '' : the bag to replay is required"),
        (
            {"bag": "b", "command_joint_names": ("a", "a")},
            r"command_joint_names = \['a', 'a'\] must be non-empty and unique",
        ),
        ({"bag": "b", "start_delay": -1.0}, r"start_delay = -1.0 must be a non-negative number"),
        ({"bag": "b", "rate": 0.5}, r"rate = 0.5 must be in \[1, 10000\] Hz"),
    ],
)
def test_bag_replay_node_config_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BagReplayNodeConfig(**{"command_joint_names": ("j1", "j2"), **kwargs})
