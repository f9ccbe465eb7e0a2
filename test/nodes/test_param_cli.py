"""`deadzone-id param list|get|set|describe` on a feedforward_controller process over DDS, as a user without the ros2
CLI changes a live parameter (docs/controller.md, "The velocity the model sees"): the value is applied and shown on
/diagnostics, a bad value or a read-only parameter is refused with the node's reason (and logged by the node), a
string parameter says its allowed values, and a node that is not there is answered with exit 2."""

from __future__ import annotations

import subprocess

import pytest
from conftest import REPO, executable, wait_until
from diagnostic_msgs.msg import DiagnosticArray

pytestmark = pytest.mark.integration

PARAMS = str(REPO / "config" / "feedforward_controller.yaml")


def _param(*args: str, timeout: str = "60") -> subprocess.CompletedProcess:
    """`deadzone-id param --timeout 60 ARGS` (each step returns as soon as the node answers: 60 s only bounds a busy
    machine's worst case)."""
    return subprocess.run([executable("deadzone-id"), "param", "--timeout", timeout, *args], capture_output=True,
                          text=True, timeout=600)


def test_param_cli_sets_a_live_parameter_and_refuses_bad_values_with_the_reason(processes, ros_probe):
    page = (REPO / "docs" / "controller.md").read_text()
    assert "`deadzone-id param set feedforward_velocity measured`" in page  # the documented command is this one
    diagnostics = ros_probe.listen("/diagnostics", DiagnosticArray, qos=10, keep=lambda m: m)
    ctl = processes.start([executable("feedforward_controller"), "--ros-args", "--params-file", PARAMS,
                           "-p", "mode:=ctc_dob"], "ffc_param")

    listed = _param("list")
    assert listed.returncode == 0, listed.stderr + processes.log(ctl)
    assert {"feedforward_velocity", "kp", "mode"} <= set(listed.stdout.split())

    described = _param("describe", "feedforward_velocity", "no_such_parameter")
    assert described.returncode == 2 and "has no parameter 'no_such_parameter'" in described.stderr, described.stderr
    described = _param("describe", "feedforward_velocity", "mode", "kp")
    assert described.returncode == 0, described.stderr
    lines = described.stdout.splitlines()
    assert lines[0] == "feedforward_velocity: STRING, live; one of: desired, measured", described.stdout
    assert any(line.startswith("mode: STRING, read-only; one of: ") and "ctc_dob" in line for line in lines)
    assert any(line.startswith("kp: ") and line.endswith("live; [0, 1e+07]") for line in lines), described.stdout

    got = _param("get", "feedforward_velocity", "mode")
    assert got.stdout.splitlines() == ["feedforward_velocity: 'desired'", "mode: 'ctc_dob'"], got.stdout

    applied = _param("set", "feedforward_velocity", "measured")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "applied" in applied.stdout
    assert _param("get", "feedforward_velocity").stdout.strip() == "feedforward_velocity: 'measured'"
    assert wait_until(lambda: "parameters applied: feedforward_velocity = 'measured'" in processes.log(ctl), 30.0), \
        processes.log(ctl)

    def shown() -> bool:  # /diagnostics names the velocity the model sees now
        return any(kv.key == "feedforward_velocity" and kv.value == "measured"
                   for m in diagnostics for s in m.status for kv in s.values)

    assert wait_until(lambda: (ros_probe.spin(0.1), shown())[1], 30.0), "diagnostics never said 'measured'"

    bad = _param("set", "feedforward_velocity", "fast")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "refused: feedforward_velocity = 'fast' must be one of ['desired', 'measured']" in bad.stdout
    assert wait_until(lambda: "parameters refused: feedforward_velocity = 'fast'" in processes.log(ctl), 30.0), \
        processes.log(ctl)
    read_only = _param("set", "mode", "pd")
    assert read_only.returncode == 1 and "refused" in read_only.stdout, read_only.stdout + read_only.stderr
    assert _param("get", "feedforward_velocity", "mode").stdout.splitlines() == [
        "feedforward_velocity: 'measured'", "mode: 'ctc_dob'"]
    kp = _param("set", "kp", "[400, 400.5, 400]")  # a mixed list: floats (rclpy alone would send a string)
    assert kp.returncode == 0 and _param("get", "kp").stdout.strip() == "kp: [400.0, 400.5, 400.0]", kp.stdout
    scale = _param("--node", "feedforward_controller", "set", "effort_limit_scale", "1")  # no slash; 1 for a float
    assert scale.returncode == 0 and "applied" in scale.stdout, scale.stdout + scale.stderr
    garbled = _param("set", "kp", "a: b: c")  # not YAML, not numbers: refused by the node, naming the parameter
    assert garbled.returncode == 1 and "kp = 'a: b: c' is a string" in garbled.stdout, garbled.stdout + garbled.stderr
    mapping = _param("set", "kp", "{a: 1}")
    assert mapping.returncode == 2 and "is not a parameter value" in mapping.stderr, mapping.stderr
    unknown = _param("set", "no_such_parameter", "1")
    assert unknown.returncode == 2 and "has no parameter 'no_such_parameter'" in unknown.stderr, unknown.stderr
    usage = _param("set", "kp")
    assert usage.returncode == 2 and "NAME VALUE" in usage.stderr, usage.stderr
    assert processes.stop(ctl) == 0

    gone = _param("--node", "/no_such_node", "get", "kp", timeout="1")
    assert gone.returncode == 2 and "no parameter services of /no_such_node" in gone.stderr, gone.stderr
