"""Losses of the learned methods, one class each (Inami, Yamane, Sakaino, arXiv 2402.00393, Eq. (2)-(4), and the
band extension), registered by name in :data:`LOSSES`; training and validation both call the same class.

- ``masked`` (proposed, :class:`MaskedLoss`): ``L = sum_ij r_ij (tau_ij - f_j(x_i))^2 / max(1, sum_ij r_ij)``; a
  (sample, joint) pair inside the dead zone (r_ij = 0) contributes neither error nor gradient, every other pair of
  the same sample does.
- ``mse`` (:class:`MSELoss`): plain MSE over every sample and joint (``conventional`` after dropping the samples
  with a stuck joint, :func:`conventional_keep`; ``mse_all`` on everything).
- ``band`` (extension of the paper, :class:`BandLoss`): stuck pairs are penalized only outside a per-joint band of
  half-width tau_s,j around the prediction, moving pairs keep the squared error.

Each loss is a sum of per-pair terms divided by their count, clamped at one (:meth:`Loss.sums` gives both, so a
validation split evaluated in chunks adds up to the loss of the whole split). The clamped count keeps a mostly masked
batch at the scale of its valid entries (the mask-then-mean bug lerobot fixed under-counts the loss by the masked
fraction).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import numpy as np

__all__ = ["LOSSES", "BandLoss", "Loss", "MSELoss", "MaskedLoss", "conventional_keep", "identify_band", "make_loss",
           "register_loss"]

#: Every loss class by name (filled by :func:`register_loss`).
LOSSES: dict[str, type[Loss]] = {}

_L = TypeVar("_L", bound="type[Loss]")


def register_loss(name: str) -> Callable[[_L], _L]:
    """Class decorator: register a :class:`Loss` subclass under ``name`` (lerobot-style registration).

    Raises:
        ValueError: ``name`` is already registered.
    """
    def wrap(cls: _L) -> _L:
        if name in LOSSES:
            raise ValueError(f"loss {name!r} is already registered ({LOSSES[name].__name__})")
        cls.name = name
        LOSSES[name] = cls
        return cls

    return wrap


def make_loss(name: str, **params: Any) -> Loss:
    """The registered loss ``name`` built with ``params`` (``band`` for the band loss).

    Raises:
        ValueError: unknown name (the known ones are listed).
    """
    if name not in LOSSES:
        raise ValueError(f"loss = {name!r} must be one of {sorted(LOSSES)}")
    return LOSSES[name](**params)


def _check_shapes(pred: Any, target: Any, mask: Any) -> None:
    if pred.shape != target.shape or pred.shape != mask.shape or pred.ndim != 2:
        raise ValueError(f"pred {tuple(pred.shape)}, target {tuple(target.shape)} and mask {tuple(mask.shape)} "
                         "must have the same shape (N, J)")


class Loss:
    """A training loss on (N, J) torch tensors: the sum of per-pair terms over their count (clamped at one).

    The class attributes are what the trainer and the method registry read instead of the loss's name.

    Attributes:
        name: the registered name.
        uses_mask: the loss reads the dead-zone mask r_ij; the targets are then standardized with the moving pairs'
            statistics (r_ij = 1), otherwise with every pair's and r is all ones.
        learns_stuck: stuck pairs (r_ij = 0) carry a term: the method learns from 100 % of the pairs. A loss that
            does not learn from them needs at least one moving pair to train.
        needs_band: built with ``band`` = tau_s,j (J,) [N·m], identified from the training split.

    Subclasses implement :meth:`sums`; ``loss(pred, target, mask)`` is ``sum / max(1, count)``.
    """

    name: ClassVar[str] = ""
    uses_mask: ClassVar[bool] = True
    learns_stuck: ClassVar[bool] = False
    needs_band: ClassVar[bool] = False

    def sums(self, pred: Any, target: Any, mask: Any) -> tuple[Any, Any]:
        """(sum of the per-pair terms, their count) as tensors or numbers; pred, target, mask: (N, J).

        Raises:
            ValueError: the three shapes differ or are not 2-D.
        """
        raise NotImplementedError

    def __call__(self, pred: Any, target: Any, mask: Any) -> Any:
        """The scalar loss tensor ``sum / max(1, count)`` of :meth:`sums`."""
        total, count = self.sums(pred, target, mask)
        if isinstance(count, (int, float)):
            return total / max(1, count)
        return total / count.clamp(min=1.0)

    def check(self, n_joints: int, desc: str) -> None:
        """Refuse parameters that do not fit J = ``n_joints`` joints (ValueError naming ``desc``); none by default."""

    def in_units(self, y_std: np.ndarray) -> Loss:
        """This loss for targets divided by ``y_std`` (J,) (the trainer's standardized torques); unchanged here."""
        return self

    def params(self) -> dict[str, Any]:
        """JSON-ready parameters for the training summary (empty by default)."""
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v}' for k, v in self.params().items())})"


