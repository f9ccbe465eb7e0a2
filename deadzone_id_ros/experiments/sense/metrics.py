"""Small scoring helpers of ``deadzone-id sense`` (core, no ROS)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["onsets", "rmse_where"]


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
