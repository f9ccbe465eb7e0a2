"""Settings of the standalone force_estimator node (ROS-free, so they load and validate without rclpy)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..config import check_joint_names

__all__ = ["ForceEstimatorConfig"]


@dataclass(frozen=True)
class ForceEstimatorConfig:
    """What the force_estimator node estimates with; the sensing itself is :class:`~.sensor.SensingConfig`.

    Has the fields of :class:`deadzone_id_ros.models.runtime.ModelSettings`, so :func:`~deadzone_id_ros.models.runtime
    .load_model` builds its model. Unset joints, URDF, nominal inertia and command order come from the ``robot``
    profile.

    Attributes:
        joint_names: (J,) joints, in the order of every published array.
        command_joint_names: (J,) order of the commands topic (the effort controller's joint list).
        urdf_path: the URDF ("" = the bundled arm).
        model: "rbd" (the URDF's rigid body) or "learned" (``model_path``); "none" estimates -tau.
        model_path: "learned": an artifact directory or .onnx.
        model_friction: "rbd": add the URDF's friction.  friction_velocity: [rad/s] > 0.
        armature, frictionloss, damping: (J,) rotor inertia [kg·m²] (empty: none), Coulomb [N·m] and viscous
            [N·m·s/rad] friction (None: none; the URDF's for "momentum" and "dob") the nominal model adds ("rbd",
            and the "momentum" and "dob" estimators' rigid body), as
            :class:`~deadzone_id_ros.control.ControllerConfig` takes them; unset, the ``robot`` profile's.
        nominal_inertia: (J,) Jn [kg·m²] of the "dob" estimator.
        effort_limit: (J,) the actuators' effort limit [N·m] (the ``robot`` profile's): the stall torque that converts a
            servo's Present_Load (``sensing_effort_unit`` "0.1%duty") to N·m.
        use_commands: take the torque of each interval from the last command on ``commands_topic`` instead of the
            /joint_states effort (an arm whose drives report no torque).
        commands_topic: std_msgs/Float64MultiArray commands, ``command_joint_names`` order [N·m].

    Raises:
        ValueError: a bad field (named).
    """

    joint_names: tuple[str, ...] = field(kw_only=True)
    command_joint_names: tuple[str, ...] = field(kw_only=True)
    urdf_path: str = ""
    model: str = "rbd"
    model_path: str = ""
    model_friction: bool = True
    friction_velocity: float = 0.01
    armature: tuple[float, ...] = ()
    frictionloss: tuple[float, ...] | None = None
    damping: tuple[float, ...] | None = None
    nominal_inertia: tuple[float, ...] = field(kw_only=True)
    effort_limit: tuple[float, ...] = ()
    use_commands: bool = False
    commands_topic: str = "/effort_controller/commands"

    def __post_init__(self) -> None:
        n = check_joint_names(self.joint_names)
        if sorted(self.command_joint_names) != sorted(self.joint_names):
            raise ValueError(f"command_joint_names {list(self.command_joint_names)} must hold exactly the joints "
                             f"{list(self.joint_names)}")
        if len(self.nominal_inertia) != n or not all(math.isfinite(v) and v > 0 for v in self.nominal_inertia):
            raise ValueError(f"nominal_inertia = {list(self.nominal_inertia)} must be {n} values > 0 kg·m²")
        if self.effort_limit and (len(self.effort_limit) != n
                                  or not all(math.isfinite(v) and v > 0 for v in self.effort_limit)):
            raise ValueError(f"effort_limit = {list(self.effort_limit)} must be {n} values > 0 N·m (or empty)")
        if not (math.isfinite(self.friction_velocity) and self.friction_velocity > 0):
            raise ValueError(f"friction_velocity = {self.friction_velocity!r} must be > 0 rad/s")
        if self.model not in ("none", "rbd", "learned"):
            raise ValueError(f"model = {self.model!r} must be 'none', 'rbd' or 'learned'")
