"""Fit one method on a split: stack episodes, apply the dead-zone mask, train or identify, wrap as LearnedModel."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..data.deadzone import DeadZone
from ..data.types import Episode
from ..errors import DataError
from ..models.losses import LOSSES, conventional_keep
from ..models.predictor import METHODS, LearnedModel
from ..models.rbd import RigidBodyModel, RigidBodyRegressor, fit_rigid_body
from .config import TrainConfig
from .trainer import TrainArrays, train_mlp

__all__ = ["FitResult", "Stacked", "fit_method", "stack_episodes", "usable_fraction"]


@dataclass
class Stacked:
    """Episodes concatenated sample-wise, arrays in ``joint_names`` order.

    Attributes:
        joint_names: (J,).  q, dq, ddq, tau: (N, J) [rad, rad/s, rad/s², N·m].  r: (N, J) bool dead-zone mask
        (True: joint moving).  episode_index: (N,) index of the source episode of each sample.
    """

    joint_names: tuple[str, ...]
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    tau: np.ndarray
    r: np.ndarray
    episode_index: np.ndarray

    def __len__(self) -> int:
        return len(self.q)

    @property
    def x(self) -> np.ndarray:
        """(N, 3J) network input [q, dq, ddq]."""
        return np.concatenate([self.q, self.dq, self.ddq], axis=1)

    def subset(self, rows: np.ndarray) -> Stacked:
        """The rows selected by a boolean (N,) or index array."""
        return Stacked(self.joint_names, self.q[rows], self.dq[rows], self.ddq[rows], self.tau[rows], self.r[rows],
                       self.episode_index[rows])


def stack_episodes(episodes: Sequence[Episode], dead_zone: DeadZone) -> Stacked:
    """Concatenate ``episodes`` and compute r with ``dead_zone`` (fitted on the training split).

    Raises:
        DataError: an episode's joints differ from the dead zone's (names and order), or no episodes.
    """
    if not episodes:
        raise DataError("no episodes to stack")
    names = dead_zone.joint_names
    for ep in episodes:
        if tuple(ep.joint_names) != tuple(names):
            raise DataError(
                f"episode {ep.name} ({ep.source}) has joints {list(ep.joint_names)}, expected {list(names)}"
            )

    def cat(attr: str) -> np.ndarray:
        return np.concatenate([getattr(ep, attr) for ep in episodes], axis=0).astype(np.float64)

    dq = cat("dq")
    return Stacked(tuple(names), cat("q"), dq, cat("ddq"), cat("tau"), dead_zone.mask(dq),
                   np.concatenate([np.full(len(ep), k) for k, ep in enumerate(episodes)]))


def usable_fraction(method: str, r: np.ndarray) -> float:
    """Fraction of the training data a method learns from.

    masked / hybrid / rbd: fraction of (sample, joint) pairs with r_ij = 1 (rbd: per-joint moving rows);
    conventional: fraction of samples with every joint moving; mse_all: 1.

    Raises:
        ValueError: unknown method.
    """
    if method not in METHODS:
        raise ValueError(f"method = {method!r} must be one of {list(METHODS)}")
    if r.size == 0:
        return 0.0
    if method == "conventional":
        return float(conventional_keep(r).mean())
    if method == "mse_all":
        return 1.0
    return float(np.asarray(r, bool).mean())


@dataclass
class FitResult:
    """A fitted method.

    Attributes:
        model: the model (numpy predict).  usable_fraction: see :func:`usable_fraction`.
        info: training summary (steps, losses, time, samples used) for the report and model.json.
    """

    model: LearnedModel
    usable_fraction: float
    info: dict[str, Any] = field(default_factory=dict)


def fit_method(method: str, train: Stacked, val: Stacked, dead_zone: DeadZone, config: TrainConfig, *,
               regressor: RigidBodyRegressor | None = None, rbd: RigidBodyModel | None = None,
               desc: str | None = None) -> FitResult:
    """Fit ``method`` on ``train`` (early stopping on ``val``).

    Args:
        method: masked | conventional | mse_all | rbd | hybrid.
        train, val: stacked splits (from :func:`stack_episodes` with the same dead zone).
        dead_zone: stored with the model.
        config: training settings (seed, architecture, optimizer).
        regressor: rigid-body structure (needed by rbd/hybrid unless ``rbd`` is given).
        rbd: an already identified rigid-body model to reuse (it is deterministic, so seeds can share it).
        desc: progress-bar label.

    Raises:
        ValueError: unknown method.
        DataError: rbd/hybrid without a URDF; conventional with no sample where every joint moves; too little data.
    """
    if method not in METHODS:
        raise ValueError(f"method = {method!r} must be one of {list(METHODS)}")
    want_rbd, want_mlp = METHODS[method]
    info: dict[str, Any] = {"method": method, "seed": config.seed}
    if want_rbd and rbd is None:
        if regressor is None:
            raise DataError(f"method {method!r} needs a URDF whose joints are {list(train.joint_names)} (pass --urdf)")
        try:
            rbd = fit_rigid_body(regressor, train.q, train.dq, train.ddq, train.tau, train.r)
        except ValueError as err:
            raise DataError(f"method {method!r}: {err}") from err
        info["rbd_rows"] = int(train.r.sum())
    mlp = None
    if want_mlp:
        loss = LOSSES[method]
        tr, va = train, val
        if method == "conventional":
            keep = conventional_keep(train.r)
            if not keep.any():
                raise DataError("conventional: no training sample has every joint outside its dead zone "
                                f"(alpha = {dead_zone.alpha}); the method has nothing to learn from")
            tr, va = train.subset(keep), val.subset(conventional_keep(val.r))
        y_tr, y_va = tr.tau, va.tau
        if rbd is not None:  # hybrid: learn the residual
            y_tr = tr.tau - rbd.predict(tr.q, tr.dq, tr.ddq)
            y_va = va.tau - rbd.predict(va.q, va.dq, va.ddq) if len(va) else va.tau
        r_tr = tr.r if loss == "masked" else np.ones_like(tr.r)
        r_va = va.r if loss == "masked" else np.ones_like(va.r)
        mlp, tinfo = train_mlp(TrainArrays(tr.x, y_tr, r_tr), TrainArrays(va.x, y_va, r_va), loss, config,
                               desc=desc or method)
        info.update(tinfo.to_dict())
        info["train_samples"] = len(tr)
        info["val_samples"] = len(va)
    model = LearnedModel(train.joint_names, method, mlp=mlp, rbd=rbd, dead_zone=dead_zone)
    return FitResult(model, usable_fraction(method, train.r), info)
