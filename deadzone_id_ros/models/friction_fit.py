"""Identification of the Stribeck and load-dependent friction of :mod:`deadzone_id_ros.models.friction` with the
rigid body (core, no ROS): the prior fit of :func:`~deadzone_id_ros.models.rbd.fit_rigid_body` on the regressor
with the friction columns, vs chosen by that fit's cross-validation, and the static band of the stuck pairs."""

from __future__ import annotations

import numpy as np

from .friction import STRIBECK_EXPONENT, ExtendedFriction
from .rbd import RigidBodyFitInfo, RigidBodyModel, fit_rigid_body

__all__ = ["BAND_QUANTILE", "VELOCITY_GRID", "fit_extended_friction", "stuck_band"]

#: Stribeck velocities tried by :func:`fit_extended_friction`, as multiples of each joint's RMS velocity over its
#: moving training pairs (dimensionless; the same for every robot, chosen by cross-validation).
VELOCITY_GRID = (0.1, 0.3, 1.0)
#: The quantile of |residual| on stuck pairs reported as the static band (the band loss uses the same).
BAND_QUANTILE = 0.95


def stuck_band(model: RigidBodyModel, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, tau: np.ndarray,
               mask: np.ndarray) -> np.ndarray:
    """(J,) static band [N·m]: per joint, the 95% quantile of |tau - model without dry friction| over its stuck
    pairs (``mask`` False), NaN for a joint never stuck. Dry friction: the Coulomb, Stribeck and load columns.

    Args:
        model: a fitted rigid body.  q, dq, ddq, tau: (N, J).  mask: (N, J) bool r_ij (True: moving).
    """
    dry = {"coulomb", "stribeck", "load", "load_stribeck"}
    names = model.regressor.column_names
    coef = np.array([0.0 if names[c].rsplit(".", 1)[1] in dry else v
                     for c, v in zip(model.columns, model.coefficients)])
    base = RigidBodyModel(model.regressor, model.columns, coef).predict(q, dq, ddq)
    out = np.full(q.shape[1], np.nan)
    for j in range(q.shape[1]):
        stuck = ~mask[:, j]
        if stuck.any():
            out[j] = float(np.quantile(np.abs(tau[stuck, j] - base[stuck, j]), BAND_QUANTILE))
    return out


def fit_extended_friction(prior: RigidBodyModel, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, tau: np.ndarray,
                          mask: np.ndarray, *, load: bool = True, grid: tuple[float, ...] = VELOCITY_GRID,
                          exponent: float = STRIBECK_EXPONENT, folds: int = 5) -> RigidBodyModel:
    """Identify the rigid body with Stribeck (and load-dependent) friction (module docstring).

    Each vs of ``grid`` (times each joint's RMS velocity over its moving pairs) is fitted with the prior fit of
    :func:`~deadzone_id_ros.models.rbd.fit_rigid_body` (lambda by cross-validation), the load reference taken from
    ``prior``; the vs with the lowest cross-validated normalized RMSE is refitted once with the load reference of
    its own fit. When ``prior``'s own cross-validated nRMSE (same rows and folds) is no worse than the best vs's,
    the extra columns do not pay on these data and a copy of ``prior`` is returned (no friction columns,
    ``stribeck_velocity`` None).

    Args:
        prior: the rigid body without these terms (``rbd``), fitted on the same rows with the same folds by the
            prior fit (its cross-validated nRMSE is compared); gives the first load reference.
        q, dq, ddq, tau: (N, J) [rad, rad/s, rad/s², N·m].  mask: (N, J) bool r_ij, the pairs fitted on.
        load: add the load-dependent columns (False: Stribeck only).
        grid: vs multiples to try (each > 0).  exponent: the Stribeck exponent.  folds: cross-validation folds.

    Returns:
        the fitted model; ``fit_info`` adds ``stribeck_velocity`` (J,) [rad/s] or None, ``velocity_cv`` (multiple,
        or "none" for ``prior``, -> CV nRMSE), ``breakaway`` (J,) Fc + Fst [N·m] and ``static_band`` (J,) from the
        stuck pairs (:func:`stuck_band`).

    Raises:
        ValueError: an empty or non-positive grid, no moving pair of a joint, or a failed fit (as fit_rigid_body).
    """
    if not grid or min(grid) <= 0:
        raise ValueError(f"grid = {grid!r} must hold vs multiples > 0")
    mask = np.asarray(mask, dtype=bool)
    dq = np.asarray(dq, dtype=np.float64)
    n = mask.sum(axis=0)
    if not np.all(n > 0):
        raise ValueError(f"joints {[prior.joint_names[j] for j in np.flatnonzero(n == 0)]} have no moving pair")
    rms = np.sqrt((dq ** 2 * mask).sum(axis=0) / n)
    rms = np.maximum(rms, 1e-6)
    reg0 = prior.regressor
    k = reg0.n_inertial + reg0.n_joints

    def reference(model: RigidBodyModel) -> np.ndarray | None:
        if not load:
            return None
        full = np.zeros(model.regressor.n_columns)
        full[model.columns] = model.coefficients
        return full[:k]

    def fit(mult: float, ref: np.ndarray | None) -> RigidBodyModel:
        reg = reg0.with_friction(ExtendedFriction(mult * rms, exponent, ref))
        return fit_rigid_body(reg, q, dq, ddq, tau, mask, folds=folds)

    first_ref = reference(prior)
    scores: dict[float, float] = {}
    fits: dict[float, RigidBodyModel] = {}
    for mult in grid:
        fits[mult] = fit(mult, first_ref)
        scores[mult] = min(fits[mult].fit_info.get("cv_nrmse", {}).values(), default=float("inf"))
    best = min(grid, key=lambda m: scores[m])
    without = min(prior.fit_info.get("cv_nrmse", {}).values(), default=float("inf"))
    if without <= scores[best]:  # the cross-validation says the extra columns do not pay: the prior fit as it is
        model = RigidBodyModel(prior.regressor, prior.columns, prior.coefficients, RigidBodyFitInfo(**prior.fit_info))
    else:
        model = fit(best, reference(fits[best])) if load else fits[best]
    p = model.parameters()
    names = model.joint_names
    model.fit_info.update({
        "stribeck_velocity": None if model.regressor.friction is None else (best * rms).tolist(),
        "velocity_cv": {"none": without, **{f"{m:g}": v for m, v in scores.items()}},
        "breakaway": [p.get(f"{j}.coulomb", 0.0) + p.get(f"{j}.stribeck", 0.0) for j in names],
        "static_band": stuck_band(model, q, dq, ddq, tau, mask).tolist(),
    })
    return model
