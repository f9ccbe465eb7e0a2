"""The one small interface every inverse-dynamics model implements (learned, rigid-body, hybrid, or none)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["InverseDynamicsModel"]


@runtime_checkable
class InverseDynamicsModel(Protocol):
    """tau = f(q, dq, ddq) for a fixed, named set of joints.

    Attributes:
        joint_names: (J,) the joint order of every array in and out.

    ``predict`` takes q [rad], dq [rad/s], ddq [rad/s²] of shape (N, J) or (J,) and returns tau [N·m] of the same
    shape. It raises ValueError on a shape mismatch. It must be cheap for N = 1 (called every control tick).
    """

    joint_names: tuple[str, ...]

    def predict(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:  # pragma: no cover - protocol
        """Return tau (N, J) or (J,) [N·m] for the given joint states."""
        ...
