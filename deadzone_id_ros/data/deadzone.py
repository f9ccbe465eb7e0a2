"""Dead-zone masks (Inami, Yamane, Sakaino, arXiv 2402.00393, Sec. III).

A joint is outside its dead zone (moving) when ``|dq_ij| > alpha * sigma_j``, with sigma_j the standard deviation of
joint j's velocity over the training data. ``r_ij = 1`` marks (sample, joint) pairs whose torque label is
meaningful; the proposed loss uses exactly those pairs, the conventional method keeps only samples where every
joint is moving.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .types import Episode

__all__ = ["DeadZone", "fit_dead_zone"]


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
    def from_dict(cls, d: dict) -> "DeadZone":
        """Inverse of :meth:`to_dict`; raises KeyError naming a missing key."""
        return cls(tuple(d["joint_names"]), d["alpha"], np.asarray(d["sigma"], float), np.asarray(d["threshold"], float))


def fit_dead_zone(
    episodes: Sequence[Episode], alpha: float | None = 0.1, absolute: Sequence[float] | None = None
) -> DeadZone:
    """Fit the dead-zone thresholds on ``episodes`` (use the training split only).

    Args:
        episodes: episodes sharing joint_names.
        alpha: threshold = alpha * std(dq_j) (the paper's rule; default 0.1 as in the paper's experiments).
        absolute: per-joint thresholds [rad/s] instead of alpha (alpha is then ignored and stored as None).

    Raises:
        ValueError: no episodes, joint names differ between episodes, alpha < 0, or ``absolute`` of the wrong length.
    """
    if not episodes:
        raise ValueError("fit_dead_zone needs at least one episode")
    names = episodes[0].joint_names
    for ep in episodes[1:]:
        if ep.joint_names != names:
            raise ValueError(f"episode {ep.name} has joints {list(ep.joint_names)}, expected {list(names)}")
    dq = np.concatenate([ep.dq for ep in episodes], axis=0)
    sigma = dq.std(axis=0)
    if absolute is not None:
        thr = np.asarray(absolute, dtype=float)
        if thr.shape != (len(names),):
            raise ValueError(f"absolute thresholds must have {len(names)} values, got {thr.shape}")
        return DeadZone(names, None, sigma, thr)
    if alpha is None or alpha < 0:
        raise ValueError(f"alpha = {alpha!r} must be >= 0")
    return DeadZone(names, float(alpha), sigma, float(alpha) * sigma)
