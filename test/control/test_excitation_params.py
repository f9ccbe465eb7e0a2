"""excitation node parameters (control/excitation_params.py): the bundled file, the loader's errors, node-only
config."""

from __future__ import annotations

import pytest

from deadzone_id_ros.control import ExcitationConfig
from deadzone_id_ros.control.excitation_params import ExcitationNodeConfig, load_excitation_config
from deadzone_id_ros.errors import ConfigError


def test_bundled_file_loads_into_both_configs(tmp_path):
    exc, node = load_excitation_config()
    assert isinstance(exc, ExcitationConfig) and exc.joint_names == ("joint1", "joint2", "joint3")
    assert isinstance(node, ExcitationNodeConfig)
    exc, node = load_excitation_config(overrides={"seed": 7, "horizon": 3.0})
    assert exc.seed == 7 and node.horizon == 3.0
    bad = tmp_path / "exc.yaml"
    bad.write_text("/**:\n  ros__parameters:\n    horizon: 0.1\n    publish_period: 0.5\n")
    with pytest.raises(ConfigError, match=r"exc.yaml: horizon = 0.1 must be > publish_period = 0.5"):
        load_excitation_config(bad)
    bad.write_text("/**:\n  ros__parameters:\n    horizonn: 1.0\n")
    with pytest.raises(ConfigError, match=r"exc.yaml: unknown key\(s\) \['horizonn'\]"):
        load_excitation_config(bad)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"start_delay": -1.0}, "start_delay = -1.0 must be a non-negative number"),
     ({"publish_period": 0}, "publish_period = 0 must be a positive number"),
     ({"horizon": float("nan")}, "horizon = nan must be a positive number")],
)
def test_node_config_validation_names_the_field(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ExcitationNodeConfig(**kwargs)
