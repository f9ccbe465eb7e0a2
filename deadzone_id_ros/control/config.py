"""Configuration of the control law (frozen dataclass). The node-only settings and the parameter-file loaders are
beside it (ROS-free, used by the nodes): :mod:`deadzone_id_ros.control.feedforward_controller_params` and
:mod:`deadzone_id_ros.control.excitation_params`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..config import check_joint_names, check_per_joint, check_positive
from ..robot.reduced import locked_positions

if TYPE_CHECKING:
    from ..robot import RobotDescription

__all__ = ["DEFAULT_CONTROL_RATE", "DOB_DISCRETIZATIONS", "FEEDFORWARD_SOURCES", "FEEDFORWARD_VELOCITIES",
           "FIXED_FIELDS", "MODES", "ControlMode", "ControllerConfig", "check_fixed_fields", "dob_cutoff_limit"]

#: Where the feedforward torque comes from: "nominal_inertia" (tau_ff = Jn ddq_ref) or "model" (tau_ff =
#: f(q, v, ddq_ref), computed torque with the configured model; v per :data:`FEEDFORWARD_VELOCITIES`).
FEEDFORWARD_SOURCES = ("nominal_inertia", "model")

#: The velocity the model's feedforward is evaluated at (:attr:`ControllerConfig.feedforward_velocity`): "desired"
#: (the reference's dq_d) or "measured" (the state's dq).
FEEDFORWARD_VELOCITIES = ("desired", "measured")

#: How the DOB's low-pass is discretized (:attr:`ControllerConfig.dob_discretization`).
DOB_DISCRETIZATIONS = ("zoh", "bilinear")


@dataclass(frozen=True)
class ControlMode:
    """The structure of the control law as separate fields.

    Attributes:
        feedforward: one of :data:`FEEDFORWARD_SOURCES`.  dob: with the disturbance observer.

    The parameter files, the CLI and the launch files name a mode by its string (:attr:`name`: ``pd``, ``pd_dob``,
    ``ctc``, ``ctc_dob``); :meth:`parse` is the one place such a string is read.

    Raises:
        ValueError: an unknown feedforward source or a non-bool ``dob``.
    """

    feedforward: str
    dob: bool

    def __post_init__(self) -> None:
        if self.feedforward not in FEEDFORWARD_SOURCES:
            raise ValueError(f"feedforward = {self.feedforward!r} must be one of {list(FEEDFORWARD_SOURCES)}")
        if not isinstance(self.dob, bool):
            raise ValueError(f"dob = {self.dob!r} must be true or false")

    @property
    def name(self) -> str:
        """The mode's name in parameter files (``pd``, ``pd_dob``, ``ctc``, ``ctc_dob``)."""
        return next(name for name, mode in _MODE_NAMES.items() if mode == self)

    @classmethod
    def parse(cls, text: str) -> ControlMode:
        """The mode a parameter string names (one of :data:`MODES`).

        Raises:
            ValueError: an unknown name; the message lists the known ones.
        """
        try:
            return _MODE_NAMES[text]
        except (KeyError, TypeError):
            raise ValueError(f"mode = {text!r} must be one of {list(MODES)}") from None


_MODE_NAMES = {"pd": ControlMode("nominal_inertia", False), "pd_dob": ControlMode("nominal_inertia", True),
               "ctc": ControlMode("model", False), "ctc_dob": ControlMode("model", True)}
#: The mode names accepted in parameter files and on the command line (:meth:`ControlMode.parse`).
MODES = tuple(_MODE_NAMES)
MODEL_KINDS = ("none", "rbd", "learned")
#: Control rate where neither the configuration nor a robot profile gives one [Hz].
DEFAULT_CONTROL_RATE = 1000.0
# Fields of ControllerConfig fixed for the controller's life (the model and the joints are built from them).
FIXED_FIELDS = ("joint_names", "urdf_path", "mode", "model", "model_path", "model_friction", "friction_velocity",
                "control_rate", "armature", "frictionloss", "damping", "effort_limit", "locked_joints")


