"""Configuration of the control law (frozen dataclass). The node-only settings and the parameter-file loaders are
beside their nodes: :mod:`deadzone_id_ros.nodes.feedforward_controller_params` and
:mod:`deadzone_id_ros.nodes.excitation_params`."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import check_joint_names, check_per_joint, check_positive

__all__ = ["MODES", "ControllerConfig"]

MODES = ("pd", "pd_dob", "ctc", "ctc_dob")
MODEL_KINDS = ("none", "rbd", "learned")


@dataclass(frozen=True)
class ControllerConfig:
    """The control law and its safety limits. Per-joint tuples follow ``joint_names``.

    Attributes:
        joint_names: (J,) controlled joints, by name (checked against the model and the URDF at start-up).
        urdf_path: URDF giving effort limits and the rbd model; "" = the bundled arm.
        mode: "pd" (Jn ddq_ref), "pd_dob" (+ DOB), "ctc" (model f(q, dq, ddq_ref)), "ctc_dob" (+ DOB).
        model: "none", "rbd" (URDF nominal rigid body) or "learned" (``model_path``). ctc modes need one; in pd modes
            a model, if given, only supplies the static torque the watchdog holds.
        model_path: learned model: artifact directory, or an .onnx file in the project format (models.onnx_format).
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
            check_per_joint(name, getattr(self, name), n)
        for name in ("friction_velocity", "control_rate", "watchdog_timeout", "watchdog_hold_time"):
            check_positive(name, getattr(self, name))
        if self.dob_discretization not in ("zoh", "bilinear"):
            raise ValueError(f"dob_discretization = {self.dob_discretization!r} must be 'zoh' or 'bilinear'")
        check_positive("effort_limit_scale", self.effort_limit_scale)
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
