"""What the measured effort of an arm is, and the joint torque [N·m] the estimators take from it (core, no ROS).

sensor_msgs/JointState does not declare the unit of ``effort`` (:mod:`deadzone_id_ros.data.effort_units`): a
ros2_control effort interface reports torque [N·m] (force [N] on a prismatic joint), a hobby serial-bus servo its
Present_Load, the PWM duty in 0.1 % (:data:`~deadzone_id_ros.data.effort_units.PRESENT_LOAD`; the simulator's
``effort_readout: present_load``). An estimator that took a Present_Load reading as N·m would be off by a factor of
about 1000 / stall torque and by the back-EMF term; :class:`EffortReading` converts it with the servo's motor model
(:func:`~deadzone_id_ros.data.effort_units.present_load_torque`) before any estimator sees it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..data.effort_units import NEWTON, NEWTON_METRE, PRESENT_LOAD, normalize_unit, present_load_torque

__all__ = ["EFFORT_UNITS", "EffortReading"]

#: effort units the sensor converts: SI joint effort (N·m, N) as is, a servo's Present_Load by its motor model
EFFORT_UNITS = (NEWTON_METRE, NEWTON, PRESENT_LOAD)


@dataclass(frozen=True)
class EffortReading:
    """The unit of the measured effort (one for every joint: one driver reports one quantity) and what converts it.

    Attributes:
        unit: "N*m" (any spelling, :func:`~deadzone_id_ros.data.effort_units.normalize_unit`) or "N": SI joint effort,
            taken as is; "0.1%duty": a servo's Present_Load.
        stall_torque: (J,) [N·m] > 0, "0.1%duty" only: the servo's stall torque (the profile's effort limit).
        no_load_speed: (J,) [rad/s] > 0, "0.1%duty" only; empty: the back-EMF term left out (right at rest only).

    Raises:
        ValueError: another unit (names it and what to do), or a "0.1%duty" reading without stall torques, or values
            not > 0.
    """

    unit: str = NEWTON_METRE
    stall_torque: tuple[float, ...] = ()
    no_load_speed: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        unit = normalize_unit(self.unit)
        object.__setattr__(self, "unit", unit)
        if unit not in EFFORT_UNITS:
            raise ValueError(f"effort unit {self.unit!r} is not one the sensor converts ({list(EFFORT_UNITS)}): give "
                             "the drive's effort in N·m (e.g. motor current times its torque constant) or a servo's "
                             f"Present_Load as {PRESENT_LOAD!r}")
        for name in ("stall_torque", "no_load_speed"):
            values = tuple(float(v) for v in getattr(self, name))
            if not all(np.isfinite(v) and v > 0 for v in values):
                raise ValueError(f"{name} = {list(values)} must be values > 0")
            object.__setattr__(self, name, values)
        if unit == PRESENT_LOAD and not self.stall_torque:
            raise ValueError(f"effort unit {PRESENT_LOAD!r} (Present_Load) needs the servos' stall torque [N·m] "
                             "(the profile's effort_limit)")
        if self.no_load_speed and len(self.no_load_speed) != len(self.stall_torque):
            raise ValueError(f"no_load_speed has {len(self.no_load_speed)} values, stall_torque "
                             f"{len(self.stall_torque)}: one per joint")

    @property
    def is_torque(self) -> bool:
        """True when the effort already is SI joint effort (no conversion)."""
        return self.unit != PRESENT_LOAD

    def check_joints(self, joint_names: Sequence[str]) -> None:
        """Raise ValueError unless the per-joint values (if any) have one value per joint of ``joint_names``."""
        n = len(joint_names)
        if self.stall_torque and len(self.stall_torque) != n:
            raise ValueError(f"stall_torque has {len(self.stall_torque)} values for the {n} joints "
                             f"{list(joint_names)}")

    def to_torque(self, effort: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """(J,) or (N, J) joint torque [N·m] of the measured ``effort`` at velocity ``dq`` [rad/s] (the same array
        when it already is SI effort)."""
        if self.is_torque:
            return np.asarray(effort, dtype=float)
        return present_load_torque(effort, dq, np.asarray(self.stall_torque),
                                   np.asarray(self.no_load_speed) if self.no_load_speed else None)
