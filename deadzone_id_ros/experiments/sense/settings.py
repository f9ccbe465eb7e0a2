"""Settings of ``deadzone-id sense`` (:class:`SenseSettings`) and the names of the compared estimators (core, no
ROS); the run itself is :mod:`.run`."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...config import check_positive
from ...sensing.contact import CONFIRM_SAMPLES

__all__ = ["ESTIMATORS", "FREE_SEED_OFFSET", "SenseSettings"]

#: name -> label of the compared estimators, in report order
ESTIMATORS = {"residual_band": "model residual + load friction + dead-zone band",
              "residual": "model residual + load friction, no band", "model": "model residual alone",
              "momentum": "momentum observer, nominal rigid body", "dob": "DOB estimate"}

#: the free-motion run of evaluation seed s uses seed FREE_SEED_OFFSET + s (reference and simulator noise)
FREE_SEED_OFFSET = 1000


@dataclass(frozen=True)
class SenseSettings:
    """Settings of ``deadzone-id sense``.

    Attributes:
        robot: a robot profile ("" = the bundled arm).  model_path: the model under test (an artifact directory or
            .onnx, e.g. the comparison's pick); "" = the URDF's rigid body with its friction and the profile's armature.
        seeds: evaluation seeds.  calibration_seed: the threshold run's seed (not among ``seeds``).
        duration: free motion with pushes per seed [s].  calibration_duration: [s].  hold_duration: [s].
        free_duration: free motion without pushes per seed [s] (0: none), on seed ``FREE_SEED_OFFSET`` + the seed.
        push_magnitudes: [N].  push_period, push_duration, settle: [s].
        collision_at: when the reference reaches the obstacle in the collision run [s] (> 0).
        cutoff: estimator cutoff [rad/s].  quantile, margin: threshold rule.  confirm: consecutive samples above
            threshold that start a contact (:class:`~deadzone_id_ros.sensing.contact.ContactDetector`).
        point: (3,) pushed point in the last link's frame [m] (None: the profile's payload position, the tip of the
            bundled arm).

    Raises:
        ValueError: a bad value (named).
    """

    robot: str = ""
    model_path: str = ""
    seeds: tuple[int, ...] = (1, 2, 3)
    calibration_seed: int = 100
    duration: float = 60.0
    calibration_duration: float = 60.0
    hold_duration: float = 10.0
    free_duration: float = 0.0
    push_magnitudes: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)
    push_period: float = 3.0
    push_duration: float = 0.3
    settle: float = 0.5
    collision_at: float = 2.0
    cutoff: float = 100.0
    quantile: float = 1.0
    margin: float = 1.5
    confirm: int = CONFIRM_SAMPLES
    point: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not self.seeds:
            raise ValueError("seeds must name at least one seed")
        if self.calibration_seed in self.seeds:
            raise ValueError(f"calibration_seed {self.calibration_seed} must not be an evaluation seed {self.seeds}")
        free = {FREE_SEED_OFFSET + s for s in self.seeds} if self.free_duration > 0 else set()
        if self.calibration_seed in free:
            raise ValueError(f"calibration_seed {self.calibration_seed} must not be a free-motion seed "
                             f"{sorted(free)} ({FREE_SEED_OFFSET} + an evaluation seed)")
        if not (math.isfinite(self.free_duration) and self.free_duration >= 0):
            raise ValueError(f"free_duration = {self.free_duration} must be >= 0 s")
        for name in ("duration", "calibration_duration", "hold_duration", "push_period", "push_duration", "cutoff",
                     "collision_at"):
            check_positive(name, getattr(self, name))
        if self.push_duration + self.settle >= self.push_period:
            raise ValueError(f"push_duration + settle = {self.push_duration + self.settle} s must be shorter than "
                             f"push_period = {self.push_period} s")
        if isinstance(self.confirm, bool) or not isinstance(self.confirm, int) or self.confirm < 1:
            raise ValueError(f"confirm = {self.confirm!r} must be a whole number of samples >= 1")
        if not self.push_magnitudes or not all(m > 0 for m in self.push_magnitudes):
            raise ValueError(f"push_magnitudes = {list(self.push_magnitudes)} must be > 0 N")
