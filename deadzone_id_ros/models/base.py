"""The one small interface every inverse-dynamics model implements (learned, rigid-body, hybrid, or none), and the
one shape check of its joint-state inputs (q, dq, ddq), with the shortcut for inputs already in shape."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["InverseDynamicsModel", "check_joint_arrays", "is_joint_vector"]


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


def check_joint_arrays(n_joints: int, *, batch: bool = True, **arrays: object) -> tuple[np.ndarray, ...]:
    """Check joint-state arrays given by name (``q=..., dq=..., ddq=...``) and return them as float64 arrays.

    The first array must have shape (J,) or, with ``batch``, (N, J), J = ``n_joints``; every other one the shape of
    the first. Used by every inverse-dynamics model, the simulator's inverse dynamics and the controller.

    Args:
        n_joints: J.
        batch: accept (N, J) as well as (J,).
        arrays: name -> array-like, in order (q [rad], dq [rad/s], ddq [rad/s²], ...).

    Returns:
        the arrays, in the order given, as float64 numpy arrays.

    Raises:
        ValueError: an array of the wrong shape; names the argument, the expected and the actual shape.
    """
    out = tuple(np.asarray(a, dtype=np.float64) for a in arrays.values())
    names = tuple(arrays)
    first = out[0].shape
    if not (first == (n_joints,) or (batch and len(first) == 2 and first[1] == n_joints)):
        expected = f"(N, {n_joints}) or ({n_joints},)" if batch else f"({n_joints},)"
        raise ValueError(f"{names[0]} must have shape {expected}; got {first}")
    for name, a in zip(names[1:], out[1:]):
        if a.shape != first:
            raise ValueError(f"{name} must have shape {first} like {names[0]}; got {a.shape}")
    return out


def is_joint_vector(a: object, n_joints: int) -> bool:
    """True when ``a`` is already what :func:`check_joint_arrays` returns for one sample: a (J,) float64 ndarray,
    J = ``n_joints``. The per-tick fast paths (controller, learned model) test this and skip the generic checker."""
    return type(a) is np.ndarray and a.dtype == np.float64 and a.shape == (n_joints,)
