"""The controller's per-tick command limits (core, no ROS): a finite check, and the torque-rate limit followed by the
effort clamp.

Both work element by element on Python floats: the controller has a handful of joints, where numpy's per-call
overhead dominates. The comparisons and clips are numpy's, ``np.clip(x, lo, hi)`` = ``min(max(x, lo), hi)`` with
``max(a, b) = a if a > b else b`` and ``min(a, b) = a if a < b else b``, so results are bit-identical to numpy's.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["all_finite", "rate_limit_and_clamp", "since_command"]

_isfinite = math.isfinite


def all_finite(x: np.ndarray) -> bool:
    """True when every entry of the small 1-D float array ``x`` is finite (faster than np.all(np.isfinite(x)) for a
    handful of joints)."""
    return all(map(_isfinite, x.tolist()))


def rate_limit_and_clamp(values: list[float], prev: list[float], rate: list[float], limit: list[float], dt: float,
                         rate_events: np.ndarray, clamp_events: np.ndarray) -> np.ndarray:
    """Limit each command change to ``rate * dt`` around the previous command, then clamp to +-``limit``.

    Args:
        values: (J,) finite commands [N·m].
        prev: (J,) previous command [N·m].
        rate: (J,) torque-rate limit [N·m/s].
        limit: (J,) effort limit [N·m] (the clamp wins over the rate limit).
        dt: the period the rate limit allows for [s] (the caller caps it).
        rate_events, clamp_events: (J,) int counters, incremented in place for each joint whose command was rate
            limited / hit the effort limit.

    Returns:
        a new (J,) float64 array, the limited command [N·m].
    """
    out = []
    for i, (x, p, r, lim) in enumerate(zip(values, prev, rate, limit)):
        step = r * dt
        lo, hi = p - step, p + step
        if x < lo or x > hi:
            rate_events[i] += 1
        x = x if x > lo else lo
        x = x if x < hi else hi
        if abs(x) > lim:
            clamp_events[i] += 1
        x = x if x > -lim else -lim
        x = x if x < lim else lim
        out.append(x)
    return np.array(out)


def since_command(t_cmd: float | None, t: float, dt_nominal: float) -> float:
    """The dt [s] of the rate limit for a command at ``t`` [s]: the time since the previous command at ``t_cmd`` [s]
    (a state's stamp or the watchdog's time); 0 when ``t`` is not after it (the command then stays where it is);
    ``dt_nominal`` [s] (one nominal period) before the first command (``t_cmd`` None)."""
    if t_cmd is None:
        return dt_nominal
    return t - t_cmd if t > t_cmd else 0.0
