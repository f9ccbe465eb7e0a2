"""Dead-zone masks (Inami, Yamane, Sakaino, arXiv 2402.00393, Sec. III).

A joint is outside its dead zone (moving) when ``|dq_ij| > alpha * sigma_j``, with sigma_j the standard deviation of
joint j's velocity over the training data. ``r_ij = 1`` marks (sample, joint) pairs whose torque label is
meaningful; the proposed loss uses exactly those pairs, the conventional method keeps only samples where every
joint is moving.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..config import check_positive
from .types import Episode

__all__ = ["DeadZone", "DeadZoneConfig", "fit_dead_zone"]


@dataclass(frozen=True)
class DeadZoneConfig:
    """The one dead-zone setting, used by inspect, train, compare and the report.

    Attributes:
        alpha: threshold in units of each joint's velocity std on the fitting data (the paper's alpha, >= 0;
            default 0.1 as in the paper's experiments).
        absolute_thresholds: (J,) per-joint velocity thresholds [rad/s] (>= 0) that replace ``alpha * sigma``;
            None (default) uses alpha. Their number must match the data's joints when fitted.

    Raises:
        ValueError: alpha negative or not a finite number; absolute_thresholds empty, negative or not finite.
    """

    alpha: float = 0.1
    absolute_thresholds: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        check_positive("dead_zone.alpha", self.alpha, allow_zero=True)
        if self.absolute_thresholds is not None:
            thr = tuple(self.absolute_thresholds)
            if not thr or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                                  and x >= 0 for x in thr):
                raise ValueError(f"dead_zone.absolute_thresholds = {list(thr)!r} must be non-negative numbers "
                                 "[rad/s], one per joint")
            object.__setattr__(self, "absolute_thresholds", tuple(float(x) for x in thr))


@dataclass(frozen=True)
class DeadZone:
    """Per-joint velocity thresholds of the dead zone.

    Attributes:
        joint_names: (J,) joint names.
        alpha: the paper's alpha (threshold in units of sigma); None when absolute thresholds were given.
        sigma: (J,) velocity standard deviation over the fitting data [rad/s].
        threshold: (J,) velocity threshold [rad/s]; a joint with |dq| <= threshold is in its dead zone.
    """

    joint_names: tuple[str, ...]
    alpha: float | None
    sigma: np.ndarray
    threshold: np.ndarray

    def mask(self, dq: np.ndarray) -> np.ndarray:
        """Return r: (N, J) bool, True where the joint is outside its dead zone (``|dq| > threshold``).

        Raises:
            ValueError: ``dq`` is not (N, J) with J = len(joint_names).
        """
        dq = np.asarray(dq)
        if dq.ndim != 2 or dq.shape[1] != len(self.joint_names):
            raise ValueError(f"dq must have shape (N, {len(self.joint_names)}), got {dq.shape}")
        return np.abs(dq) > self.threshold

    def to_dict(self) -> dict:
        """JSON-ready form (lists of floats)."""
        return {
            "joint_names": list(self.joint_names),
            "alpha": self.alpha,
            "sigma": [float(x) for x in self.sigma],
            "threshold": [float(x) for x in self.threshold],
        }

    @classmethod
    def from_dict(cls, d: dict) -> DeadZone:
        """Inverse of :meth:`to_dict`; raises KeyError naming a missing key."""
        return cls(
            tuple(d["joint_names"]), d["alpha"], np.asarray(d["sigma"], float), np.asarray(d["threshold"], float)
        )


def fit_dead_zone(episodes: Sequence[Episode], config: DeadZoneConfig | None = None) -> DeadZone:
    """Fit the dead-zone thresholds on ``episodes`` (use the training split only).

    Args:
        episodes: episodes sharing joint_names.
        config: alpha (threshold = alpha * std(dq_j), the paper's rule) or absolute per-joint thresholds [rad/s]
            (alpha is then stored as None); default ``DeadZoneConfig()`` (alpha = 0.1).

    Raises:
        ValueError: no episodes, joint names differ between episodes, or ``config.absolute_thresholds`` does not
            have one value per joint (the message names the joints).
    """
    config = config or DeadZoneConfig()
    if not episodes:
        raise ValueError("fit_dead_zone needs at least one episode")
    names = episodes[0].joint_names
    for ep in episodes[1:]:
        if ep.joint_names != names:
            raise ValueError(f"episode {ep.name} has joints {list(ep.joint_names)}, expected {list(names)}")
    dq = np.concatenate([ep.dq for ep in episodes], axis=0)
    sigma = dq.std(axis=0)
    if config.absolute_thresholds is not None:
        thr = np.asarray(config.absolute_thresholds, dtype=float)
        if thr.shape != (len(names),):
            raise ValueError(f"dead_zone.absolute_thresholds has {len(thr)} values for joints {list(names)}")
        return DeadZone(names, None, sigma, thr)
    return DeadZone(names, float(config.alpha), sigma, float(config.alpha) * sigma)
