"""What the simulated arm's encoders and drive report at one instant (core, no ROS)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["JointMeasurement"]


@dataclass(frozen=True)
class JointMeasurement:
    """What the hardware reports at one instant, like joint_state_broadcaster.

    Attributes:
        t: simulated time [s].
        q: (J,) measured position, quantized by the encoder [rad].
        dq: (J,) measured velocity, with noise [rad/s].
        effort: (J,) applied torque, the clipped command [N·m].
    """

    t: float
    q: np.ndarray
    dq: np.ndarray
    effort: np.ndarray

    @classmethod
    def _make(cls, t: float, q: np.ndarray, dq: np.ndarray, effort: np.ndarray) -> JointMeasurement:
        """The measurement of these fields without the frozen ``__init__``'s four ``object.__setattr__`` calls
        (a third of a microsecond, for :meth:`SimArm.measure` once per physics step)."""
        m = object.__new__(cls)
        m.__dict__.update(t=t, q=q, dq=dq, effort=effort)
        return m
