"""Settings of the standalone force_estimator node (ROS-free, so they load and validate without rclpy)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..config import check_joint_names, check_per_joint, check_positive
from ..robot.reduced import locked_positions

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
        locked_joints: ``"urdf_joint=value"`` entries: where the URDF joints outside ``joint_names`` are locked in
            every rigid-body model (unset: the ``robot`` profile's ``locked``; the rest at 0).
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
    locked_joints: tuple[str, ...] = ()
    nominal_inertia: tuple[float, ...] = field(kw_only=True)
    effort_limit: tuple[float, ...] = ()
    use_commands: bool = False
    commands_topic: str = "/effort_controller/commands"

    def __post_init__(self) -> None:
        n = check_joint_names(self.joint_names)
        if sorted(self.command_joint_names) != sorted(self.joint_names):
            raise ValueError(f"command_joint_names {list(self.command_joint_names)} must hold exactly the joints "
                             f"{list(self.joint_names)}")
        check_per_joint("nominal_inertia", self.nominal_inertia, n)
        locked_positions(self.locked_joints)
        check_positive("friction_velocity", self.friction_velocity)
        if self.effort_limit:
            check_per_joint("effort_limit", self.effort_limit, n)
        if self.model not in ("none", "rbd", "learned"):
            raise ValueError(f"model = {self.model!r} must be 'none', 'rbd' or 'learned'")
