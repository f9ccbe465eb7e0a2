"""Configuration of the simulated arm (physics) and of the sim_arm node (timing), from config/sim_arm.yaml."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..config import check_joint_names, load_node_configs

__all__ = ["SimArmConfig", "SimArmNodeConfig", "load_sim_config"]


def _per_joint(name: str, values: tuple[float, ...], n: int, *, minimum: float | None = 0.0) -> None:
    if len(values) != n:
        raise ValueError(f"{name} has {len(values)} values but joint_names has {n}")
    for i, v in enumerate(values):
        if not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{name}[{i}] = {v!r} is not a finite number")
        if minimum is not None and v < minimum:
            raise ValueError(f"{name}[{i}] = {v} must be >= {minimum}")


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
            _per_joint(name, getattr(self, name), n)
        _per_joint("initial_position", self.initial_position, n, minimum=None)
        if not (isinstance(self.encoder_resolution, (int, float)) and self.encoder_resolution >= 0):
            raise ValueError(f"encoder_resolution = {self.encoder_resolution!r} must be >= 0")
        if len(self.friction_solref) != 2:
            raise ValueError(f"friction_solref must have 2 values, got {list(self.friction_solref)}")
        if len(self.friction_solimp) != 5:
            raise ValueError(f"friction_solimp must have 5 values, got {list(self.friction_solimp)}")


@dataclass(frozen=True)
class SimArmNodeConfig:
    """Timing of the sim_arm node.

    Attributes:
        publish_rate: /joint_states rate [Hz]; the physics advances by wall time between ticks.
        command_timeout: no command for this long -> zero torque [s].
        clock_mode: "wall" (stamps from the system clock) or "sim" (the node publishes /clock and owns time).
        real_time_factor: clock_mode "sim" only: simulated seconds per wall second.
        brake_until_first_command: hold the joints at ``initial_position`` (as motor brakes do) until the first
            effort command arrives, instead of letting the arm fall under gravity with zero torque.
        lockstep: clock_mode "sim" only: advance one tick only once an effort command has answered the last
            published /joint_states (synchronous co-simulation, like Gazebo's lockstep), so closed-loop results do
            not depend on CPU load; time then runs at most ``real_time_factor``. Simulated time stays at zero (the
            initial state repeated at 10 Hz) until the first command arrives.
        lockstep_timeout: lockstep only: wall seconds to wait for that command before stepping without it [s].
    """

    publish_rate: float = 1000.0
    command_timeout: float = 0.1
    clock_mode: str = "wall"
    real_time_factor: float = 1.0
    brake_until_first_command: bool = True
    lockstep: bool = False
    lockstep_timeout: float = 1.0

    def __post_init__(self) -> None:
        for name in ("brake_until_first_command", "lockstep"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} = {getattr(self, name)!r} must be true or false")
        if self.lockstep and self.clock_mode != "sim":
            raise ValueError("lockstep = true needs clock_mode = 'sim' (the simulator must own time to wait for commands)")
        if not self.lockstep_timeout > 0:
            raise ValueError(f"lockstep_timeout = {self.lockstep_timeout} must be > 0 s")
        if not 1.0 <= self.publish_rate <= 10000.0:
            raise ValueError(f"publish_rate = {self.publish_rate} must be in [1, 10000] Hz")
        if not self.command_timeout > 0:
            raise ValueError(f"command_timeout = {self.command_timeout} must be > 0 s")
        if self.clock_mode not in ("wall", "sim"):
            raise ValueError(f"clock_mode = {self.clock_mode!r} must be 'wall' or 'sim'")
        if not self.real_time_factor > 0:
            raise ValueError(f"real_time_factor = {self.real_time_factor} must be > 0")


def load_sim_config(path: str | Path | None = None, overrides: dict | None = None) -> tuple[SimArmConfig, SimArmNodeConfig]:
    """Load both configs from a parameter file (default: the bundled config/sim_arm.yaml).

    Args:
        path: parameter file in ROS 2 format; None for the bundled default.
        overrides: parameter name -> value applied on top of the file.

    Raises:
        FileNotFoundError: the file does not exist.
        ConfigError: malformed YAML, an unknown key, or a bad value; the message names the file and key.
    """
    return load_node_configs(SimArmConfig, SimArmNodeConfig, "sim_arm", "sim_arm.yaml", path, overrides)
