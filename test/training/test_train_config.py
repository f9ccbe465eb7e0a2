"""TrainConfig: the bundled config/training.yaml loads; unknown keys and bad values are refused naming the field."""

from __future__ import annotations

import pytest

from deadzone_id_ros.errors import ConfigError
from deadzone_id_ros.training.config import TrainConfig, load_train_config


def test_bundled_config_loads_and_matches_the_defaults():
    cfg = load_train_config()
    assert cfg == TrainConfig()
    assert cfg.mlp.hidden_sizes == (256, 256)


def _write(tmp_path, body):
    path = tmp_path / "training.yaml"
    path.write_text("/**:\n  ros__parameters:\n" + "".join(f"    {line}\n" for line in body))
    return path


def test_file_values_are_used(tmp_path):
    cfg = load_train_config(_write(tmp_path, ["hidden_sizes: [8, 8, 8]", "activation: tanh", "seeds: 5"]))
    assert cfg.hidden_sizes == (8, 8, 8) and cfg.activation == "tanh" and cfg.seeds == 5


def test_unknown_key_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['learning_rat'\]"):
        load_train_config(_write(tmp_path, ["learning_rat: 0.01"]))


@pytest.mark.parametrize(
    "line, match",
    [
        ("activation: sigmoid", "activation = 'sigmoid' must be one of"),
        ("hidden_sizes: [64, -1]", r"hidden_sizes\[1\] = -1"),
        ("learning_rate: 0", "learning_rate = 0 must be a positive number"),
        ("batch_size: 10.5", "batch_size = 10.5 must be a positive integer"),
        ("split_fractions: [0.5, 0.5, 0.5]", "split_fractions = .* summing to 1"),
        ("efficiency_fractions: [0.0, 1.0]", r"efficiency_fractions = .* in \(0, 1\]"),
        ("progress: maybe", "progress = 'maybe' must be true or false"),
        ("dead_zone: {alpha: -0.1}", "dead_zone: dead_zone.alpha = -0.1 must be a non-negative number"),
        ("dead_zone: {absolute_thresholds: [0.1, -1.0]}", r"dead_zone.absolute_thresholds = \[0.1, -1.0\] must be"),
        ("dead_zone: {alhpa: 0.2}", r"dead_zone: unknown key\(s\) \['alhpa'\]"),
        ("alpha: 0.2", r"key\(s\) \['alpha'\] now live in the dead_zone block"),
    ],
)
def test_bad_values_name_the_field_and_file(tmp_path, line, match):
    path = _write(tmp_path, [line])
    with pytest.raises(ConfigError, match=match) as info:
        load_train_config(path)
    assert str(path) in str(info.value)


def test_dead_zone_block_reaches_the_config(tmp_path):
    from deadzone_id_ros.data.deadzone import DeadZoneConfig

    cfg = load_train_config(
        _write(tmp_path, ["dead_zone:", "  alpha: 0.2", "  absolute_thresholds: [0.05, 0.03, 0.04]"])
    )
    assert cfg.dead_zone == DeadZoneConfig(alpha=0.2, absolute_thresholds=(0.05, 0.03, 0.04))
    assert load_train_config().dead_zone == DeadZoneConfig()  # the bundled file: alpha 0.1, as in the paper


def test_overrides_are_validated():
    assert TrainConfig().with_overrides(seed=3, dead_zone=None).seed == 3
    with pytest.raises(ValueError, match="num_threads = 0"):
        TrainConfig().with_overrides(num_threads=0)


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_train_config("/nonexistent/training.yaml")
