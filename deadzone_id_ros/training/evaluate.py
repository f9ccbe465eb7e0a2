"""Evaluation of inverse-dynamics predictions: per-joint torque error where the joint moves, and inside the dead zone.

Accuracy is measured only on (sample, joint) pairs with r_ij = 1 (the joint moves): inside the dead zone the
measured torque is any value in the friction band and is not a function of (q, dq, ddq), so it is no ground truth.
What a model predicts there is reported separately (error against the measured torque, and the fraction of
predictions inside the friction band when the band is known, e.g. on simulator data).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..jsonrecord import JsonRecord
from ..models.base import InverseDynamicsModel
from .fit import Stacked, predict_stacked

__all__ = ["StuckMetrics", "TorqueMetrics", "check_model_joints", "evaluate_model", "evaluate_predictions",
           "json_clean", "torque_noise"]


@dataclass(frozen=True)
class StuckMetrics(JsonRecord):
    """What a model predicts inside the dead zone (pairs with r = 0), per joint (J,) in joint order; NaN where a
    joint has no stuck pair.

    Attributes:
        rmse_vs_measured_per_joint [N·m]: RMSE against the measured torque.  n_stuck_per_joint: stuck pairs.
        pred_within_band_per_joint, measured_within_band_per_joint [1]: fraction of the stuck pairs whose prediction
        / measured torque lies in the friction band, band_halfwidth_per_joint [N·m]: that band's half width; None
        when no band was given.
    """

    rmse_vs_measured_per_joint: tuple[float, ...]
    n_stuck_per_joint: tuple[int, ...]
    pred_within_band_per_joint: tuple[float, ...] | None = None
    measured_within_band_per_joint: tuple[float, ...] | None = None
    band_halfwidth_per_joint: tuple[float, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``dead_zone`` of the metrics), without the band keys when no band was given."""
        return {k: list(v) for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass(frozen=True)
class TorqueMetrics(JsonRecord):
    """Torque errors of one model on one split: per joint (J,) in joint order on pairs where the joint moves (r = 1);
    NaN where a joint has no such pair.

    Attributes:
        rmse_per_joint [N·m]; nrmse_per_joint [1] (RMSE / std of the measured torque over the same pairs);
        rmse_mean [N·m], nrmse_mean [1]: their means over the joints that have pairs (NaN when none has);
        n_moving_per_joint: moving pairs; dead_zone: the stuck pairs (:class:`StuckMetrics`).
    """

    rmse_per_joint: tuple[float, ...]
    nrmse_per_joint: tuple[float, ...]
    rmse_mean: float
    nrmse_mean: float
    n_moving_per_joint: tuple[int, ...]
    dead_zone: StuckMetrics

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written to model.json ``metrics`` and report.json ``per_seed`` (same keys as the fields)."""
        return {"rmse_per_joint": list(self.rmse_per_joint), "nrmse_per_joint": list(self.nrmse_per_joint),
                "rmse_mean": self.rmse_mean, "nrmse_mean": self.nrmse_mean,
                "n_moving_per_joint": list(self.n_moving_per_joint), "dead_zone": self.dead_zone.to_dict()}


def _rms(err: np.ndarray, mask: np.ndarray) -> np.ndarray:
    n = mask.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.sqrt((err ** 2 * mask).sum(axis=0) / np.maximum(n, 1)), np.nan)


def _normalized(rmse: np.ndarray, data: Stacked) -> np.ndarray:
    """(J,) ``rmse`` over the std of the measured torque on each joint's moving pairs (NaN where that std is 0 or
    the joint has no moving pair)."""
    r = data.r.astype(bool)
    n_mov = np.maximum(r.sum(axis=0), 1)
    mean_t = (data.tau * r).sum(axis=0) / n_mov
    std_t = np.sqrt((((data.tau - mean_t) ** 2) * r).sum(axis=0) / n_mov)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(std_t > 0, rmse / std_t, np.nan)


def torque_noise(data: Stacked) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The measured torque's sample-to-sample (white) noise, estimated from its second differences: the
    pseudo-residuals e_i = (tau_{i-1} - 2 tau_i + tau_{i+1}) / sqrt(6) of consecutive samples of one episode have
    the noise's variance where the torque's own curvature over two sample periods is small (Gasser, Sroka and
    Jennen-Steinmetz, "Residual variance and residual pattern in nonlinear regression", Biometrika 73(3), 1986).
    Counted where the middle sample's joint moves (r = 1), the pairs every RMSE of :func:`evaluate_predictions` is
    counted on. No model of the state predicts white measurement noise, so its RMSE on the same pairs is about this
    or more; a fast-changing torque makes the estimate too high, a low-pass filtered one too low.

    Args:
        data: the evaluation samples (an episode's rows are consecutive samples, :class:`~.fit.Stacked`).

    Returns:
        sigma (J,) [N·m], its normalized value (J,) [1] (sigma / std of the measured torque on the joint's moving
        pairs, as ``nrmse_per_joint``), and the pseudo-residuals counted (J,); NaN where a joint has none.
    """
    tau, r = np.asarray(data.tau, dtype=np.float64), data.r.astype(bool)
    ep = np.asarray(data.episode_index)
    # rows i-1, i, i+1 of one episode: the middle row's neighbours carry the same episode index
    inner = np.zeros(len(tau), dtype=bool)
    inner[1:-1] = (ep[:-2] == ep[1:-1]) & (ep[2:] == ep[1:-1])
    e = np.zeros_like(tau)
    e[1:-1] = (tau[:-2] - 2.0 * tau[1:-1] + tau[2:]) / math.sqrt(6.0)
    counted = r & inner[:, None]
    sigma = _rms(e, counted)
    return sigma, _normalized(sigma, data), counted.sum(axis=0)


