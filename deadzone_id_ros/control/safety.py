"""Runaway protection of the controller (core, no ROS): a tracking-error limit and joint position limits that latch a
fault, a safe state (hold the static torque, then zero torque) and an explicit reset.

Per tick the controller calls :meth:`SafetyMonitor.check` with the measured position q and the tracking error
e = q_d - q. The first tick on which, for some joint j,

    |e_j| > tracking_error_limit_j     or     q_j < lower_j - margin     or     q_j > upper_j + margin

(lower/upper: the URDF position limits, margin: ``position_limit_margin``) latches a fault with a reason naming the
joint, the value and the limit. From then on the safe state follows the time since the fault:
"hold" (the model's static torque at the measured position, rate-limited and clamped) for ``fault_hold_time``, then
"zero". The fault stays latched until :meth:`SafetyMonitor.reset` is called (a std_srvs/Trigger service in the node),
which refuses while a joint is still outside its position limits. Unlike the watchdog, fresh measurements never
clear it: an arm that ran away must be looked at before it moves again.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SAFE_STATES", "SafetyMonitor"]

SAFE_STATES = ("ok", "hold", "zero")


class SafetyMonitor:
    """Latching tracking-error and position-limit check, and the safe state's timeline.

    Args:
        joint_names: (J,) joint names, for the messages.
        tracking_error_limit: (J,) largest |q_d - q| [rad] (> 0).
        lower, upper: (J,) URDF position limits [rad].
        margin: tolerated distance beyond the URDF limits [rad] (>= 0).
        hold_time: time in "hold" before "zero" [s] (> 0).

    Raises:
        ValueError: shapes differ from (J,), or a limit is not positive / finite.
    """

    def __init__(self, joint_names: tuple[str, ...], tracking_error_limit: np.ndarray, lower: np.ndarray,
                 upper: np.ndarray, margin: float, hold_time: float) -> None:
        self.joint_names = tuple(joint_names)
        n = len(self.joint_names)
        self.tracking_error_limit = np.asarray(tracking_error_limit, dtype=float).copy()
        self.lower = np.asarray(lower, dtype=float).copy()
        self.upper = np.asarray(upper, dtype=float).copy()
        for name, arr in (("tracking_error_limit", self.tracking_error_limit), ("lower", self.lower),
                          ("upper", self.upper)):
            if arr.shape != (n,):
                raise ValueError(f"{name} must have shape ({n},); got {arr.shape}")
        if not np.all(self.tracking_error_limit > 0):
            raise ValueError(f"tracking_error_limit must be > 0, got {self.tracking_error_limit.tolist()}")
        if not (math.isfinite(margin) and margin >= 0):
            raise ValueError(f"margin = {margin!r} must be finite and >= 0")
        if not (math.isfinite(hold_time) and hold_time > 0):
            raise ValueError(f"hold_time = {hold_time!r} must be finite and > 0")
        self.margin = float(margin)
        self.hold_time = float(hold_time)
        self._lo = (self.lower - self.margin).tolist()
        self._hi = (self.upper + self.margin).tolist()
        self._e_lim = self.tracking_error_limit.tolist()
        self.fault: str = ""
        self.fault_time: float = math.nan
        self.faults = 0

    @property
    def tripped(self) -> bool:
        """True while a fault is latched."""
        return bool(self.fault)

    def violation(self, q: np.ndarray, e: np.ndarray) -> str:
        """The reason the state (q (J,) [rad], e (J,) [rad]) breaks a limit, or "" when it breaks none.

        Non-finite values are the NaN guard's business (the controller never passes them here).
        """
        rows = zip(q.tolist(), e.tolist(), self._lo, self._hi, self._e_lim, strict=True)
        for j, (qj, ej, lo, hi, lim) in enumerate(rows):
            if abs(ej) > lim:
                return (f"tracking error of {self.joint_names[j]} |q_d - q| = {abs(ej):.4f} rad exceeds "
                        f"tracking_error_limit {lim:g} rad")
            if qj < lo or qj > hi:
                return (f"position of {self.joint_names[j]} q = {qj:.4f} rad is outside its URDF limits "
                        f"[{self.lower[j]:g}, {self.upper[j]:g}] rad by more than position_limit_margin "
                        f"{self.margin:g} rad")
        return ""

    def check(self, t: float, q: np.ndarray, e: np.ndarray) -> bool:
        """Latch a fault at time ``t`` [s] if (q, e) breaks a limit and none is latched; True when one is latched."""
        if not self.fault:
            reason = self.violation(q, e)
            if reason:
                self.fault, self.fault_time = reason, t
                self.faults += 1
        return bool(self.fault)

    def latch(self, t: float, reason: str) -> None:
        """Latch a fault at time ``t`` [s] for a reason found outside this monitor (e.g. the other arm of a bilateral
        pair faulted); nothing changes when one is latched already."""
        if not self.fault:
            self.fault, self.fault_time = reason, t
            self.faults += 1

    def state(self, t: float) -> str:
        """One of SAFE_STATES at time ``t`` [s]: "ok" (no fault), "hold" (for hold_time after it), then "zero"."""
        if not self.fault:
            return "ok"
        return "hold" if t - self.fault_time <= self.hold_time else "zero"

    def reset(self, q: np.ndarray | None) -> str:
        """Clear the latched fault; returns "" on success, else the reason it is refused.

        Args:
            q: (J,) the last measured position [rad], or None before any measurement.

        Refused while q is outside the position limits (plus margin): the fault would latch again at once.
        """
        if q is not None:
            for j, (qj, lo, hi) in enumerate(zip(np.asarray(q, dtype=float).tolist(), self._lo, self._hi, strict=True)):
                if not lo <= qj <= hi:
                    return (f"{self.joint_names[j]} is at {qj:.4f} rad, outside [{lo:g}, {hi:g}] rad (URDF limits "
                            "plus position_limit_margin): move it back inside before resetting")
        self.fault, self.fault_time = "", math.nan
        return ""
