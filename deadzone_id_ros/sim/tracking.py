"""Tracking figures of a closed-loop run (core, no ROS): where the reference reverses, the per-joint errors, and the
one metrics type of a recorded run (:class:`TrackingMetrics`), shared by live runs over DDS
(:func:`deadzone_id_ros.launching.live.closed_loop_metrics`) and the closed-loop experiment's results.

"mean" over joints is always the arithmetic mean of the per-joint RMSEs (as in the torque tables of the comparison).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..jsonrecord import JsonRecord

__all__ = ["REVERSAL_WINDOW_S", "TrackingFigures", "TrackingMetrics", "reversal_mask", "tracking_figures"]

REVERSAL_WINDOW_S = 0.05  # samples within this many seconds of a reversal of the reference velocity count as "at"


def reversal_mask(dq_ref: np.ndarray, rate_hz: float, window_s: float = REVERSAL_WINDOW_S) -> np.ndarray:
    """Samples near a velocity reversal of the reference, per joint.

    Args:
        dq_ref: (N, J) reference velocity [rad/s].  rate_hz: sample rate [Hz].  window_s: half-width [s].

    Returns:
        (N, J) bool: True within ``window_s`` of a sign change of ``dq_ref`` (zero samples carry the previous sign).
    """
    n, j = dq_ref.shape
    half = max(int(round(window_s * rate_hz)), 0)
    kernel = np.ones(2 * half + 1)
    out = np.zeros((n, j), dtype=bool)
    for k in range(j):
        s = np.sign(dq_ref[:, k])
        nz = np.flatnonzero(s)
        if nz.size < 2:
            continue
        s_filled = s[nz[np.maximum(np.searchsorted(nz, np.arange(n), side="right") - 1, 0)]]
        flips = np.zeros(n)
        flips[1:] = s_filled[1:] != s_filled[:-1]
        out[:, k] = np.convolve(flips, kernel, mode="same") > 0
    return out


@dataclass(frozen=True)
class TrackingFigures(JsonRecord):
    """Per-joint figures of one run, all (J,) [rad].

    Attributes:
        rmse: tracking RMSE.  max_abs: largest |e|.  reversal_rmse: RMSE within the reversal window (NaN for a
        joint without reversal).  seed: the run's reference/noise seed, when it has one.
    """

    rmse: list[float]
    max_abs: list[float]
    reversal_rmse: list[float]
    seed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (keys ``rmse``, ``max_abs``, ``reversal_rmse`` and ``seed`` when set)."""
        out = dataclasses.asdict(self)
        if self.seed is None:
            del out["seed"]
        return out


def tracking_figures(err: np.ndarray, near_reversal: np.ndarray, seed: int | None = None) -> TrackingFigures:
    """Per-joint figures of one run.

    Args:
        err: (N, J) tracking error [rad].  near_reversal: (N, J) bool from :func:`reversal_mask`.  seed: the run's
        seed, carried into the result.

    Returns:
        ``rmse`` (J,), ``max_abs`` (J,), ``reversal_rmse`` (J,; NaN for a joint without reversal), all [rad].
    """
    rev = [float(np.sqrt(np.mean(err[m, k] ** 2))) if (m := near_reversal[:, k]).any() else float("nan")
           for k in range(err.shape[1])]
    return TrackingFigures(np.sqrt(np.mean(err**2, axis=0)).tolist(), np.max(np.abs(err), axis=0).tolist(), rev,
                           seed)


@dataclass(frozen=True)
class TrackingMetrics(JsonRecord):
    """Tracking and effort figures of one closed-loop recording.

    Attributes:
        joint_names: (J,).  tracking_rmse_per_joint (J,) [rad]; tracking_rmse_mean [rad]: the mean over joints of
        the per-joint RMSE; max_abs_error_per_joint (J,) [rad]: reference minus measured position.
        reversal_rmse_per_joint (J,) [rad] (NaN: no reversal) and reversal_rmse_mean [rad]: the same within
        :data:`REVERSAL_WINDOW_S` of a reversal of the reference velocity.  effort_rms_per_joint (J,) [N·m]: applied
        torque.  samples: /joint_states samples inside the reference's span.  seconds: that span [s].
        time_base: "header" (JointState header stamps) or "log" (receive time: no state carried a stamp).
        zero_stamp_states: states with a zero header stamp in the bag (left out of the metric).
        zero_stamp_states_dropped: states with a zero header stamp the recorder saw and did not record (its
        episode.yaml; lockstep's states before the first command).
    """

    joint_names: list[str]
    tracking_rmse_per_joint: list[float]
    tracking_rmse_mean: float
    max_abs_error_per_joint: list[float]
    reversal_rmse_per_joint: list[float]
    reversal_rmse_mean: float
    effort_rms_per_joint: list[float]
    samples: int
    seconds: float
    time_base: str = "header"
    zero_stamp_states: int = 0
    zero_stamp_states_dropped: int = 0