def evaluate_predictions(pred: np.ndarray, data: Stacked, *, band_center: np.ndarray | None = None,
                         band_halfwidth: np.ndarray | None = None) -> TorqueMetrics:
    """Metrics of ``pred`` against ``data.tau``.

    Args:
        pred: (N, J) predicted torque [N·m].
        data: the evaluation samples with their dead-zone mask r.
        band_center: (N, J) centre of the friction band [N·m] (e.g. the friction-free rigid-body torque), optional.
        band_halfwidth: (J,) half width of the band (static friction torque) [N·m], optional.

    Returns:
        the metrics (:class:`TorqueMetrics`); with a band its ``dead_zone`` has the in-band fractions.

    Raises:
        ValueError: pred is not (N, J) like data.tau.
    """
    pred = np.asarray(pred, dtype=np.float64)
    if pred.shape != data.tau.shape:
        raise ValueError(f"pred must have shape {data.tau.shape}, got {pred.shape}")
    r = data.r.astype(bool)
    err = pred - data.tau
    rmse = _rms(err, r)
    n_mov = r.sum(axis=0)
    nrmse = _normalized(rmse, data)
    stuck = ~r
    dz = StuckMetrics(tuple(_rms(err, stuck).tolist()), tuple(stuck.sum(axis=0).astype(int).tolist()))
    if band_center is not None and band_halfwidth is not None:
        hw = np.asarray(band_halfwidth, dtype=np.float64)
        n_st = np.maximum(stuck.sum(axis=0), 1)
        inside_p = (np.abs(pred - band_center) <= hw) & stuck
        inside_m = (np.abs(data.tau - band_center) <= hw) & stuck
        dz = dataclasses.replace(
            dz, pred_within_band_per_joint=tuple(np.where(stuck.any(0), inside_p.sum(0) / n_st, np.nan).tolist()),
            measured_within_band_per_joint=tuple(np.where(stuck.any(0), inside_m.sum(0) / n_st, np.nan).tolist()),
            band_halfwidth_per_joint=tuple(hw.tolist()))
    return TorqueMetrics(
        rmse_per_joint=tuple(rmse.tolist()),
        nrmse_per_joint=tuple(nrmse.tolist()),
        rmse_mean=float(np.nanmean(rmse)) if np.isfinite(rmse).any() else float("nan"),
        nrmse_mean=float(np.nanmean(nrmse)) if np.isfinite(nrmse).any() else float("nan"),
        n_moving_per_joint=tuple(n_mov.astype(int).tolist()),
        dead_zone=dz,
    )


def evaluate_model(model: InverseDynamicsModel, data: Stacked, **band: Any) -> TorqueMetrics:
    """:func:`evaluate_predictions` of the model's torques on ``data`` (:func:`~.fit.predict_stacked`: a history
    method's model reads each episode as one trajectory).

    Raises:
        ValueError: the model's joints differ from the data's (names and order).  DataError: a history method's
            model on data of another sample rate.
    """
    check_model_joints(model, data)
    return evaluate_predictions(predict_stacked(model, data), data, **band)


def check_model_joints(model: InverseDynamicsModel, data: Stacked) -> None:
    """Refuse to evaluate ``model`` on ``data`` unless their joints are the same, in the same order.

    Raises:
        ValueError: the model's joints differ from the data's (names and order); the message lists both.
    """
    if tuple(model.joint_names) != tuple(data.joint_names):
        raise ValueError(f"model joints {list(model.joint_names)} differ from data joints {list(data.joint_names)}")


def json_clean(obj: object) -> Any:
    """Recursively convert numpy scalars/arrays to Python and NaN/inf to None, so json.dumps writes valid JSON."""
    if isinstance(obj, dict):
        return {str(k): json_clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_clean(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return json_clean(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj
