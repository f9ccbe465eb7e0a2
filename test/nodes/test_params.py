"""Node parameters declared from config dataclasses: types, int->float, empty-list defaults, validation."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import rclpy
from rclpy.node import Node
from rclpy.parameter import Parameter

from deadzone_id_ros.errors import ConfigError
from deadzone_id_ros.nodes._common import declare_dataclass_parameters, parameter_files


@dataclass(frozen=True)
class _Cfg:
    gain: float = 1.5
    gains: tuple[float, ...] = (1.0, 2.0)
    names: tuple[str, ...] = ()
    offsets: tuple[float, ...] = ()
    label: str = "x"

    def __post_init__(self) -> None:
        if self.gain < 0:
            raise ValueError(f"gain = {self.gain} must be >= 0")


@pytest.fixture
def context():
    ctx = rclpy.Context()
    rclpy.init(context=ctx)
    yield ctx
    rclpy.shutdown(context=ctx)


def _node(context, overrides):
    return Node(
        "params_probe", context=context, parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()]
    )


def test_defaults_integers_for_floats_and_empty_list_defaults(context):
    node = _node(context, {"gain": 3, "gains": [1, 2, 3], "names": ["a", "b"], "offsets": [0.5]})
    try:
        cfg = declare_dataclass_parameters(node, _Cfg, read_only=("names",))
        assert cfg == _Cfg(gain=3.0, gains=(1.0, 2.0, 3.0), names=("a", "b"), offsets=(0.5,))
        assert isinstance(cfg.gain, float) and all(isinstance(g, float) for g in cfg.gains)
        assert node.describe_parameter("names").read_only
    finally:
        node.destroy_node()


def test_unset_empty_list_stays_empty_and_bad_values_are_refused(context):
    node = _node(context, {})
    try:
        assert declare_dataclass_parameters(node, _Cfg) == _Cfg()
    finally:
        node.destroy_node()
    node = _node(context, {"gain": -1.0})
    try:
        with pytest.raises(ConfigError, match=r"node /params_probe parameters: gain = -1.0 must be >= 0"):
            declare_dataclass_parameters(node, _Cfg)
    finally:
        node.destroy_node()


def test_parameter_files_are_read_from_the_ros_arguments_only():
    args = ["prog", "--params-file", "own.yaml", "--ros-args", "-p", "--params-file:=x", "--params-file", "a.yaml",
            "-r", "__node:=n", "--params-file", "b.yaml", "--", "--params-file", "app.yaml", "--ros-args",
            "--log-level", "debug", "--params-file", "c.yaml"]
    assert parameter_files(args) == ["a.yaml", "b.yaml", "c.yaml"]
    assert parameter_files(["prog", "--params-file", "own.yaml"]) == []


def test_node_parameter_modules_import_without_rclpy():
    """Each node's parameters and loader sit beside the core config they load, usable without ROS (no rclpy)."""
    import subprocess
    import sys

    modules = ["control.feedforward_controller_params", "control.excitation_params", "sim.sim_arm_params",
               "sim.bag_replay_params"]
    code = ("import sys\n"
            f"for m in {modules!r}: __import__('deadzone_id_ros.' + m)\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('rclpy', 'rcl_interfaces'))\n"
            "assert not bad, bad\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_required_fields_left_unset_come_from_the_robot_profile_of_the_joints(context):
    """No dataclass default names a joint (issue 20): a node given no joints runs the bundled arm's profile; a node
    given another arm's joints gets that arm's URDF-derived per-joint values."""
    from deadzone_id_ros.control import ExcitationConfig
    from deadzone_id_ros.control.feedforward_controller_params import ControllerNodeConfig
    from deadzone_id_ros.robot_configs import bundled_excitation_config, load_robot

    node = _node(context, {})
    try:
        assert declare_dataclass_parameters(node, ExcitationConfig) == bundled_excitation_config()
    finally:
        node.destroy_node()
    so101 = load_robot("so101")
    names = list(so101.joint_names)
    node = _node(context, {"joint_names": names, "urdf_path": str(so101.urdf_path)})
    try:
        cfg = declare_dataclass_parameters(node, ExcitationConfig)
        assert cfg.joint_names == tuple(names) and len(cfg.amplitude) == len(cfg.acceleration_limit) == 5
        assert declare_dataclass_parameters(node, ControllerNodeConfig).command_joint_names == tuple(names)
    finally:
        node.destroy_node()
    node = _node(context, {"joint_names": ["nope"]})
    try:
        with pytest.raises(ConfigError, match=r"\['nope'\] not in the URDF"):
            declare_dataclass_parameters(node, ExcitationConfig)
    finally:
        node.destroy_node()


def test_each_parameter_gets_its_own_description_where_entries_share_a_line():
    """`deadzone-id param describe force_gain` on teleop_bilateral showed force_damping's text inside force_gain's,
    and force_damping none: two entries on one docstring line ("a: text.  b: text") are two descriptions. A period
    and two spaces before a word that is no field name stay inside the text."""
    from dataclasses import field

    from deadzone_id_ros.nodes._parameters import attribute_descriptions
    from deadzone_id_ros.teleop.node_config import TeleopNodeConfig

    @dataclass(frozen=True)
    class Shared:
        """Settings.

        Attributes:
            a: first (> 0).  b, c: shared text.  note: not a field, so part of c's text.
            d: fourth, continued
                on a deeper line.  e: fifth.
        """

        a: float = 1.0
        b: float = 1.0
        c: float = 1.0
        d: float = 1.0
        e: tuple[float, ...] = field(default=())

    assert attribute_descriptions(Shared) == {
        "a": "first (> 0).", "b": "shared text.  note: not a field, so part of c's text.",
        "c": "shared text.  note: not a field, so part of c's text.", "d": "fourth, continued on a deeper line.",
        "e": "fifth."}
    from deadzone_id_ros.data.recorder import RecorderConfig

    recorder = attribute_descriptions(RecorderConfig)  # "a / b / c: text" entries describe each of them
    assert all(recorder.get(f) for f in RecorderConfig.__dataclass_fields__), sorted(
        f for f in RecorderConfig.__dataclass_fields__ if not recorder.get(f))
    teleop = attribute_descriptions(TeleopNodeConfig)
    assert teleop["force_gain"] == "k_f (>= 0)." and teleop["force_damping"].startswith("common-mode damping")
    assert teleop["position_scale"].startswith("s_p") and teleop["force_scale"].startswith("s_f")
