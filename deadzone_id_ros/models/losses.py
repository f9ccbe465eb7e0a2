"""Losses of the MLP methods (Inami, Yamane, Sakaino, arXiv 2402.00393, Eq. (2)-(4), and the band extension).

- ``masked`` (proposed): ``L = sum_ij r_ij (tau_ij - f_j(x_i))^2 / max(1, sum_ij r_ij)``; a (sample, joint) pair
  inside the dead zone (r_ij = 0) contributes neither error nor gradient, every other pair of the same sample does.
- ``conventional``: samples with any r_ij = 0 are dropped (:func:`conventional_keep`), then plain MSE.
- ``mse_all``: plain MSE over every sample and joint.
- ``band`` (extension of the paper, see :func:`band_mse`): stuck pairs are penalized only outside a per-joint band
  of half-width tau_s,j around the prediction, moving pairs keep the squared error.

The division by the number of valid pairs, clamped at one, keeps a mostly masked batch at the scale of its valid
entries (the mask-then-mean bug lerobot fixed under-counts the loss by the masked fraction).
"""

from __future__ import annotations

import numpy as np

__all__ = ["LOSSES", "band_mse", "conventional_keep", "identify_band", "masked_mse", "mse"]

#: Loss name of each MLP method (``band`` is not yet a method of training/compare; see band_mse).
LOSSES: dict[str, str] = {"masked": "masked", "conventional": "mse", "mse_all": "mse", "hybrid": "masked",
                          "band": "band"}


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
    return np.asarray(mask.all(axis=1))


def band_mse(pred, target, mask, band):
    """Dead-zone band loss (torch tensors): the masked loss of the paper, extended to use the stuck pairs.

    Base: Inami, Yamane, Sakaino, "Loss Function Considering Dead Zone for Neural Networks", arXiv 2402.00393,
    drop a stuck pair's error (r_ij = 0) because the torque a joint stuck in static friction reads is an arbitrary
    value inside the static-friction band. Extension (this project): that value is not arbitrary everywhere; it lies
    within +-tau_s,j of the torque f_j(x_i) the joint needs to stay still. So a stuck pair is penalized only for the
    part of the error outside that band, and the net trains on 100 % of the pairs without learning the arbitrary
    part. With e_ij = f_j(x_i) - tau_ij:

        l_ij = r_ij e_ij^2 + (1 - r_ij) max(0, |e_ij| - tau_s,j)^2
        L    = sum_ij l_ij / max(1, N J)

    Normalization as the masked loss: the sum over the pairs that carry a term divided by their number, clamped at
    one; here every pair carries one (a stuck pair inside its band contributes a zero term), so the divisor is N J.
    Gradient: dl/df = 2 e_ij for a moving pair, 0 for a stuck pair inside its band, 2 (|e_ij| - tau_s,j) sign(e_ij)
    (the squared-error gradient of the excess) outside it. With tau_s = 0 it is plain MSE; with tau_s -> inf it
    is the masked loss with the divisor N J.

    Args:
        pred: (N, J) prediction f(x).  target: (N, J) measured torque tau.  mask: (N, J) r_ij in {0, 1}.
        band: (J,) tau_s,j >= 0, in the units of pred/target (divide by the output scale when the net trains on
            standardized torques); see :func:`identify_band`.

    Returns:
        scalar tensor.

    Raises:
        ValueError: pred, target, mask differ in shape, or band is not (J,), negative or not finite.
    """
    import torch

    if pred.shape != target.shape or pred.shape != mask.shape or pred.ndim != 2:
        raise ValueError(f"pred {tuple(pred.shape)}, target {tuple(target.shape)} and mask {tuple(mask.shape)} "
                         "must have the same shape (N, J)")
    band = torch.as_tensor(band, dtype=pred.dtype, device=pred.device)
    if band.shape != (pred.shape[1],) or not bool(torch.all(torch.isfinite(band))) or bool(torch.any(band < 0)):
        raise ValueError(f"band must be (J,) = ({pred.shape[1]},) finite values >= 0, got shape "
                         f"{tuple(band.shape)}")
    r = mask.to(pred.dtype)
    e = pred - target
    outside = torch.clamp(e.abs() - band, min=0.0)
    return (r * e ** 2 + (1.0 - r) * outside ** 2).sum() / max(1, e.numel())


def identify_band(residual: np.ndarray, mask: np.ndarray, coulomb: np.ndarray | None = None,
                  quantile: float = 0.95) -> np.ndarray:
    """Half-width tau_s,j [N·m] of the static-friction band of each joint, from data.

    How: a model of the torque a joint needs (for example the rigid-body model fitted on the moving pairs, rbd) is
    subtracted from the measured torque; on stuck pairs (r_ij = 0) what remains is the static-friction torque
    plus noise, which lies within +-tau_s,j. The band is the ``quantile`` of |residual| over a joint's stuck pairs
    (a robust spread: a few outliers do not widen it, unlike the maximum). When the rbd Coulomb coefficients Fc_j
    are given, the band is at least |Fc_j| (static friction is not below kinetic Coulomb friction). A joint
    without stuck pairs gets |Fc_j| (or 0): the band of a joint that never sticks never acts in the loss.

    Args:
        residual: (N, J) tau - model prediction [N·m].
        mask: (N, J) r_ij (True/1 = moving).
        coulomb: (J,) identified Coulomb friction [N·m], optional.
        quantile: in (0, 1].

    Returns:
        (J,) tau_s,j >= 0 [N·m].

    Raises:
        ValueError: shapes differ or are not 2-D, quantile out of range, or residual / coulomb not finite.
    """
    residual = np.asarray(residual, dtype=np.float64)
    mask = np.asarray(mask, dtype=bool)
    if residual.ndim != 2 or residual.shape != mask.shape:
        raise ValueError(f"residual {residual.shape} and mask {mask.shape} must have the same shape (N, J)")
    if not 0.0 < quantile <= 1.0:
        raise ValueError(f"quantile = {quantile} must be in (0, 1]")
    if not np.all(np.isfinite(residual)):
        raise ValueError("residual has non-finite values")
    J = residual.shape[1]
    floor = np.zeros(J)
    if coulomb is not None:
        floor = np.abs(np.asarray(coulomb, dtype=np.float64))
        if floor.shape != (J,) or not np.all(np.isfinite(floor)):
            raise ValueError(f"coulomb must be ({J},) finite values, got {floor.shape}")
    out = floor.copy()
    for j in range(J):
        stuck = np.abs(residual[~mask[:, j], j])
        if stuck.size:
            out[j] = max(float(np.quantile(stuck, quantile)), floor[j])
    return out