def dob_cutoff_limit(control_rate: float, discretization: str) -> tuple[float, str]:
    """The largest DOB cutoff [rad/s] the nominal period T = 1 / control_rate [s] allows, and why.

    - Nyquist: g < pi / T. Above it the observer's bandwidth lies beyond what samples at T can represent: on the
      simulated arm the command then flips sign every tick (issue 12).
    - zoh (:mod:`.dob`): the pole ``a = exp(-g T)`` is in (0, 1) for every g > 0, so the discretization itself adds
      no lower bound; the Nyquist bound applies.
    - bilinear: the pole ``a = (2 - g T) / (2 + g T)`` turns negative for g T > 2 (the estimate alternates sign each
      tick), a bound below Nyquist: g < 2 / T.

    Args:
        control_rate: 1 / T [Hz] (> 0).
        discretization: "zoh" or "bilinear".

    Returns:
        (limit [rad/s], the reason, for error messages).
    """
    nyquist = math.pi * control_rate
    if discretization == "bilinear":
        return 2.0 * control_rate, (f"with dob_discretization 'bilinear' the pole (2 - g T) / (2 + g T) turns negative "
                                    f"above 2 * control_rate = 2 / T (below the Nyquist limit pi * control_rate = "
                                    f"{nyquist:.6g} rad/s)")
    return nyquist, (f"the Nyquist limit pi * control_rate = pi / T for control_rate {control_rate:g} Hz "
                     "(above it the observer asks for a bandwidth the samples cannot represent)")


