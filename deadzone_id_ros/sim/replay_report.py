"""A replay's summary (its JSON shape) and what its error table means, in sentences generated from its numbers (core,
no ROS)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

import numpy as np

__all__ = ["DRIFT_RAD", "ReplaySummary", "replay_meaning"]

DRIFT_RAD = 0.05  # [rad] an open-loop position error above this is drift, not a near-perfect match



class ReplaySummary(TypedDict):
    """:meth:`ReplayResult.summary`: the replay's mode, source, joints, samples, duration [s] and, per joint name,
    the RMSE of q [rad], dq [rad/s] and effort [N·m] and the largest |q error| [rad]; notes."""

    mode: str
    source: str
    joints: list[str]
    samples: int
    duration_s: float
    rmse_q_rad: dict[str, float]
    rmse_dq_rad_s: dict[str, float]
    rmse_effort_nm: dict[str, float]
    max_abs_q_error_rad: dict[str, float]
    notes: list[str]

def replay_meaning(mode: str, joint_names: Sequence[str], max_abs_q_error: np.ndarray, duration: float) -> str:
    """One paragraph on what a replay's position errors mean.

    Open loop, the recorded torques drive the simulator with no feedback: any difference between the simulated and
    the real dynamics (friction, stiction, inertia, noise) integrates into a position drift that grows with time, so
    large errors say the model differs, not that a controller is wrong. Closed loop, the controller follows the
    recorded reference: the error is tracking plus the difference between the recorded and the simulated run.

    Args:
        mode: "open_loop" or "closed_loop".  joint_names: (J,).
        max_abs_q_error: (J,) largest |q_sim - q_recorded| per joint [rad].  duration: the replayed span [s].
    """
    errors = np.asarray(max_abs_q_error, dtype=float)
    worst = int(np.argmax(errors)) if len(errors) else 0
    err = float(errors[worst]) if len(errors) else 0.0
    joint = joint_names[worst] if len(joint_names) else "-"
    if mode == "open_loop" and err > DRIFT_RAD:
        return (f"What this means: open loop, the recorded torques drive the simulator without feedback, so every "
                f"difference between the simulated and the recorded dynamics integrates into position drift; the "
                f"largest, {err:.3g} rad on {joint} over {duration:.3g} s, says the simulated arm differs from the "
                "recorded one (friction and stiction make this grow fast), not that anything is broken. Replay with "
                "--closed-loop to compare tracking instead.")
    if mode == "open_loop":
        return (f"What this means: open loop, the simulator reproduces the recorded motion from the recorded torques "
                f"to within {err:.3g} rad ({joint}): the simulated dynamics match the recording.")
    return (f"What this means: closed loop, the controller follows the recorded reference in the simulator; the "
            f"largest position difference from the recorded run is {err:.3g} rad ({joint}): tracking error plus "
            "the difference between the simulated and the recorded arm.")
