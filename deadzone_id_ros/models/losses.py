"""Losses of the three MLP methods (Inami, Yamane, Sakaino, arXiv 2402.00393, Eq. (2)-(4)).

- ``masked`` (proposed): ``L = sum_ij r_ij (tau_ij - f_j(x_i))^2 / max(1, sum_ij r_ij)``; a (sample, joint) pair
  inside the dead zone (r_ij = 0) contributes neither error nor gradient, every other pair of the same sample does.
- ``conventional``: samples with any r_ij = 0 are dropped (:func:`conventional_keep`), then plain MSE.
- ``mse_all``: plain MSE over every sample and joint.

The division by the number of valid pairs, clamped at one, keeps a mostly masked batch at the scale of its valid
entries (the mask-then-mean bug lerobot fixed under-counts the loss by the masked fraction).
"""

from __future__ import annotations

import numpy as np

__all__ = ["LOSSES", "conventional_keep", "masked_mse", "mse"]

#: Loss name of each MLP method.
LOSSES: dict[str, str] = {"masked": "masked", "conventional": "mse", "mse_all": "mse", "hybrid": "masked"}


def masked_mse(pred, target, mask):
    """Masked mean squared error (torch tensors).

    Args:
        pred: (N, J) prediction.  target: (N, J) label.  mask: (N, J) r_ij in {0, 1} (bool or float).

    Returns:
        scalar tensor: sum of r_ij (pred - target)^2 divided by max(1, sum r_ij).

    Raises:
        ValueError: the three shapes differ.
    """
    if pred.shape != target.shape or pred.shape != mask.shape:
        raise ValueError(f"pred {tuple(pred.shape)}, target {tuple(target.shape)} and mask {tuple(mask.shape)} "
                         "must have the same shape")
    m = mask.to(pred.dtype)
    return (m * (pred - target) ** 2).sum() / m.sum().clamp(min=1.0)


def mse(pred, target):
    """Plain mean squared error over all entries (torch tensors of equal shape (N, J)); raises ValueError otherwise."""
    if pred.shape != target.shape:
        raise ValueError(f"pred {tuple(pred.shape)} and target {tuple(target.shape)} must have the same shape")
    return ((pred - target) ** 2).mean()


def conventional_keep(mask: np.ndarray) -> np.ndarray:
    """Samples the conventional method keeps: (N,) bool, True where every joint moves (all r_ij = 1).

    Args:
        mask: (N, J) dead-zone mask r.

    Raises:
        ValueError: mask is not 2-D.
    """
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2:
        raise ValueError(f"mask must be (N, J), got shape {mask.shape}")
    return mask.all(axis=1)
