"""The shared config validators (deadzone_id_ros/config.py): positive numbers and per-joint tuples."""

from __future__ import annotations

import math

import pytest

from deadzone_id_ros.config import check_joint_names, check_per_joint, check_positive


@pytest.mark.parametrize("value", [1, 0.5, 1e-12])
def test_check_positive_accepts_positive_numbers(value):
    check_positive("gain", value)


@pytest.mark.parametrize(
    ("value", "kwargs", "match"),
    [(0, {}, "gain = 0 must be a positive number"),
     (-1.0, {"allow_zero": True}, "gain = -1.0 must be a non-negative number"),
     (math.nan, {}, "gain = nan must be a positive number"),
     (math.inf, {}, "gain = inf must be a positive number"),
     (True, {}, "gain = True must be a positive number"),
     ("3", {}, "gain = '3' must be a positive number"),
     (2.0, {"integer": True}, "gain = 2.0 must be a positive integer"),
     (-1, {"integer": True, "allow_zero": True}, "gain = -1 must be a non-negative integer")],
)
def test_check_positive_refuses_with_name_and_value(value, kwargs, match):
    with pytest.raises(ValueError, match=match):
        check_positive("gain", value, **kwargs)


def test_check_positive_zero_only_with_allow_zero():
    check_positive("gain", 0, allow_zero=True)
    check_positive("steps", 0, integer=True, allow_zero=True)


def test_check_per_joint_length_and_sign():
    check_per_joint("kp", (1.0, 2, 3.0), 3)
    check_per_joint("damping", (0.0, 0.1), 2, sign="non-negative")
    check_per_joint("center", (-1.0, 0.0), 2, sign="any")
    with pytest.raises(ValueError, match="kp has 2 values but joint_names has 3"):
        check_per_joint("kp", (1.0, 2.0), 3)
    with pytest.raises(ValueError, match=r"kp\[1\] = 0.0 must be a finite positive number"):
        check_per_joint("kp", (1.0, 0.0), 2)
    with pytest.raises(ValueError, match=r"damping\[0\] = -0.1 must be a finite non-negative number"):
        check_per_joint("damping", (-0.1, 0.0), 2, sign="non-negative")
    with pytest.raises(ValueError, match=r"center\[1\] = inf must be a finite number"):
        check_per_joint("center", (0.0, math.inf), 2, sign="any")
    with pytest.raises(ValueError, match=r"center\[0\] = True must be a finite number"):
        check_per_joint("center", (True, 0.0), 2, sign="any")
    with pytest.raises(ValueError, match="sign = 'negative' must be"):
        check_per_joint("kp", (1.0,), 1, sign="negative")


def test_check_joint_names():
    assert check_joint_names(("a", "b")) == 2
    with pytest.raises(ValueError, match="command_joint_names is empty"):
        check_joint_names((), "command_joint_names")
    with pytest.raises(ValueError, match=r"joint_names has duplicates: \['a', 'a'\]"):
        check_joint_names(("a", "a"))


def test_exponent_floats_read_as_ros2_reads_them(tmp_path):
    """YAML 1.1 (PyYAML) reads ``3e-4`` as a string; ROS 2's parameter parser and YAML 1.2 read a float (rclpy PR
    1717). Every config the product loads goes through load_ros_parameters, so a training config and a node's
    parameter file both take the exponent form; quoted values stay strings."""
    from deadzone_id_ros.config import load_ros_parameters, load_yaml
    from deadzone_id_ros.training.config import load_train_config

    assert load_yaml("a: 3e-4\nb: 1E5\nc: '3e-4'\nd: 5\ne: -2.5e+1\nf: .5e-3") == {
        "a": 3e-4, "b": 1e5, "c": "3e-4", "d": 5, "e": -25.0, "f": 5e-4}
    train = tmp_path / "training.yaml"
    train.write_text("deadzone_id:\n  ros__parameters:\n    learning_rate: 3e-4\n    dead_zone:\n      alpha: 1e-1\n")
    cfg = load_train_config(train)
    assert cfg.learning_rate == 3e-4 and cfg.dead_zone.alpha == 0.1
    node = tmp_path / "controller.yaml"
    node.write_text("/**:\n  ros__parameters:\n    watchdog_timeout: 5e-2\n    torque_rate_limit: 2E3\n")
    params = load_ros_parameters(node, "feedforward_controller")
    assert params == {"watchdog_timeout": 0.05, "torque_rate_limit": 2000.0}
