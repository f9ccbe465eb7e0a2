"""Fit one method on a split: stack episodes, apply the dead-zone mask, train or identify, wrap as LearnedModel."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..data.deadzone import DeadZone
from ..data.types import Episode
from ..errors import DataError
from ..models.losses import LOSSES, conventional_keep, identify_band
from ..models.mlp import MLPWeights
from ..models.predictor import METHODS, LearnedModel
from ..models.rbd import RigidBodyModel, RigidBodyRegressor, fit_rigid_body
from .batched import MLPSpec, train_mlps
from .config import TrainConfig
from .trainer import TrainArrays, TrainInfo, train_mlp

__all__ = ["FitPlan", "FitResult", "Stacked", "fit_method", "fit_plans", "fit_rbd", "identify_band_halfwidth",
           "plan_fits", "stack_episodes", "usable_fraction"]


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
    conventional: fraction of samples with every joint moving; mse_all and band: 1 (band uses the stuck pairs
    through its band).

    Raises:
        ValueError: unknown method.
    """
    if method not in METHODS:
        raise ValueError(f"method = {method!r} must be one of {list(METHODS)}")
    if r.size == 0:
        return 0.0
    if method == "conventional":
        return float(conventional_keep(r).mean())
    if method in ("mse_all", "band"):
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


@dataclass
class FitPlan:
    """One (method, seed) fit prepared up to the network training: the data it trains on, its rigid-body part.

    Attributes:
        method, seed: what is fitted.  joint_names: (J,).  dead_zone: stored with the model.  rbd: the identified
        rigid-body part (rbd, hybrid) or None.  spec: the network to train (None: rbd only).  usable_fraction:
        see :func:`usable_fraction`.  info: the training summary so far.
    """

    method: str
    seed: int
    joint_names: tuple[str, ...]
    dead_zone: DeadZone
    rbd: RigidBodyModel | None
    spec: MLPSpec | None
    usable_fraction: float
    info: dict[str, Any]

    def finish(self, trained: tuple[MLPWeights, TrainInfo] | None) -> FitResult:
        """The fit, given the trained network of :attr:`spec` (None when there is none)."""
        info = dict(self.info)
        mlp = None
        if trained is not None:
            mlp = trained[0]
            info.update(trained[1].to_dict())
        model = LearnedModel(self.joint_names, self.method, mlp=mlp, rbd=self.rbd, dead_zone=self.dead_zone)
        return FitResult(model, self.usable_fraction, info)


def fit_rbd(method: str, train: Stacked, regressor: RigidBodyRegressor | None) -> RigidBodyModel:
    """Identify the rigid-body model on the moving pairs of ``train`` (deterministic: seeds share it).

    Raises:
        DataError: no regressor (no URDF), or too few moving rows.
    """
    if regressor is None:
        raise DataError(f"method {method!r} needs a URDF whose joints are {list(train.joint_names)} (pass --urdf)")
    try:
        return fit_rigid_body(regressor, train.q, train.dq, train.ddq, train.tau, train.r)
    except ValueError as err:
        raise DataError(f"method {method!r}: {err}") from err


def identify_band_halfwidth(train: Stacked, rbd: RigidBodyModel | None) -> np.ndarray:
    """tau_s,j [N·m] (J,) of the band loss, identified on the training split.

    With a rigid-body model (fitted on the moving pairs): :func:`~deadzone_id_ros.models.losses.identify_band` of
    the residual tau - rbd(q, dq, ddq), i.e. the 95 % quantile of |residual| over each joint's stuck pairs, at
    least the identified Coulomb friction |Fc_j|. Without one (no URDF): the same quantile of the residual of a
    linear least-squares model on [1, q, sin q, cos q, dq, ddq] fitted per joint on its moving pairs.
    """
    if rbd is not None:
        residual = train.tau - rbd.predict(train.q, train.dq, train.ddq)
        return identify_band(residual, train.r, rbd.coulomb())
    feats = np.concatenate([np.ones((len(train), 1)), train.q, np.sin(train.q), np.cos(train.q), train.dq,
                            train.ddq], axis=1)
    residual = np.zeros_like(train.tau)
    for j in range(train.tau.shape[1]):
        rows = train.r[:, j]
        if rows.sum() >= feats.shape[1]:
            coef, *_ = np.linalg.lstsq(feats[rows], train.tau[rows, j], rcond=None)
            residual[:, j] = train.tau[:, j] - feats @ coef
    return identify_band(residual, train.r)


