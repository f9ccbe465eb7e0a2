"""Small scoring helpers of ``deadzone-id sense`` (core, no ROS)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["beyond_calibration", "flagged_force", "onsets", "peak_speed", "rmse_where", "smallest_detected"]


def rmse_where(errors: list[np.ndarray], masks: list[np.ndarray], j: int) -> np.ndarray:
    """(J,) RMSE per joint of the (N, J) ``errors`` where the (N, J) ``masks`` are True (NaN: none)."""
    if not errors:
        return np.full(j, math.nan)
    err, mask = np.concatenate(errors), np.concatenate(masks)
    return np.array([math.sqrt(float((err[mask[:, i], i] ** 2).mean())) if mask[:, i].any() else math.nan
                     for i in range(j)])


def onsets(flag: np.ndarray) -> np.ndarray:
    """Indices where ``flag`` (N,) rises."""
    return np.flatnonzero(flag & ~np.concatenate([[False], flag[:-1]]))


def flagged_force(contact: np.ndarray, t: np.ndarray, start: float, force: Callable[[float], np.ndarray]) -> float:
    """The force [N] applied when a contact first rises at or after ``start`` [s], or NaN when none does: a contact
    already on before ``start`` (a false contact still held) is not the push's.

    Args:
        contact: (N,) the contact flag per sample.  t: (N,) sample times [s].  force: the push's force (3,) [N] at a
            time [s] (:meth:`~deadzone_id_ros.sim.external_forces.PushConfig.force`).
    """
    rises = [k for k in onsets(np.asarray(contact, bool)) if t[k] >= start]
    return float(np.linalg.norm(force(float(t[rises[0]])))) if rises else math.nan


def peak_speed(dq: np.ndarray, peak: np.ndarray | None = None) -> np.ndarray:
    """(J,) the largest |dq| per joint of the (N, J) velocities ``dq`` [rad/s], and of ``peak`` (J,) when given."""
    here = np.abs(np.asarray(dq, float)).max(axis=0) if len(dq) else np.zeros(np.shape(dq)[1])
    return here if peak is None else np.maximum(here, peak)


def beyond_calibration(joint_names: list[str], calibration_speed: list[float],
                       evaluation_speed: list[float]) -> list[str]:
    """The joints whose evaluation runs reached a speed above the calibration run's peak: there the friction
    correction and the thresholds are extrapolated (a threshold fitted up to that speed can fire beyond it).

    Args:
        joint_names: (J,).  calibration_speed, evaluation_speed: (J,) peak |dq| [rad/s] of each (empty: unknown).
    """
    if not calibration_speed or not evaluation_speed:
        return []
    return [n for n, c, e in zip(joint_names, calibration_speed, evaluation_speed) if e > c]


def smallest_detected(pushes: Sequence[tuple[float, bool]]) -> float:
    """The smallest push magnitude [N] that was applied and that, with every larger push, was detected.

    Args:
        pushes: (magnitude [N], detected) of every push applied.

    Returns:
        that magnitude, NaN when none qualifies (no push applied, or the largest one missed). Only magnitudes that
        were applied count: a scheduled magnitude no push had cannot be called detected.
    """
    smallest = math.nan
    for mag in sorted({m for m, _ in pushes}, reverse=True):
        if not all(hit for m, hit in pushes if m >= mag):
            break
        smallest = mag
    return smallest
