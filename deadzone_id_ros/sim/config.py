"""Configuration of the simulated arm (physics), from config/sim_arm.yaml. The sim_arm node's own settings (timing)
and the parameter-file loader are beside the node: :mod:`deadzone_id_ros.nodes.sim_arm_params`."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..config import check_joint_names, check_per_joint

__all__ = ["SimArmConfig"]


@dataclass(frozen=True)
class SimArmConfig:
    """Physics of the simulated arm. Per-joint tuples have length J and follow ``joint_names``.

    Attributes:
        urdf_path: URDF to load; "" means the bundled ``urdf/three_dof_arm.urdf``.
        joint_names: (J,) joints to actuate, by name.
        timestep: physics step [s].
        frictionloss: (J,) static/Coulomb friction, the dead zone half-width [N·m]; >= 0.
        damping: (J,) viscous friction [N·m·s/rad]; >= 0.
        armature: (J,) reflected rotor inertia [kg·m²]; >= 0.
        torque_noise_std: (J,) unmeasured torque ripple added to the applied torque [N·m].
        velocity_noise_std: (J,) white noise on the measured velocity [rad/s].
        encoder_resolution: position quantization step [rad]; 0 disables.
        friction_solref, friction_solimp: MuJoCo solver parameters of the friction constraint.
        initial_position: (J,) [rad].
        seed: seed of the noise generator.
    """

    urdf_path: str = ""
    joint_names: tuple[str, ...] = ("joint1", "joint2", "joint3")
    timestep: float = 0.001
    frictionloss: tuple[float, ...] = (0.12, 0.40, 0.15)
    damping: tuple[float, ...] = (0.02, 0.05, 0.03)
    armature: tuple[float, ...] = (0.002, 0.003, 0.001)
    torque_noise_std: tuple[float, ...] = (0.005, 0.01, 0.005)
    velocity_noise_std: tuple[float, ...] = (0.002, 0.002, 0.002)
    encoder_resolution: float = 2 * math.pi / 65536
    friction_solref: tuple[float, ...] = (0.002, 1.0)
    friction_solimp: tuple[float, ...] = (0.99, 0.999, 0.001, 0.5, 2.0)
    initial_position: tuple[float, ...] = (0.0, 0.3, 0.6)
    seed: int = 0

    def __post_init__(self) -> None:
        n = check_joint_names(self.joint_names)
        if not (isinstance(self.timestep, (int, float)) and 0 < self.timestep <= 0.01):
            raise ValueError(f"timestep = {self.timestep!r} must be in (0, 0.01] s")
        for name in ("frictionloss", "damping", "armature", "torque_noise_std", "velocity_noise_std"):
            check_per_joint(name, getattr(self, name), n, sign="non-negative")
        check_per_joint("initial_position", self.initial_position, n, sign="any")
        if not (isinstance(self.encoder_resolution, (int, float)) and self.encoder_resolution >= 0):
            raise ValueError(f"encoder_resolution = {self.encoder_resolution!r} must be >= 0")
        if len(self.friction_solref) != 2:
            raise ValueError(f"friction_solref must have 2 values, got {list(self.friction_solref)}")
        if len(self.friction_solimp) != 5:
            raise ValueError(f"friction_solimp must have 5 values, got {list(self.friction_solimp)}")