def plan_fits(method: str, seeds: Sequence[int], train: Stacked, val: Stacked, dead_zone: DeadZone, *,
              regressor: RigidBodyRegressor | None = None, rbd: RigidBodyModel | None = None,
              band: np.ndarray | None = None, desc: str | None = None) -> list[FitPlan]:
    """Prepare ``method`` for each seed: the seeds share the rigid-body fit, the target arrays and the band.

    Args:
        method: one of :data:`~deadzone_id_ros.models.METHODS`.  seeds: training seeds (rbd: the first only).
        train, val: stacked splits (from :func:`stack_episodes` with the same dead zone).
        regressor: rigid-body structure (needed by rbd/hybrid unless ``rbd`` is given; band uses it if given).
        rbd: an already identified rigid-body model to reuse.
        band: (J,) tau_s,j [N·m] for the band method (default: :func:`identify_band_halfwidth`).
        desc: label prefix for errors.

    Raises:
        ValueError: unknown method.
        DataError: rbd/hybrid without a URDF; conventional with no sample where every joint moves; too little data.
    """
    if method not in METHODS:
        raise ValueError(f"method = {method!r} must be one of {list(METHODS)}")
    want_rbd, want_mlp = METHODS[method]
    info: dict[str, Any] = {"method": method}
    if rbd is None and (want_rbd or (method == "band" and band is None and regressor is not None)):
        rbd = fit_rbd(method, train, regressor)
        info["rbd_rows"] = int(train.r.sum())
    usable = usable_fraction(method, train.r)
    if not want_mlp:
        return [FitPlan(method, seeds[0], train.joint_names, dead_zone, rbd, None, usable, {**info, "seed": seeds[0]})]
    loss = LOSSES[method]
    tr, va = train, val
    if method == "conventional":
        keep = conventional_keep(train.r)
        if not keep.any():
            raise DataError("conventional: no training sample has every joint outside its dead zone "
                            f"(alpha = {dead_zone.alpha}); the method has nothing to learn from")
        tr, va = train.subset(keep), val.subset(conventional_keep(val.r))
    y_tr, y_va = tr.tau, va.tau
    if want_rbd and rbd is not None:  # hybrid: learn the residual
        y_tr = tr.tau - rbd.predict(tr.q, tr.dq, tr.ddq)
        y_va = va.tau - rbd.predict(va.q, va.dq, va.ddq) if len(va) else va.tau
    if method == "band":
        band = identify_band_halfwidth(train, rbd) if band is None else np.asarray(band, dtype=np.float64)
        info["band_halfwidth"] = band.tolist()
    r_tr = tr.r if loss in ("masked", "band") else np.ones_like(tr.r)
    r_va = va.r if loss in ("masked", "band") else np.ones_like(va.r)
    arr_tr, arr_va = TrainArrays(tr.x, y_tr, r_tr), TrainArrays(va.x, y_va, r_va)
    info.update(train_samples=len(tr), val_samples=len(va))
    keep_rbd = rbd if want_rbd else None
    return [FitPlan(method, s, train.joint_names, dead_zone, keep_rbd,
                    MLPSpec(arr_tr, arr_va, loss, s, f"{desc or method} seed {s}",
                            band=band if method == "band" else None),
                    usable, {**info, "seed": s}) for s in seeds]


def fit_plans(plans: Sequence[FitPlan], config: TrainConfig) -> list[FitResult]:
    """Train the networks of ``plans`` together (:func:`~deadzone_id_ros.training.batched.train_mlps`, one batched
    run per batch size) and finish each plan; results in the order of ``plans``, each what it gets alone.

    Raises:
        DataError: a model without training data.
    """
    groups: dict[int, list[int]] = {}
    for k, p in enumerate(plans):
        if p.spec is not None:
            groups.setdefault(min(config.batch_size, len(p.spec.train)), []).append(k)
    trained: dict[int, tuple[MLPWeights, TrainInfo]] = {}
    for idx in groups.values():
        specs = [plans[k].spec for k in idx]
        trained.update(zip(idx, train_mlps(specs, config)))  # type: ignore[arg-type]
    return [p.finish(trained.get(k)) for k, p in enumerate(plans)]


def fit_method(method: str, train: Stacked, val: Stacked, dead_zone: DeadZone, config: TrainConfig, *,
               regressor: RigidBodyRegressor | None = None, rbd: RigidBodyModel | None = None,
               desc: str | None = None) -> FitResult:
    """Fit ``method`` on ``train`` (early stopping on ``val``), alone, with ``config.seed``
    (:func:`~deadzone_id_ros.training.trainer.train_mlp`; ``compare`` batches its fits with :func:`fit_plans`).

    Args:
        method: masked | conventional | mse_all | band | rbd | hybrid.
        train, val: stacked splits (from :func:`stack_episodes` with the same dead zone).
        dead_zone: stored with the model.
        config: training settings (seed, architecture, optimizer).
        regressor: rigid-body structure (needed by rbd/hybrid unless ``rbd`` is given; band identifies its band
            with it when given).
        rbd: an already identified rigid-body model to reuse (it is deterministic, so seeds can share it).
        desc: progress-bar label.

    Raises:
        ValueError: unknown method.
        DataError: rbd/hybrid without a URDF; conventional with no sample where every joint moves; too little data.
    """
    plan = plan_fits(method, [config.seed], train, val, dead_zone, regressor=regressor, rbd=rbd, desc=desc)[0]
    if plan.spec is None:
        return plan.finish(None)
    s = plan.spec
    return plan.finish(train_mlp(s.train, s.val, s.loss, config, desc=desc or method, band=s.band))