@register_loss("masked")
class MaskedLoss(Loss):
    """Masked mean squared error (Inami et al., arXiv 2402.00393, Eq. (3)):
    ``sum_ij r_ij (pred_ij - target_ij)^2 / max(1, sum_ij r_ij)``; r_ij in {0, 1} (bool or float)."""

    def sums(self, pred: Any, target: Any, mask: Any) -> tuple[Any, Any]:
        """(sum of r (pred - target)^2, sum of r); see :meth:`Loss.sums`."""
        _check_shapes(pred, target, mask)
        m = mask.to(pred.dtype)
        return (m * (pred - target) ** 2).sum(), m.sum()


@register_loss("mse")
class MSELoss(Loss):
    """Plain mean squared error over all N J entries; the mask is not read."""

    uses_mask = False
    learns_stuck = True

    def sums(self, pred: Any, target: Any, mask: Any) -> tuple[Any, Any]:
        """(sum of (pred - target)^2, N J); see :meth:`Loss.sums`."""
        _check_shapes(pred, target, mask)
        return ((pred - target) ** 2).sum(), pred.numel()


@register_loss("band")
class BandLoss(Loss):
    """Dead-zone band loss: the masked loss of the paper, extended to use the stuck pairs.

    Base: Inami, Yamane, Sakaino, "Loss Function Considering Dead Zone for Neural Networks", arXiv 2402.00393,
    drop a stuck pair's error (r_ij = 0) because the torque a joint stuck in static friction reads is an arbitrary
    value inside the static-friction band. Extension (this project): that value is not arbitrary everywhere; it lies
    within +-tau_s,j of the torque f_j(x_i) the joint needs to stay still. So a stuck pair is penalized only for the
    part of the error outside that band, and the net trains on 100 % of the pairs without learning the arbitrary
    part. With e_ij = f_j(x_i) - tau_ij:

        l_ij = r_ij e_ij^2 + (1 - r_ij) max(0, |e_ij| - tau_s,j)^2
        L    = sum_ij l_ij / max(1, N J)

    Every pair carries a term (a stuck pair inside its band contributes a zero term), so the divisor is N J.
    Gradient: dl/df = 2 e_ij for a moving pair, 0 for a stuck pair inside its band, 2 (|e_ij| - tau_s,j) sign(e_ij)
    (the squared-error gradient of the excess) outside it. With tau_s = 0 it is plain MSE; with tau_s -> inf it
    is the masked loss with the divisor N J.

    Args:
        band: (J,) tau_s,j >= 0, in the units of pred/target (:meth:`in_units` divides it by the output scale when
            the net trains on standardized torques); see :func:`identify_band`.

    Raises:
        ValueError: no band, or band not a 1-D array of finite values >= 0 (its length is checked against J by
            :meth:`check` and :meth:`sums`).
    """

    learns_stuck = True
    needs_band = True

    def __init__(self, band: Any = None) -> None:
        if band is None:
            raise ValueError("the band loss needs band = (J,) tau_s,j [N·m] (see identify_band); none given")
        b = np.asarray(band.detach().cpu().numpy() if hasattr(band, "detach") else band, dtype=np.float64)
        if b.ndim != 1 or not np.all(np.isfinite(b)) or np.any(b < 0):
            raise ValueError(f"band must be (J,) finite values >= 0, got shape {b.shape}")
        self.band = b
        self._tensor: dict[Any, Any] = {}

    def check(self, n_joints: int, desc: str) -> None:
        """Raises ValueError naming ``desc`` when the band is not (J,) = (``n_joints``,)."""
        if self.band.shape != (n_joints,):
            raise ValueError(f"{desc}: the band loss needs band = (J,) = ({n_joints},) finite values >= 0 [N·m], "
                             f"got {self.band.shape}")

    def in_units(self, y_std: np.ndarray) -> BandLoss:
        """The band divided by ``y_std`` (J,), as float32 (the trainer's tensors)."""
        return BandLoss((self.band / np.asarray(y_std)).astype(np.float32))

    def params(self) -> dict[str, Any]:
        """``{"band": tau_s,j list}``."""
        return {"band": self.band.tolist()}

    def sums(self, pred: Any, target: Any, mask: Any) -> tuple[Any, Any]:
        """(sum of l_ij, N J); see :meth:`Loss.sums`. Raises ValueError also when the band is not (J,)."""
        import torch

        _check_shapes(pred, target, mask)
        if self.band.shape != (pred.shape[1],):
            raise ValueError(f"band must be (J,) = ({pred.shape[1]},) finite values >= 0, got shape "
                             f"{self.band.shape}")
        key = (pred.dtype, pred.device)
        if key not in self._tensor:
            self._tensor[key] = torch.as_tensor(self.band, dtype=pred.dtype, device=pred.device)
        r = mask.to(pred.dtype)
        e = pred - target
        outside = torch.clamp(e.abs() - self._tensor[key], min=0.0)
        return (r * e ** 2 + (1.0 - r) * outside ** 2).sum(), e.numel()


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
