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
