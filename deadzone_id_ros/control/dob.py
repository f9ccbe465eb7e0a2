"""Discrete disturbance observer (DOB) with pseudo-differentiation, exact for the measured sampling period.

Ohnishi, Shibata, Murakami, "Motion control for advanced mechatronics", IEEE/ASME T-Mech 1(1), 1996. Per joint, the
nominal plant is ``Jn ddq + h(q, dq) = tau - tau_dis``, and the observer is

    tau_dis_hat = LPF_g(tau - h + g Jn dq) - g Jn dq,     LPF_g(s) = g / (s + g),

which equals ``LPF_g(tau - h - Jn ddq)`` without differentiating dq explicitly ("pseudo-differentiation").

Discretization. Between two measurements the command ``tau`` is held (ZOH). The interval mean of the unfiltered
disturbance ``w = tau - h - Jn ddq`` over ``[t_{k-1}, t_k]`` is known exactly from the samples:

    w_k = tau_{k-1} - h_{k-1} - Jn (dq_k - dq_{k-1}) / dt_k,

and the first-order LPF driven by a piecewise-constant input is discretized exactly (ZOH) with the *measured*
``dt_k``:  ``y_k = a_k y_{k-1} + (1 - a_k) w_k``,  ``a_k = exp(-g dt_k)``. With ``z_k = y_k + c_k Jn dq_k``,
``c_k = (1 - a_k)/dt_k`` (-> g as dt -> 0), this is the pseudo-differentiation form above; the gain applied to a dq
difference is ``Jn (1 - a_k) / dt_k <= g Jn``, so velocity noise is amplified no more than in the continuous DOB.
``discretization="bilinear"`` uses Tustin's rule instead: ``a_k = (2 - g dt)/(2 + g dt)``, input weight
``(1 - a_k)`` on the mean of the two latest ``w``.

For a double integrator ``Jn ddq = tau - d`` with a constant ``d``, ``w_k = d`` exactly, so the estimate converges as
``d (1 - prod a_k)`` whatever the period jitter.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["DisturbanceObserver"]


class DisturbanceObserver:
    """Per-joint DOB with exact discretization for a variable period.

    Args:
        cutoff: (J,) g, the LPF cutoff [rad/s] (> 0).
        nominal_inertia: (J,) Jn [kg·m²] (> 0).
        discretization: "zoh" (exact for a held input, default) or "bilinear" (Tustin).

    Raises:
        ValueError: shapes differ, a value is not finite and positive, or an unknown discretization.
    """

    def __init__(self, cutoff: np.ndarray, nominal_inertia: np.ndarray, discretization: str = "zoh") -> None:
        self.cutoff = np.asarray(cutoff, dtype=float).copy()
        self.nominal_inertia = np.asarray(nominal_inertia, dtype=float).copy()
        if self.cutoff.ndim != 1 or self.cutoff.shape != self.nominal_inertia.shape:
            raise ValueError(
                f"cutoff {self.cutoff.shape} and nominal_inertia {self.nominal_inertia.shape} must be (J,)"
            )
        for name, arr in (("cutoff", self.cutoff), ("nominal_inertia", self.nominal_inertia)):
            if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
                raise ValueError(f"{name} must be finite and > 0, got {arr.tolist()}")
        if discretization not in ("zoh", "bilinear"):
            raise ValueError(f"discretization = {discretization!r} must be 'zoh' or 'bilinear'")
        self.discretization = discretization
        self._zoh = discretization == "zoh"
        self._neg_cutoff = -self.cutoff  # exp(-g dt) = exp((-g) dt) exactly (IEEE negation is exact)
        self._zoh_dt = math.nan  # the dt of the cached ZOH pole exp(-g dt) and 1 - exp(-g dt)
        self._zoh_a = self._zoh_1ma = np.zeros_like(self.cutoff)
        self.estimate = np.zeros_like(self.cutoff)
        self._prev_dq: np.ndarray | None = None
        self._prev_w: np.ndarray | None = None

    def reset(self, estimate: np.ndarray | None = None) -> None:
        """Forget the history; start from ``estimate`` (J,) [N·m] (default zero)."""
        self.estimate = np.zeros_like(self.cutoff) if estimate is None else np.asarray(estimate, float).copy()
        self._prev_dq = None
        self._prev_w = None

    def update(self, dt: float, dq: np.ndarray, tau_prev: np.ndarray, h_prev: np.ndarray) -> np.ndarray:
        """Advance by one measured period and return the new estimate tau_dis_hat (J,) [N·m].

        Args:
            dt: time since the previous measurement [s]; the first call (no previous dq) only stores ``dq``.
            dq: (J,) measured velocity now [rad/s].
            tau_prev: (J,) torque applied since the previous measurement (the held command) [N·m].
            h_prev: (J,) model part besides Jn ddq at the previous tick [N·m] (zero for a pure double integrator).

        Raises:
            ValueError: ``dt`` is not finite and > 0 once a previous sample exists.
        """
        dq = np.asarray(dq, dtype=float)
        prev_dq = self._prev_dq
        if prev_dq is None:
            self._prev_dq = dq.copy()
            return self.estimate
        if not (math.isfinite(dt) and dt > 0):
            raise ValueError(f"dt = {dt!r} must be finite and > 0")
        w = tau_prev - h_prev - self.nominal_inertia * (dq - prev_dq) / dt
        if self._zoh:
            if dt != self._zoh_dt:  # the period rarely changes: exp() once per distinct dt (same values)
                self._zoh_a = np.exp(self._neg_cutoff * dt)
                self._zoh_1ma = 1.0 - self._zoh_a
                self._zoh_dt = dt
            self.estimate = self._zoh_a * self.estimate + self._zoh_1ma * w
        else:
            gdt = self.cutoff * dt
            a = (2.0 - gdt) / (2.0 + gdt)
            w_mean = w if self._prev_w is None else 0.5 * (w + self._prev_w)
            self.estimate = a * self.estimate + (1.0 - a) * w_mean
            self._prev_w = w
        self._prev_dq = dq.copy()
        return self.estimate