@dataclass(frozen=True)
class ControllerConfig:
    """The control law and its safety limits. Per-joint tuples follow ``joint_names``.

    ``joint_names`` and the per-joint tuples have no default (keyword-only, required): build the config for a robot
    from its profile with :func:`deadzone_id_ros.robot_configs.controller_config` (the bundled arm:
    :func:`~deadzone_id_ros.robot_configs.bundled_controller_config`).

    Attributes:
        joint_names: (J,) controlled joints, by name (checked against the model and the URDF at start-up).
        urdf_path: URDF giving effort limits and the rbd model; "" = the bundled arm.
        mode: "pd" (Jn ddq_ref), "pd_dob" (+ DOB), "ctc" (model f(q, v, ddq_ref)), "ctc_dob" (+ DOB): the name of a
            :class:`ControlMode` (:attr:`control_mode` holds its fields).
        model: "none", "rbd" (URDF nominal rigid body) or "learned" (``model_path``). ctc modes need one; in pd modes
            a model, if given, only supplies the static torque the watchdog holds.
        model_path: learned model: artifact directory, or an .onnx file in the project format (models.onnx_format).
        model_friction: rbd only: add the URDF viscous and (smooth-sign) Coulomb friction (``damping`` and
            ``frictionloss`` below where given).
        friction_velocity: velocity scale of the smooth sign tanh(dq / v) [rad/s].
        feedforward_velocity: the velocity the ctc modes' model is evaluated at: "desired" (the default,
            ``f(q, dq_d, ddq_ref)``: the friction it predicts flips with the reference, at the reversal, and stays
            off while the reference holds still) or "measured" (``f(q, dq, ddq_ref)``: the friction follows the
            measured velocity, so it flips only after the joint has broken away). Why the default: docs/controller.md,
            "The velocity the model sees". Live: a change takes effect at the next tick, under the rate limit.
        kp: (J,) position gain of the acceleration-level PD [1/s²].
        kd: (J,) velocity gain [1/s].
        nominal_inertia: (J,) Jn, the DOB's nominal inertia and the pd modes' inertia [kg·m²].
        dob_cutoff: (J,) g, the DOB low-pass cutoff [rad/s].
        dob_discretization: "zoh" (exact for the held command) or "bilinear".
        armature: rbd only: (J,) rotor inertia the nominal rigid-body model adds to the diagonal of its mass matrix
            [kg·m²] (URDFs carry none; a geared servo's reflected rotor inertia can exceed its links'); empty (the
            default): the robot profile's ``armature`` (none without one).
        frictionloss: rbd only: (J,) Coulomb friction of the nominal model,
            ``frictionloss * tanh(dq / friction_velocity)`` [N·m]; None (the default): the robot profile's
            ``frictionloss`` setting where it gives one, else none (``model_friction`` true: the URDF's).
            Given, the model includes it whatever ``model_friction`` says.
        damping: rbd only: (J,) viscous friction of the nominal model, ``damping * dq`` [N·m·s/rad]; None: as for
            ``frictionloss``.
        locked_joints: ``"urdf_joint=value"`` entries: where the URDF joints outside ``joint_names`` are locked in
            the nominal rigid-body model and the sensing estimators (a robot profile's ``locked``, where the
            simulator welds them; unset: the profile's; the rest at 0).
        control_rate: nominal loop rate [Hz]; the law uses measured stamps, this only sets the first period. 0 (the
            default): the robot profile's ``control_rate`` (:data:`DEFAULT_CONTROL_RATE` without one).
        effort_limit: (J,) the actuators' effort limit [N·m]; empty (the default): the robot profile's (its
            ``effort_limit`` setting, else the URDF's ``<limit effort>``).
        effort_limit_scale: fraction of the effort limit the command may reach, in (0, 1].
        torque_rate_limit: (J,) largest command change per second [N·m/s].
        watchdog_timeout: no joint state for this long -> hold the static torque [s].
        watchdog_hold_time: after holding this long -> zero torque [s].
        rate_limit_max_period: the longest period the torque-rate limit allows for [s]: a command changes by at most
            ``torque_rate_limit * min(dt, rate_limit_max_period)`` per tick, so after a gap in the stamps, a stamp
            jump, the watchdog or a fault the command still ramps.
        tracking_error_limit: largest |q_d - q| of any joint before the safe state [rad] (:mod:`.safety`).
        position_limit_margin: tolerated distance beyond the URDF position limits before the safe state [rad].
        fault_hold_time: in the safe state, hold the static torque this long, then zero torque [s].

    Raises:
        ValueError: a bad value; the message names the field, the value and the bound it breaks. ``dob_cutoff`` must
            stay below the Nyquist limit ``pi * control_rate`` (:func:`dob_cutoff_limit`; lower for bilinear).
    """

    joint_names: tuple[str, ...] = field(kw_only=True)
    urdf_path: str = ""
    mode: str = "pd_dob"
    model: str = "rbd"
    model_path: str = ""
    model_friction: bool = False
    friction_velocity: float = 0.01
    feedforward_velocity: str = "desired"
    kp: tuple[float, ...] = field(kw_only=True)
    kd: tuple[float, ...] = field(kw_only=True)
    nominal_inertia: tuple[float, ...] = field(kw_only=True)
    dob_cutoff: tuple[float, ...] = field(kw_only=True)
    dob_discretization: str = "zoh"
    armature: tuple[float, ...] = ()
    frictionloss: tuple[float, ...] | None = None
    damping: tuple[float, ...] | None = None
    locked_joints: tuple[str, ...] = ()
    control_rate: float = 0.0
    effort_limit: tuple[float, ...] = ()
    effort_limit_scale: float = 1.0
    torque_rate_limit: tuple[float, ...] = field(kw_only=True)
    watchdog_timeout: float = 0.05
    watchdog_hold_time: float = 0.5
    rate_limit_max_period: float = 0.002
    tracking_error_limit: float = 0.5
    position_limit_margin: float = 0.05
    fault_hold_time: float = 0.5

    def __post_init__(self) -> None:
        n = check_joint_names(self.joint_names)
        control = ControlMode.parse(self.mode)
        if self.model not in MODEL_KINDS:
            raise ValueError(f"model = {self.model!r} must be one of {list(MODEL_KINDS)}")
        if control.feedforward == "model" and self.model == "none":
            raise ValueError(f"mode = {self.mode!r} needs a model ('rbd' or 'learned'), got model = 'none'")
        if self.model == "learned" and not self.model_path:
            raise ValueError("model = 'learned' needs model_path")
        if self.feedforward_velocity not in FEEDFORWARD_VELOCITIES:
            raise ValueError(f"feedforward_velocity = {self.feedforward_velocity!r} must be one of "
                             f"{list(FEEDFORWARD_VELOCITIES)}")
        if not isinstance(self.model_friction, bool):
            raise ValueError(f"model_friction = {self.model_friction!r} must be true or false")
        for name in ("kp", "kd", "nominal_inertia", "dob_cutoff", "torque_rate_limit"):
            check_per_joint(name, getattr(self, name), n)
        if self.control_rate == 0:
            object.__setattr__(self, "control_rate", DEFAULT_CONTROL_RATE)
        if self.effort_limit:
            check_per_joint("effort_limit", self.effort_limit, n)
        locked_positions(self.locked_joints)
        for name in ("armature", "frictionloss", "damping"):
            if getattr(self, name):
                check_per_joint(name, getattr(self, name), n, sign="non-negative")
        for name in ("friction_velocity", "control_rate", "watchdog_timeout", "watchdog_hold_time",
                     "rate_limit_max_period", "fault_hold_time", "tracking_error_limit"):
            check_positive(name, getattr(self, name))
        check_positive("position_limit_margin", self.position_limit_margin, allow_zero=True)
        if self.dob_discretization not in DOB_DISCRETIZATIONS:
            raise ValueError(f"dob_discretization = {self.dob_discretization!r} must be one of "
                             f"{list(DOB_DISCRETIZATIONS)}")
        limit, why = dob_cutoff_limit(self.control_rate, self.dob_discretization)
        for i, g in enumerate(self.dob_cutoff):
            if g >= limit:
                raise ValueError(f"dob_cutoff[{i}] = {g!r} rad/s must be below {limit:.6g} rad/s: {why}")
        check_positive("effort_limit_scale", self.effort_limit_scale)
        if self.effort_limit_scale > 1:
            raise ValueError(f"effort_limit_scale = {self.effort_limit_scale} must be <= 1")

    def effort_limits(self, description: RobotDescription) -> np.ndarray:
        """(J,) the command clamp [N·m]: ``effort_limit_scale`` times :attr:`effort_limit`, or times the URDF's
        ``<limit effort>`` (``description``, in ``joint_names`` order) where the config gives none
        (:meth:`~deadzone_id_ros.robot.RobotDescription.effort_limits`).

        Raises:
            RobotDescriptionError: :attr:`effort_limit` above the URDF's for a joint (names it and both values), or
                no positive limit for a joint.
        """
        return description.effort_limits(self.effort_limit, "controller effort_limit") * self.effort_limit_scale

    @property
    def control_mode(self) -> ControlMode:
        """:attr:`mode` as separate fields (feedforward source, DOB on/off)."""
        return ControlMode.parse(self.mode)

    @property
    def uses_dob(self) -> bool:
        """True in the modes with a disturbance observer."""
        return self.control_mode.dob

    @property
    def uses_model(self) -> bool:
        """True in the computed-torque modes (the model gives the feedforward)."""
        return self.control_mode.feedforward == "model"


def check_fixed_fields(old: ControllerConfig, new: ControllerConfig) -> None:
    """Check that ``new`` keeps every field of :data:`FIXED_FIELDS` of the running controller's ``old`` config.

    Raises:
        ValueError: a fixed field differs (names the first one; the controller must be restarted for it).
    """
    for name in FIXED_FIELDS:
        if getattr(new, name) != getattr(old, name):
            raise ValueError(f"{name} cannot change while the controller runs (restart it with the new value)")
