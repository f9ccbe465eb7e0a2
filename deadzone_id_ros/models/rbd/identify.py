"""Identification of the rigid body's parameters (:func:`fit_rigid_body`): plain least squares on the base columns,
or every parameter with a cross-validated prior toward the URDF, optionally physically consistent (the fits of
:mod:`deadzone_id_ros.models.rbd`, its docstring says why each)."""

from __future__ import annotations

import numpy as np

from ..base import check_joint_arrays
from .consistency import solve_consistent
from .model import RigidBodyFitInfo, RigidBodyModel
from .regressor import CHUNK_ROWS, RigidBodyRegressor

__all__ = ["PRIOR_GRID", "fit_rigid_body"]

#: prior weights lambda tried by the cross-validation of :func:`fit_rigid_body` (dimensionless, see the docstring
#: of :mod:`deadzone_id_ros.models.rbd`)
PRIOR_GRID = (1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)


def fit_rigid_body(
    regressor: RigidBodyRegressor,
    q: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray,
    tau: np.ndarray,
    mask: np.ndarray | None = None,
    *,
    prior_weight: float | str | None = "cv",
    folds: int = 5,
    rcond: float = 1e-10,
    consistent: bool = False,
) -> RigidBodyModel:
    """Identify the parameters on the rows where ``mask`` is True (both fits: the docstring of
    :mod:`deadzone_id_ros.models.rbd`).

    Args:
        regressor: the structure (URDF, joints, smooth-sign eps).
        q, dq, ddq, tau: (N, J) [rad, rad/s, rad/s², N·m].
        mask: (N, J) bool r_ij; a (sample, joint) row enters the fit only where True (default: every row).
        prior_weight: ``"cv"`` (default): every parameter, with the URDF prior weighted by the lambda of
            :data:`PRIOR_GRID` that cross-validates best; a number: that lambda; None: plain least squares on the
            base columns.
        folds: cross-validation folds (contiguous stretches of the rows), >= 2.
        rcond: relative cut-off of small singular values (badly excited directions) of the plain fit.
        consistent: constrain every body's pseudo-inertia to be positive definite (the package docstring; needs a
            ``prior_weight``, 0 for none).

    Returns:
        the fitted :class:`~.model.RigidBodyModel` (``fit_info`` says which lambda and why).

    Raises:
        ValueError: shapes differ, fewer usable rows than base parameters, a bad ``prior_weight`` or ``folds``,
            ``consistent`` without a prior weight, or the constrained problem has no solution (the solver's status).
    """
    if consistent and prior_weight is None:
        raise ValueError("consistent=True fits every parameter: give prior_weight ('cv' or a number >= 0)")
    q, dq, ddq = check_joint_arrays(regressor.n_joints, q=q, dq=dq, ddq=ddq)
    tau = np.asarray(tau, dtype=np.float64)
    if tau.shape != q.shape or q.ndim != 2:
        raise ValueError(f"tau must have the shape of q (N, {regressor.n_joints}), got {tau.shape} and {q.shape}")
    mask = np.ones(q.shape, bool) if mask is None else np.asarray(mask, dtype=bool)
    if mask.shape != q.shape:
        raise ValueError(f"mask must have shape {q.shape}, got {mask.shape}")
    cols = regressor.base_columns()
    n_rows = int(mask.sum())
    if n_rows < len(cols):
        raise ValueError(f"only {n_rows} moving (sample, joint) rows for {len(cols)} base parameters")
    if prior_weight is not None:
        if not (prior_weight == "cv" or (isinstance(prior_weight, (int, float)) and prior_weight >= 0)):
            raise ValueError(f"prior_weight = {prior_weight!r} must be 'cv', a number >= 0 or None")
        if not (isinstance(folds, int) and folds >= 2):
            raise ValueError(f"folds = {folds!r} must be an integer >= 2")
        return _fit_with_prior(regressor, q, dq, ddq, tau, mask, prior_weight, folds, consistent)
    import scipy.linalg  # here, not at the top: `deadzone-id --help` must not load scipy

    R: np.ndarray | None = None
    for s in range(0, len(q), CHUNK_ROWS):
        sl = slice(s, s + CHUNK_ROWS)
        m = mask[sl]
        if not m.any():
            continue
        W = regressor.regressor(q[sl], dq[sl], ddq[sl])[:, :, cols][m]
        aug = np.concatenate([W, tau[sl][m][:, None]], axis=1)
        stacked = aug if R is None else np.vstack([R, aug])
        R = scipy.linalg.qr(stacked, mode="r")[0][: len(cols) + 1]
    assert R is not None
    K = len(cols)
    coef, *_ = scipy.linalg.lstsq(R[:K, :K], R[:K, K], cond=rcond)
    return RigidBodyModel(regressor, cols, np.asarray(coef, dtype=np.float64),
                          RigidBodyFitInfo(prior_weight=None, rows=n_rows))


