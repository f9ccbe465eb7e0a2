"""`deadzone-id param set`'s typing of a value's YAML text after the parameter's type now
(:func:`deadzone_id_ros.nodes.param_client.typed_value`): what rclpy's own typing (`ros2 param set`) refuses or
garbles is read as the user meant it, and what is no parameter value is refused by name."""

from __future__ import annotations

import pytest

from deadzone_id_ros.nodes.param_client import ParameterError, typed_value


@pytest.mark.parametrize(("text", "current", "expected"), [
    ("1", "DOUBLE", 1.0),                       # an integer for a float parameter (rclpy: "expected DOUBLE")
    ("2.0", "INTEGER", 2),                      # an integral float for an integer parameter
    ("2.5", "INTEGER", 2.5),                    # not integral: left for the node to refuse
    ("[400, 400.5, 1]", "NOT_SET", [400.0, 400.5, 1.0]),  # mixed list (rclpy: a STRING of 15 characters)
    ("[400, 400, 400]", "DOUBLE_ARRAY", [400.0, 400.0, 400.0]),
    ("[1, 2]", "INTEGER_ARRAY", [1, 2]),
    ("[1, 2]", "NOT_SET", [1, 2]),
    ("1", "STRING", "1"),                       # a string parameter takes the text as it is
    ("true", "STRING", "true"),
    ("measured", "STRING", "measured"),
    ("measured", "NOT_SET", "measured"),
    ("true", "BOOL", True),
    ("[a, b]", "STRING_ARRAY", ["a", "b"]),
    ("1e-3", "DOUBLE", 1e-3),                   # YAML 1.1 reads it as text
    ("[1e-3, 2]", "DOUBLE_ARRAY", [1e-3, 2.0]),
    ("[1, 2]", "STRING_ARRAY", ["1", "2"]),
    ("a: b: c", "NOT_SET", "a: b: c"),          # not YAML: the text (rclpy: a ScannerError traceback)
    ("", "NOT_SET", ""),
])
def test_values_are_typed_after_the_parameter(text, current, expected):
    value = typed_value("p", text, current)
    assert value == expected and type(value) is type(expected)
    if isinstance(expected, list):
        assert [type(v) for v in value] == [type(v) for v in expected]


@pytest.mark.parametrize(("text", "says"), [
    ("{a: 1}", "is not a parameter value"),     # a mapping (rclpy: TypeError)
    ("2024-01-01", "is not a parameter value"),  # a date
    ("[1, a]", "is not a parameter value"),     # numbers and strings mixed
    ("[]", "an empty list has no type"),
])
def test_what_is_no_parameter_value_is_refused_by_name(text, says):
    with pytest.raises(ParameterError, match=f"kp = .* {says}"):
        typed_value("kp", text, "DOUBLE_ARRAY")
