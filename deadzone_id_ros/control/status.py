"""What the controller reports (core, no ROS): the parts of its last command and its counters and states, for the
node's /diagnostics and ~/torque_parts. Filled in by :class:`deadzone_id_ros.control.FeedforwardController`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["WATCHDOG_STATES", "ControllerStatus", "TorqueParts"]

WATCHDOG_STATES = ("waiting", "running", "hold", "zero")


@dataclass
class TorqueParts:
    """The parts of the last command, each (J,) [N·m] in the controller's joint order.

    Attributes:
        ff: model/nominal torque without the nominal feedback part: tau_ff - fb.
        fb: nominal feedback torque Jn (Kd de + Kp e).
        dob: disturbance estimate added to the command (zero without DOB).
        command: the command after the NaN guard, rate limit and clamp.
    """

    ff: np.ndarray
    fb: np.ndarray
    dob: np.ndarray
    command: np.ndarray


@dataclass
class ControllerStatus:
    """Counters and state for diagnostics. Per-joint arrays follow the controller's joint order.

    Attributes:
        watchdog: one of WATCHDOG_STATES.
        watchdog_trips: times the watchdog left "running" (no measurement for ``watchdog_timeout``) since start: a
            hold of a few ms, ended by states that were only late, shows here though a status sampled at
            ``diagnostics_rate`` says "running" before and after it.
        clamp_events: (J,) ticks whose command hit the effort limit.
        rate_limit_events: (J,) ticks whose command change was limited.
        nonfinite_events: ticks with a non-finite input or intermediate value (command replaced).
        rejected_measurements: measurements ignored (stamp not after the previous one).
        ticks: measurements processed.
        last_period: last measured period [s] (nan before two ticks).
        tracking_error: (J,) last e = q_d - q [rad].
        fault: why the safe state was entered ("" when no fault is latched).
        safe_state: "ok", or "hold" / "zero" while a fault is latched (:data:`.safety.SAFE_STATES`).
        faults: faults latched since start.
    """

    watchdog: str = "waiting"
    watchdog_trips: int = 0
    clamp_events: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    rate_limit_events: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    nonfinite_events: int = 0
    rejected_measurements: int = 0
    ticks: int = 0
    last_period: float = math.nan
    tracking_error: np.ndarray = field(default_factory=lambda: np.zeros(0))
    fault: str = ""
    safe_state: str = "ok"
    faults: int = 0

    @classmethod
    def for_joints(cls, n_joints: int) -> ControllerStatus:
        """A fresh status with zeroed per-joint counters (J,) for ``n_joints`` J."""
        return cls(clamp_events=np.zeros(n_joints, dtype=np.int64),
                   rate_limit_events=np.zeros(n_joints, dtype=np.int64), tracking_error=np.zeros(n_joints))