def _normal_equations(regressor: RigidBodyRegressor, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray,
                      tau: np.ndarray, mask: np.ndarray, folds: int) -> tuple[np.ndarray, ...]:
    """Per fold k and joint j: A (K, J, P, P) = W^T W, b (K, J, P) = W^T tau, yy (K, J), n (K, J) over moving rows."""
    P, J = regressor.n_columns, regressor.n_joints
    A, b = np.zeros((folds, J, P, P)), np.zeros((folds, J, P))
    yy, n = np.zeros((folds, J)), np.zeros((folds, J))
    fold = np.minimum(np.arange(len(q)) * folds // max(len(q), 1), folds - 1)
    for s in range(0, len(q), CHUNK_ROWS):
        sl = slice(s, s + CHUNK_ROWS)
        if not mask[sl].any():
            continue
        W = regressor.regressor(q[sl], dq[sl], ddq[sl])
        for j in range(J):
            m = mask[sl, j]
            for k in np.unique(fold[sl][m]):
                rows = m & (fold[sl] == k)
                Wj, yj = W[rows, j, :], tau[sl][rows, j]
                A[k, j] += Wj.T @ Wj
                b[k, j] += Wj.T @ yj
                yy[k, j] += yj @ yj
                n[k, j] += len(yj)
    return A, b, yy, n


def _fit_with_prior(regressor: RigidBodyRegressor, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, tau: np.ndarray,
                    mask: np.ndarray, prior_weight: float | str, folds: int,
                    consistent: bool = False) -> RigidBodyModel:
    """The prior fit of :func:`fit_rigid_body` (package docstring): lambda by K-fold CV, then a fit on every row."""
    A, b, yy, n = _normal_equations(regressor, q, dq, ddq, tau, mask, folds)
    theta0 = regressor.prior_parameters()
    n_j = n.sum(0)
    s1 = np.array([(tau[:, j][mask[:, j]]).sum() for j in range(regressor.n_joints)])
    var_j = np.where(n_j > 1, (yy.sum(0) - s1 ** 2 / np.maximum(n_j, 1)) / np.maximum(n_j, 1), 0.0)
    scale = np.sqrt(np.maximum(var_j, 1e-12 * max(float(var_j.max()), 1e-300)))
    w = np.where(n_j > 0, 1.0 / scale ** 2, 0.0)

    import scipy.linalg  # here, not at the top: `deadzone-id --help` must not load scipy

    def solve(Ak: np.ndarray, bk: np.ndarray, rows: float, lam: float) -> np.ndarray:
        G = np.einsum("j,jpq->pq", w, Ak) / rows
        g = np.einsum("j,jp->p", w, bk) / rows
        s2 = np.diag(G).copy()
        s2 = np.maximum(s2, 1e-10 * max(float(s2.max()), 1e-300))
        d = 1.0 / np.sqrt(s2)
        M = d[:, None] * G * d[None, :] + lam * np.eye(len(d))
        z, *_ = scipy.linalg.lstsq(M, d * (g + lam * s2 * theta0), cond=1e-12)
        return d * z

    grid = list(PRIOR_GRID) if prior_weight == "cv" else [float(prior_weight)]
    scores: dict[float, float] = {}
    if len(grid) > 1:
        for lam in grid:
            per_fold = []
            for k in range(folds):
                rest = np.delete(np.arange(folds), k)
                if n[k].sum() == 0 or n[rest].sum() == 0:
                    continue
                th = solve(A[rest].sum(0), b[rest].sum(0), float(n[rest].sum()), lam)
                sse = np.einsum("p,jpq,q->j", th, A[k], th) - 2 * b[k] @ th + yy[k]
                ok = n[k] > 0
                per_fold.append(float(np.mean(np.sqrt(np.maximum(sse[ok], 0) / n[k][ok]) / scale[ok])))
            scores[lam] = float(np.mean(per_fold)) if per_fold else float("inf")
        best = min(reversed(grid), key=lambda lam: scores[lam])  # ties: the stronger prior
    else:
        best = grid[0]
    if consistent:
        G = np.einsum("j,jpq->pq", w, A.sum(0)) / float(n.sum())
        g = np.einsum("j,jp->p", w, b.sum(0)) / float(n.sum())
        theta, status = solve_consistent(regressor, G, g, theta0, best)
    else:
        theta, status = solve(A.sum(0), b.sum(0), float(n.sum()), best), ""
    info = RigidBodyFitInfo(prior_weight=best, cv_nrmse={f"{k:g}": v for k, v in scores.items()}, folds=folds,
                            rows=int(n.sum()), prior="URDF inertias, damping, friction; zero rotor inertia")
    model = RigidBodyModel(regressor, np.arange(regressor.n_columns), theta, info)
    info["consistent"] = consistent
    info["solver_status"] = status
    info["inconsistent_bodies"] = model.inconsistent_bodies()
    return model
