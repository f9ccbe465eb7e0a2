"""Configuration of the feedforward controller and of the excitation node (frozen dataclasses, from YAML)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..config import check_joint_names, load_node_configs
from .trajectory import ExcitationConfig

__all__ = [
    "MODES",
    "ControllerConfig",
    "ControllerNodeConfig",
    "ExcitationNodeConfig",
    "load_controller_config",
    "load_excitation_config",
]

MODES = ("pd", "pd_dob", "ctc", "ctc_dob")
MODEL_KINDS = ("none", "rbd", "learned")


def _per_joint(name: str, values: tuple[float, ...], n: int, *, positive: bool = True) -> None:
    if len(values) != n:
        raise ValueError(f"{name} has {len(values)} values but joint_names has {n}")
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or (positive and v <= 0):
            raise ValueError(f"{name}[{i}] = {v!r} must be a finite{' positive' if positive else ''} number")


def _positive(name: str, v: object) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} = {v!r} must be a finite number > 0")


@dataclass(frozen=True)
class ControllerConfig:
    """The control law and its safety limits. Per-joint tuples follow ``joint_names``.

    Attributes:
        joint_names: (J,) controlled joints, by name (checked against the model and the URDF at start-up).
        urdf_path: URDF giving effort limits and the rbd model; "" = the bundled arm.
        mode: "pd" (Jn ddq_ref), "pd_dob" (+ DOB), "ctc" (model f(q, dq, ddq_ref)), "ctc_dob" (+ DOB).
        model: "none", "rbd" (URDF nominal rigid body) or "learned" (``model_path``). ctc modes need one; in pd modes
            a model, if given, only supplies the static torque the watchdog holds.
        model_path: learned model: artifact directory or .onnx file (with a .json of the same stem).
        model_friction: rbd only: add the URDF viscous and (smooth-sign) Coulomb friction.
        friction_velocity: velocity scale of the smooth sign tanh(dq / v) [rad/s].
        kp: (J,) position gain of the acceleration-level PD [1/s²].
        kd: (J,) velocity gain [1/s].
        nominal_inertia: (J,) Jn, the DOB's nominal inertia and the pd modes' inertia [kg·m²].
        dob_cutoff: (J,) g, the DOB low-pass cutoff [rad/s].
        dob_discretization: "zoh" (exact for the held command) or "bilinear".
        control_rate: nominal loop rate [Hz]; the law uses measured stamps, this only sets the first period.
        effort_limit_scale: fraction of the URDF effort limit the command may reach, in (0, 1].
        torque_rate_limit: (J,) largest command change per second [N·m/s].
        watchdog_timeout: no joint state for this long -> hold the static torque [s].
        watchdog_hold_time: after holding this long -> zero torque [s].
    """

    joint_names: tuple[str, ...] = ("joint1", "joint2", "joint3")
    urdf_path: str = ""
    mode: str = "pd_dob"
    model: str = "rbd"
    model_path: str = ""
    model_friction: bool = False
    friction_velocity: float = 0.01
    kp: tuple[float, ...] = (400.0, 400.0, 400.0)
    kd: tuple[float, ...] = (40.0, 40.0, 40.0)
    nominal_inertia: tuple[float, ...] = (0.03, 0.09, 0.011)
    dob_cutoff: tuple[float, ...] = (150.0, 150.0, 150.0)
    dob_discretization: str = "zoh"
    control_rate: float = 1000.0
    effort_limit_scale: float = 1.0
    torque_rate_limit: tuple[float, ...] = (400.0, 1000.0, 500.0)
    watchdog_timeout: float = 0.05
    watchdog_hold_time: float = 0.5

    def __post_init__(self) -> None:
        n = check_joint_names(self.joint_names)
        if self.mode not in MODES:
            raise ValueError(f"mode = {self.mode!r} must be one of {list(MODES)}")
        if self.model not in MODEL_KINDS:
            raise ValueError(f"model = {self.model!r} must be one of {list(MODEL_KINDS)}")
        if self.mode.startswith("ctc") and self.model == "none":
            raise ValueError(f"mode = {self.mode!r} needs a model ('rbd' or 'learned'), got model = 'none'")
        if self.model == "learned" and not self.model_path:
            raise ValueError("model = 'learned' needs model_path")
        if not isinstance(self.model_friction, bool):
            raise ValueError(f"model_friction = {self.model_friction!r} must be true or false")
        for name in ("kp", "kd", "nominal_inertia", "dob_cutoff", "torque_rate_limit"):
            _per_joint(name, getattr(self, name), n)
        for name in ("friction_velocity", "control_rate", "watchdog_timeout", "watchdog_hold_time"):
            _positive(name, getattr(self, name))
        if self.dob_discretization not in ("zoh", "bilinear"):
            raise ValueError(f"dob_discretization = {self.dob_discretization!r} must be 'zoh' or 'bilinear'")
        _positive("effort_limit_scale", self.effort_limit_scale)
        if self.effort_limit_scale > 1:
            raise ValueError(f"effort_limit_scale = {self.effort_limit_scale} must be <= 1")

    @property
    def uses_dob(self) -> bool:
        """True in the modes with a disturbance observer."""
        return self.mode.endswith("_dob")

    @property
    def uses_model(self) -> bool:
        """True in the computed-torque modes (the model gives the feedforward)."""
        return self.mode.startswith("ctc")


@dataclass(frozen=True)
class ControllerNodeConfig:
    """ROS-side settings of the feedforward_controller node.

    Attributes:
        command_joint_names: (J,) joint order of /effort_controller/commands (the effort controller's joint list);
            must hold the same joints as ``joint_names`` (any order; mapped by name).
        diagnostics_rate: /diagnostics publication rate [Hz].
        debug_decimation: publish ~/torque_parts every this many ticks; 0 disables it.
        stamped_command: also publish ~/command_stamped (sensor_msgs/JointState: the header stamp of the
            /joint_states message each command answers, effort = the command) for latency measurement.
    """

    command_joint_names: tuple[str, ...] = ("joint1", "joint2", "joint3")
    diagnostics_rate: float = 5.0
    debug_decimation: int = 10
    stamped_command: bool = False

    def __post_init__(self) -> None:
        if len(set(self.command_joint_names)) != len(self.command_joint_names):
            raise ValueError(f"command_joint_names has duplicates: {list(self.command_joint_names)}")
        _positive("diagnostics_rate", self.diagnostics_rate)
        if self.diagnostics_rate > 100:
            raise ValueError(f"diagnostics_rate = {self.diagnostics_rate} must be <= 100 Hz")
        if isinstance(self.debug_decimation, bool) or not isinstance(self.debug_decimation, int) or self.debug_decimation < 0:
            raise ValueError(f"debug_decimation = {self.debug_decimation!r} must be an integer >= 0")
        if not isinstance(self.stamped_command, bool):
            raise ValueError(f"stamped_command = {self.stamped_command!r} must be true or false")


@dataclass(frozen=True)
class ExcitationNodeConfig:
    """ROS-side settings of the excitation node.

    Attributes:
        start_delay: the trajectory starts this long after the node has its start position [s] (>= 0).
        publish_period: a new JointTrajectory window is published this often [s] (> 0).
        horizon: each window covers this much of the future [s] (> publish_period).
    """

    start_delay: float = 2.0
    publish_period: float = 0.5
    horizon: float = 2.0

    def __post_init__(self) -> None:
        if isinstance(self.start_delay, bool) or not isinstance(self.start_delay, (int, float)) or self.start_delay < 0:
            raise ValueError(f"start_delay = {self.start_delay!r} must be >= 0")
        _positive("publish_period", self.publish_period)
        _positive("horizon", self.horizon)
        if self.horizon <= self.publish_period:
            raise ValueError(f"horizon = {self.horizon} must be > publish_period = {self.publish_period}")


def load_controller_config(
    path: str | Path | None = None, overrides: dict | None = None
) -> tuple[ControllerConfig, ControllerNodeConfig]:
    """Load the controller configs from a parameter file (default: the bundled config/feedforward_controller.yaml).

    Raises:
        FileNotFoundError: the file does not exist.
        ConfigError: malformed YAML, an unknown key or a bad value (names the file and key).
    """
    return load_node_configs(ControllerConfig, ControllerNodeConfig, "feedforward_controller",
                             "feedforward_controller.yaml", path, overrides)


def load_excitation_config(
    path: str | Path | None = None, overrides: dict | None = None
) -> tuple[ExcitationConfig, ExcitationNodeConfig]:
    """Load the excitation configs from a parameter file (default: the bundled config/excitation.yaml).

    Raises:
        FileNotFoundError: the file does not exist.
        ConfigError: malformed YAML, an unknown key or a bad value (names the file and key).
    """
    return load_node_configs(ExcitationConfig, ExcitationNodeConfig, "excitation", "excitation.yaml", path, overrides)
