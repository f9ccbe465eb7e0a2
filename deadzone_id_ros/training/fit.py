"""Fitting on a split: stack episodes with the dead-zone mask, identify the rigid body and the band, train the planned
networks (:mod:`.planner` makes the plans), wrap each as a LearnedModel."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..data.deadzone import DeadZone
from ..data.types import Episode
from ..errors import DataError
from ..models.base import InverseDynamicsModel
from ..models.history import JointHistory
from ..models.losses import identify_band
from ..models.methods import get_method
from ..models.mlp import MLPWeights
from ..models.predictor import LearnedModel
from ..models.rbd import RigidBodyModel, RigidBodyRegressor, fit_rigid_body
from .config import TrainConfig
from .fit_summary import FitSummary
from .parallel import train_each
from .trainer import MLPSpec, TrainInfo

__all__ = ["FitPlan", "FitResult", "Stacked", "common_sample_period", "fit_plans", "fit_rbd", "identify_band_halfwidth",
           "predict_stacked", "stack_episodes", "usable_fraction"]


@dataclass
class Stacked:
    """Episodes concatenated sample-wise, arrays in ``joint_names`` order.

    Attributes:
        joint_names: (J,).  q, dq, ddq, tau: (N, J) [rad, rad/s, rad/s², N·m].  r: (N, J) bool dead-zone mask
        (True: joint moving).  episode_index: (N,) index of the source episode of each sample (an episode's
        samples are consecutive rows, one sample period apart).  sample_period: the episodes' common sample
        period [s], or None when unknown or when they differ (a history method then refuses the data).
    """

    joint_names: tuple[str, ...]
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    tau: np.ndarray
    r: np.ndarray
    episode_index: np.ndarray
    sample_period: float | None = None

    def __len__(self) -> int:
        return len(self.q)

    @property
    def x(self) -> np.ndarray:
        """(N, 3J) network input [q, dq, ddq]."""
        return np.concatenate([self.q, self.dq, self.ddq], axis=1)

    def subset(self, rows: np.ndarray) -> Stacked:
        """The rows selected by a boolean (N,) or index array. The sample period is kept only when the selection
        keeps whole episodes in order (their rows stay consecutive samples); otherwise it is None, which a history
        method refuses."""
        picked = np.zeros(len(self), dtype=bool)
        picked[rows] = True
        index = np.arange(len(self))[rows]
        whole = bool(np.all(picked[np.isin(self.episode_index, self.episode_index[picked])])) and \
            bool(np.all(np.diff(index) > 0))
        return Stacked(self.joint_names, self.q[rows], self.dq[rows], self.ddq[rows], self.tau[rows], self.r[rows],
                       self.episode_index[rows], self.sample_period if whole else None)


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
                   np.concatenate([np.full(len(ep), k) for k, ep in enumerate(episodes)]),
                   common_sample_period(episodes))


def common_sample_period(episodes: Sequence[Episode]) -> float | None:
    """The median time step [s] of ``episodes`` when they all share it (within 1%), else None (also for episodes
    of fewer than two samples only)."""
    steps = [float(np.median(np.diff(ep.t))) for ep in episodes if len(ep.t) > 1]
    if not steps or min(steps) <= 0:
        return None
    dt = float(np.median(steps))
    return dt if max(abs(s - dt) for s in steps) <= 0.01 * dt else None


def predict_stacked(model: InverseDynamicsModel, data: Stacked) -> np.ndarray:
    """tau (N, J) [N·m] of ``model`` on every row of ``data``: ``model.predict(q, dq, ddq)``, or for a model that
    reads the joint-state history (a :class:`~deadzone_id_ros.models.predictor.LearnedModel` of a history method),
    each episode's rows as one trajectory at ``data.sample_period``
    (:meth:`~deadzone_id_ros.models.predictor.LearnedModel.predict_sequence`).

    Raises:
        ValueError: shapes that do not match the model's joints.  DataError: for a history model, data whose sample
            period is not the one it was trained at (or unknown).
    """
    history: JointHistory | None = getattr(model, "history", None)
    if history is not None:
        try:
            history.check_period(data.sample_period, f"method {getattr(model, 'method', '?')!r}")
        except ValueError as err:
            raise DataError(str(err)) from err
        return model.predict_sequence(data.q, data.dq, data.ddq, data.sample_period,  # type: ignore[attr-defined]
                                      data.episode_index)
    return np.asarray(model.predict(data.q, data.dq, data.ddq), dtype=float)


def usable_fraction(method: str, r: np.ndarray) -> float:
    """Fraction of the training data ``method`` learns from, for the mask r (N, J)
    (:meth:`~deadzone_id_ros.models.methods.Method.usable_fraction`).

    Raises:
        ValueError: unknown method.
    """
    return get_method(method).usable_fraction(r)


@dataclass
class FitResult:
    """A fitted method.

    Attributes:
        model: the model (numpy predict).  usable_fraction: see :func:`usable_fraction`.
        info: the fit's record (samples used, loss, band, training steps, losses, time) for the report and
            model.json.
    """

    model: LearnedModel
    usable_fraction: float
    info: FitSummary


@dataclass
class FitPlan:
    """One (method, seed) fit prepared up to the network training: the data it trains on, its rigid-body part.

    Attributes:
        method, seed: what is fitted.  joint_names: (J,).  dead_zone: stored with the model.  rbd: the identified
        rigid-body part (rbd, hybrid) or None.  spec: the network to train (None: rbd only).  usable_fraction:
        see :func:`usable_fraction`.  info: the fit's record so far (no training figures yet).  fixed_mlp: a
        network part that is not trained (the constant baseline), or None.  history: the joint-state window
        its network reads (a history method), or None.
    """

    method: str
    seed: int
    joint_names: tuple[str, ...]
    dead_zone: DeadZone
    rbd: RigidBodyModel | None
    spec: MLPSpec | None
    usable_fraction: float
    info: FitSummary
    fixed_mlp: MLPWeights | None = None
    history: JointHistory | None = None

    def finish(self, trained: tuple[MLPWeights, TrainInfo] | None) -> FitResult:
        """The fit, given the trained network of :attr:`spec` (None when there is none)."""
        info, mlp = self.info, self.fixed_mlp
        if trained is not None:
            mlp, t = trained
            info = info.with_training(t.steps, t.best_step, t.best_val_loss, t.final_train_loss, t.stopped_early,
                                      t.seconds, t.samples_per_s)
        model = LearnedModel(self.joint_names, self.method, mlp=mlp, rbd=self.rbd, dead_zone=self.dead_zone,
                             history=self.history)
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


def fit_plans(plans: Sequence[FitPlan], config: TrainConfig) -> list[FitResult]:
    """Train the networks of ``plans``, each alone, over the worker processes of
    :func:`~deadzone_id_ros.training.parallel.train_each`, and finish each plan; results in the order of ``plans``,
    each what it gets alone (whatever the number of workers).

    Raises:
        DataError: a model without training data.
    """
    idx = [k for k, p in enumerate(plans) if p.spec is not None]
    trained = dict(zip(idx, train_each([plans[k].spec for k in idx], config)))  # type: ignore[misc]
    return [p.finish(trained.get(k)) for k, p in enumerate(plans)]
