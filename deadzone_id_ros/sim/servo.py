"""What a hobby serial-bus servo reports instead of joint torque: its Present_Load, the motor's PWM duty.

Feetech STS (and Dynamixel protocol 1) servos report ``Present_Load`` (STS3215: control-table address 60, 2 bytes,
sign-magnitude with the sign in bit 10; LeRobot ``lerobot/motors/feetech/tables.py``, the sign fixed in LeRobot
PR 1014): the PWM duty the servo's own controller applies to its DC motor, in units of 0.1 %, in [-1000, 1000]. It
is not a torque. A voltage-driven DC motor behind a gear of ratio N obeys ``d V = R i + k_e N w`` and
``tau = k_t N i`` at steady state (armature inductance neglected: its time constant is far below a control period);
at the stall (w = 0, d = 1) ``tau_stall = k_t N V / R`` and at no load (tau = 0, d = 1) ``w_0 = V / (k_e N)``, so

    d = tau / tau_stall + w / w_0                 (clipped to [-1, 1]; reported as round(1000 d))

with tau the output torque [N·m], w the output speed [rad/s], tau_stall and w_0 the datasheet's stall torque and
no-load speed at the supply voltage. This is the motor model the BAM servo identification uses (M. Duclusaud,
G. Passault, V. Padois, O. Ly, "Extended Friction Models for the Physics Simulation of Servo Actuators",
arXiv:2410.08650, 2024: the motor torque ``k_t / R (V d - k_e w)`` of their actuator models). Converting a Present_Load
reading to torque therefore needs the speed as well (the inverse is
:func:`deadzone_id_ros.data.effort_units.present_load_torque`, which force sensing uses); a constant
``tau_stall / 1000`` N·m per unit (``--torque-constant``) is right only at rest.
"""

from __future__ import annotations

import numpy as np

from ..data.effort_units import PRESENT_LOAD_FULL_SCALE

__all__ = ["PRESENT_LOAD_FULL_SCALE", "present_load"]


def present_load(tau: np.ndarray, dq: np.ndarray, stall_torque: np.ndarray,
                 no_load_speed: np.ndarray | None = None) -> np.ndarray:
    """The Present_Load a servo reports for output torque ``tau`` at output speed ``dq`` (module docstring).

    Args:
        tau: (..., J) output torque [N·m].  dq: (..., J) output speed [rad/s].
        stall_torque: (J,) stall torque at the supply voltage [N·m] (> 0).
        no_load_speed: (J,) no-load speed at the supply voltage [rad/s] (> 0); None leaves the back-EMF part out.

    Returns:
        (..., J) the reading in units of 0.1 % duty: whole numbers in [-1000, 1000] (float array).
    """
    duty = np.asarray(tau, dtype=float) / np.asarray(stall_torque, dtype=float)
    if no_load_speed is not None:
        duty = duty + np.asarray(dq, dtype=float) / np.asarray(no_load_speed, dtype=float)
    return np.round(PRESENT_LOAD_FULL_SCALE * np.clip(duty, -1.0, 1.0))
