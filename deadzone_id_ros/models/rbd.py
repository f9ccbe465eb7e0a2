"""Rigid-body (Newton–Euler) inverse dynamics with identified base parameters and friction (core, no ROS).

Model, per joint j:

    tau_j = Y_j(q, dq, ddq) . pi  +  Ia_j ddq_j  +  Fv_j dq_j  +  Fc_j tanh(dq_j / eps)

with Y the joint torque regressor of the URDF's kinematic tree (pinocchio ``computeJointTorqueRegressor``, 10
inertial parameters per body: m, m*c, I), Ia the reflected rotor inertia (armature), Fv viscous and Fc Coulomb
friction with a smooth sign so the prediction does not chatter around zero velocity. Not every inertial parameter
is identifiable from joint torques. Two fits, both on the rows (sample, joint) where that joint moves (r_ij = 1):

- ``prior_weight=None``: plain least squares (Atkeson, An, Hollerbach 1986) on the identifiable *base* columns,
  chosen once by QR with column pivoting of the regressor on random states (Gautier 1991, "Numerical calculation of
  the base inertial parameters of robots"), through a streaming QR so memory stays bounded.
- default (``prior_weight="cv"``): every parameter, pulled toward the URDF's nominal values (a ridge / Gaussian
  prior, as in the Bayesian identification of Ting, Mistry, Peters, Schaal, Nakanishi, RSS 2006):

      min_theta  sum_j w_j sum_i r_ij (W_ij theta - tau_ij)^2 / n  +  lambda sum_k s_k^2 (theta_k - theta0_k)^2

  with theta0 the URDF's inertial parameters, damping (viscous) and friction (Coulomb) and zero rotor inertia;
  w_j = 1 / var(tau_j) so every joint counts alike (the report's normalized RMSE); s_k^2 the mean square of column
  k over the weighted rows (so lambda is dimensionless: at lambda = 1 a relative change of a parameter costs as
  much as its whole contribution to the torque) with a tiny floor that pins never-excited columns to the URDF.
  lambda is chosen by K-fold cross-validation on contiguous stretches of the training rows (normalized RMSE).
  Why a prior rather than bounds: on short or single-frequency recordings plain least squares trades parameters
  along nearly collinear directions (e.g. gravity against inertia on a pendulum swinging at one frequency) and
  returns physically inconsistent bodies that do not generalize; the prior keeps those directions at the URDF's
  values while the data decides what it excites.
- ``consistent=True``: the prior fit above (same objective, the lambda given or cross-validated), with every body's
  pseudo-inertia matrix J_b = [[tr(I)/2 1 - I, m c], [m c^T, m]] (I about the body frame origin) constrained
  positive semidefinite, J_b >= eps_b 1, the linear matrix inequality of Wensing, Kim, Slotine, "Linear Matrix
  Inequalities for Physically Consistent Inertial Parameter Identification", IEEE RA-L 2018 (positive mass,
  positive-definite inertia and the triangle inequalities at once), and rotor inertia >= 0. The regularization is
  the scaled Euclidean (Tikhonov) distance to the URDF's parameters of the prior fit, not the entropic divergence of
  Lee, Wensing, Park 2019. eps_b = 1e-6 tr(J_b of the URDF) (1e-9 for a massless URDF body) keeps the result
  strictly consistent beyond the solver's tolerance. Solved with cvxpy (Clarabel, an interior-point conic solver).

No sign bound on friction in either fit: a link-side torque sensor on an arm moved from outside sees the drive
resisting the motion, which fits as negative Coulomb/viscous coefficients.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import RobotDescriptionError
from .base import check_joint_arrays
from .friction import ExtendedFriction

__all__ = ["PRIOR_GRID", "RigidBodyModel", "RigidBodyRegressor", "fit_rigid_body", "pseudo_inertia",
           "urdf_gravity_model"]

_INERTIAL = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
_CHUNK = 20000
_MEMO_ROWS, _MEMO_SIZE = 1000, 4  # predictions of >= this many samples are remembered, the last this many of them
#: prior weights lambda tried by the cross-validation of :func:`fit_rigid_body` (dimensionless, see the module doc)
PRIOR_GRID = (1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)


class RigidBodyRegressor:
    """Full regressor W(q, dq, ddq) of the model above, rows in ``joint_names`` order.

    Args:
        urdf_xml: the URDF text (kept so a saved model is self-contained).
        joint_names: (J,) data joints, mapped BY NAME to the URDF (or through ``joint_map``); every other movable
            URDF joint is locked (``locked``, default 0) and its body merged into its parent
            (:func:`deadzone_id_ros.robot.build_reduced_model`).
        friction_eps: velocity scale of the smooth sign tanh(dq/eps) [rad/s], one value or (J,) per joint; > 0.
            A good choice is about half the dead-zone velocity threshold: the sign is saturated on the moving rows
            the model is fitted on, and smooth (no chatter from velocity noise) inside the dead zone.
        source: file name used in error messages.
        joint_map: bag name -> URDF joint name, for data joints named differently from the URDF.
        locked: URDF joint -> lock position [rad or m] for URDF joints the data lacks (default 0 each).
        friction: Stribeck and load-dependent friction columns after the Coulomb ones
            (:class:`~deadzone_id_ros.models.friction.ExtendedFriction`), or None (Coulomb + viscous only).

    Attributes (besides the arguments): ``robot`` (the :class:`~deadzone_id_ros.robot.ReducedRobot`), ``locked``
    (URDF joint -> where it was locked), ``joint_map`` (the non-identity part of the name match).

    Raises:
        RobotDescriptionError: the URDF cannot be parsed, a data joint is not in it (both name lists in the
            message) or is not 1-DOF, or ``locked`` names a joint that is unknown or recorded.
        ValueError: friction_eps <= 0, or ``friction`` sized for another number of joints or bodies.
    """

    def __init__(self, urdf_xml: str, joint_names: Sequence[str],
                 friction_eps: float | Sequence[float] | np.ndarray = 0.01, source: str = "<urdf>",
                 joint_map: Mapping[str, str] | None = None,
                 locked: Mapping[str, float] | None = None, friction: ExtendedFriction | None = None) -> None:
        from ..robot.reduced import build_reduced_model

        eps = np.asarray(friction_eps, dtype=np.float64)
        if eps.ndim > 1 or (eps.ndim == 1 and eps.shape != (len(joint_names),)) or not np.all(eps > 0):
            raise ValueError(f"friction_eps = {friction_eps!r} must be > 0 rad/s (one value or one per joint)")
        self.robot = build_reduced_model(urdf_xml, joint_names, joint_map, locked, source)
        self.model = self.robot.model
        self.data = self.model.createData()
        self.urdf_xml = urdf_xml
        self.joint_names = tuple(joint_names)
        self.joint_map = {d: u for d, u in zip(self.joint_names, self.robot.urdf_joint_names) if d != u}
        self.locked = dict(self.robot.locked)
        self.friction_eps = np.broadcast_to(eps, (len(self.joint_names),)).copy()
        if self.model.nv != len(self.joint_names):  # pragma: no cover - build_reduced_model locks every other joint
            raise RobotDescriptionError(
                f"{source}: reduced model has {self.model.nv} DOF for {len(joint_names)} joints"
            )
        self._idx = self.robot.idx_v
        self.n_joints = len(self.joint_names)
        self.n_inertial = 10 * (self.model.njoints - 1)
        bodies = [str(self.model.names[k]) for k in range(1, self.model.njoints)]
        self.friction = friction
        if friction is not None:
            friction.check(self.n_joints, self.n_inertial)
        self.column_names: tuple[str, ...] = tuple(
            [f"{b}.{p}" for b in bodies for p in _INERTIAL]
            + [f"{n}.armature" for n in self.joint_names]
            + [f"{n}.viscous" for n in self.joint_names]
            + [f"{n}.coulomb" for n in self.joint_names]
            + [f"{n}.{t}" for t in (friction.terms if friction is not None else ()) for n in self.joint_names]
        )

    def with_friction(self, friction: ExtendedFriction | None) -> RigidBodyRegressor:
        """The same structure (URDF, joints, eps, map, locks) with other extended friction columns."""
        return RigidBodyRegressor(self.urdf_xml, self.joint_names, self.friction_eps, joint_map=self.joint_map or None,
                                  locked=self.locked or None, friction=friction)

    @property
    def continuous_joints(self) -> tuple[int, ...]:
        """Indices of the data joints that are continuous in the URDF (no position limit; pinocchio stores them as
        cos/sin)."""
        return tuple(int(j) for j in np.flatnonzero(np.asarray(self.robot.nq_joint) == 2))

    @property
    def n_columns(self) -> int:
        """Number P of columns (10 per body + 3 per joint + those of :attr:`friction`)."""
        return len(self.column_names)

    def true_parameters(self, armature: Sequence[float] = (), viscous: Sequence[float] = (),
                        coulomb: Sequence[float] = ()) -> np.ndarray:
        """(P,) the URDF's own parameter vector (inertias from the URDF; friction/armature as given, else 0)."""
        pi = np.concatenate([self.model.inertias[k].toDynamicParameters() for k in range(1, self.model.njoints)])
        extra = [np.zeros(self.n_joints) if len(v) == 0 else np.asarray(v, float) for v in (armature, viscous, coulomb)]
        out = np.concatenate([pi, *extra])
        return np.concatenate([out, np.zeros(self.n_columns - len(out))])  # extended friction: 0 (none)

    def prior_parameters(self) -> np.ndarray:
        """(P,) the URDF's nominal parameters: inertias, zero rotor inertia, ``<dynamics damping>`` as viscous and
        ``<dynamics friction>`` as Coulomb friction (0 where the URDF gives none)."""
        idx = self.robot.idx_v
        return self.true_parameters((), np.asarray(self.model.damping)[idx], np.asarray(self.model.friction)[idx])

    def regressor(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """W: (N, J, P) for q, dq, ddq of shape (N, J) [rad, rad/s, rad/s²]; raises ValueError on bad shapes."""
        import pinocchio as pin

        q, dq, ddq = check_joint_arrays(self.n_joints, q=q, dq=dq, ddq=ddq)
        q, dq, ddq = (np.atleast_2d(a) for a in (q, dq, ddq))
        n, J = q.shape
        out = np.zeros((n, J, self.n_columns))
        vp, ap = (np.zeros(self.model.nv) for _ in range(2))
        idx = self._idx
        qconf = self.robot.configuration(q)
        for i in range(n):
            vp[idx], ap[idx] = dq[i], ddq[i]
            Y = pin.computeJointTorqueRegressor(self.model, self.data, qconf[i], vp, ap)
            out[i, :, : self.n_inertial] = Y[idx]
        r = np.arange(J)
        k = self.n_inertial
        out[:, r, k + r] = ddq
        out[:, r, k + J + r] = dq
        out[:, r, k + 2 * J + r] = np.tanh(dq / self.friction_eps)
        if self.friction is not None:
            out[:, :, k + 3 * J:] = self.friction.columns(out[:, :, :k], dq, ddq, self.friction_eps)
        return out

    def random_states(self, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """n random (q, dq, ddq) within the URDF position limits (±pi where unlimited); dq ~ N(0, 1), ddq ~ N(0, 9)."""
        rng = np.random.default_rng(seed)
        lo = np.asarray(self.model.lowerPositionLimit)[self.robot.idx_q]
        hi = np.asarray(self.model.upperPositionLimit)[self.robot.idx_q]
        bad = (~np.isfinite(lo) | ~np.isfinite(hi) | (hi <= lo) | (np.abs(hi - lo) > 1e6)
               | (self.robot.nq_joint != 1))  # continuous joints: limits are on cos/sin
        lo, hi = np.where(bad, -np.pi, lo), np.where(bad, np.pi, hi)
        q = rng.uniform(lo, hi, size=(n, self.n_joints))
        return q, rng.normal(0.0, 1.0, q.shape), rng.normal(0.0, 3.0, q.shape)

    def base_columns(self, n_states: int = 300, tol: float = 1e-7, seed: int = 0) -> np.ndarray:
        """Indices (K,) of an identifiable (base) set of columns, sorted: QR with column pivoting on random states.

        A column is kept when its pivot exceeds ``tol`` times the largest pivot after scaling columns to unit norm.
        """
        W = self.regressor(*self.random_states(n_states, seed)).reshape(-1, self.n_columns)
        norms = np.linalg.norm(W, axis=0)
        live = norms > 1e-12 * max(norms.max(), 1e-300)
        Ws = W[:, live] / norms[live]
        import scipy.linalg  # here, not at the top: `deadzone-id --help` must not load scipy

        _, R, piv = scipy.linalg.qr(Ws, mode="economic", pivoting=True)
        d = np.abs(np.diag(R))
        rank = int(np.sum(d > tol * d[0])) if d.size else 0
        return np.sort(np.flatnonzero(live)[piv[:rank]])


@dataclass(frozen=True)
class RigidBodyModel:
    """Identified rigid-body + friction model; implements InverseDynamicsModel.

    Attributes:
        regressor: the :class:`RigidBodyRegressor` (URDF, joint order, friction_eps).
        columns: (K,) indices of the fitted columns into ``regressor.column_names`` (base columns, or all of them).
        coefficients: (K,) identified parameters (SI units of each column).
        fit_info: how it was fitted (``prior_weight``, cross-validation scores, rows); not saved with an artifact.
        gravity_only: predict the torque at rest, g(q) (dq and ddq taken as zero: the gravity baseline).

    :meth:`predict` remembers its last few batch predictions by the content of their arrays (the regressor costs
    ~0.1 ms a sample, and a comparison predicts the same splits for the band, the hybrid residual and each seed).
    """

    regressor: RigidBodyRegressor
    columns: np.ndarray
    coefficients: np.ndarray
    fit_info: dict[str, Any] = field(default_factory=dict, compare=False)
    gravity_only: bool = False
    _memo: OrderedDict[bytes, np.ndarray] = field(default_factory=OrderedDict, init=False, repr=False, compare=False)

    def __getstate__(self) -> dict[str, object]:
        """Pickled without the remembered predictions (a process that receives the model predicts afresh)."""
        return {**self.__dict__, "_memo": OrderedDict()}

    @property
    def joint_names(self) -> tuple[str, ...]:
        """(J,) joint order of every array in and out."""
        return self.regressor.joint_names

    def predict(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """tau (N, J) or (J,) [N·m] for q [rad], dq [rad/s], ddq [rad/s²] of that shape; ValueError on bad shapes."""
        q, dq, ddq = check_joint_arrays(self.regressor.n_joints, q=q, dq=dq, ddq=ddq)
        single = q.ndim == 1
        q2, dq2, ddq2 = (np.atleast_2d(a) for a in (q, dq, ddq))
        if self.gravity_only:
            dq2, ddq2 = np.zeros_like(q2), np.zeros_like(q2)
        key = None
        if len(q2) >= _MEMO_ROWS:
            h = hashlib.blake2b(repr(q2.shape).encode())
            for a in (q2, dq2, ddq2):
                h.update(np.ascontiguousarray(a, dtype=np.float64).data)
            key = h.digest()
            if key in self._memo:
                return self._memo[key].copy()
        out = np.empty(q2.shape)
        for s in range(0, len(q2), _CHUNK):
            sl = slice(s, s + _CHUNK)
            out[sl] = self.regressor.regressor(q2[sl], dq2[sl], ddq2[sl])[:, :, self.columns] @ self.coefficients
        if key is not None:
            self._memo[key] = out.copy()
            while len(self._memo) > _MEMO_SIZE:
                self._memo.popitem(last=False)
        return out[0] if single else out

    def coulomb(self) -> np.ndarray:
        """(J,) identified Coulomb friction Fc_j [N·m] (0 where its column is not a base column)."""
        p = self.parameters()
        return np.array([p.get(f"{n}.coulomb", 0.0) for n in self.joint_names])

    def parameters(self) -> dict[str, float]:
        """Identified parameters by column name (a base parameter absorbs the unidentifiable combinations)."""
        return {self.regressor.column_names[c]: float(v) for c, v in zip(self.columns, self.coefficients)}

    def inconsistent_bodies(self) -> list[str]:
        """Bodies whose identified inertial parameters are not physically consistent: the pseudo-inertia
        [[tr(I)/2 1 - I, m c], [m c^T, m]] (I about the body origin) is not positive definite (Wensing, Kim,
        Slotine, IEEE RA-L 2018). Only meaningful when every column was fitted (the default prior fit); with base
        parameters the bodies are not separately identified and every body with a missing column is listed."""
        p = self.parameters()
        bad = []
        for k in range(1, self.regressor.model.njoints):
            body = str(self.regressor.model.names[k])
            v = [p.get(f"{body}.{n}") for n in _INERTIAL]
            if any(x is None for x in v):
                bad.append(body)
                continue
            if np.linalg.eigvalsh(pseudo_inertia(np.asarray(v, dtype=np.float64))).min() <= 0:
                bad.append(body)
        return bad


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
    """Identify the parameters on the rows where ``mask`` is True (see the module docstring for both fits).

    Args:
        regressor: the structure (URDF, joints, smooth-sign eps).
        q, dq, ddq, tau: (N, J) [rad, rad/s, rad/s², N·m].
        mask: (N, J) bool r_ij; a (sample, joint) row enters the fit only where True (default: every row).
        prior_weight: ``"cv"`` (default): every parameter, with the URDF prior weighted by the lambda of
            :data:`PRIOR_GRID` that cross-validates best; a number: that lambda; None: plain least squares on the
            base columns.
        folds: cross-validation folds (contiguous stretches of the rows), >= 2.
        rcond: relative cut-off of small singular values (badly excited directions) of the plain fit.
        consistent: constrain every body's pseudo-inertia to be positive definite (module docstring; needs a
            ``prior_weight``, 0 for none).

    Returns:
        the fitted :class:`RigidBodyModel` (``fit_info`` says which lambda and why).

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
    for s in range(0, len(q), _CHUNK):
        sl = slice(s, s + _CHUNK)
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
                          {"prior_weight": None, "rows": n_rows})


def _normal_equations(regressor: RigidBodyRegressor, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray,
                      tau: np.ndarray, mask: np.ndarray, folds: int) -> tuple[np.ndarray, ...]:
    """Per fold k and joint j: A (K, J, P, P) = W^T W, b (K, J, P) = W^T tau, yy (K, J), n (K, J) over moving rows."""
    P, J = regressor.n_columns, regressor.n_joints
    A, b = np.zeros((folds, J, P, P)), np.zeros((folds, J, P))
    yy, n = np.zeros((folds, J)), np.zeros((folds, J))
    fold = np.minimum(np.arange(len(q)) * folds // max(len(q), 1), folds - 1)
    for s in range(0, len(q), _CHUNK):
        sl = slice(s, s + _CHUNK)
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
    """The prior fit of :func:`fit_rigid_body` (module docstring): lambda by K-fold CV, then a fit on every row."""
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
        theta, status = _solve_consistent(regressor, G, g, theta0, best)
    else:
        theta, status = solve(A.sum(0), b.sum(0), float(n.sum()), best), ""
    info: dict[str, Any] = {"prior_weight": best, "cv_nrmse": {f"{k:g}": v for k, v in scores.items()},
                            "folds": folds, "rows": int(n.sum()),
                            "prior": "URDF inertias, damping, friction; zero rotor inertia"}
    model = RigidBodyModel(regressor, np.arange(regressor.n_columns), theta, info)
    info["consistent"] = consistent
    info["solver_status"] = status
    info["inconsistent_bodies"] = model.inconsistent_bodies()
    return model


def pseudo_inertia(params: np.ndarray) -> np.ndarray:
    """The 4x4 pseudo-inertia matrix [[tr(I)/2 1 - I, h], [h^T, m]] of one body's 10 inertial parameters (P,) in
    pinocchio's order [m, h_x, h_y, h_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz] (h = m c [kg·m], I about the body frame
    origin [kg·m²]); positive definite exactly when the body is physically consistent (Wensing, Kim, Slotine 2018).

    Raises:
        ValueError: ``params`` does not hold 10 values.
    """
    p = np.asarray(params, dtype=np.float64)
    if p.shape != (10,):
        raise ValueError(f"params must hold 10 inertial parameters, got shape {p.shape}")
    return sum((p[k] * _PSEUDO_BASIS[k] for k in range(10)), np.zeros((4, 4)))


def _pseudo_basis() -> np.ndarray:
    """(10, 4, 4) B_k with pseudo_inertia(p) = sum_k p_k B_k (linear in the parameters)."""
    B = np.zeros((10, 4, 4))
    B[0, 3, 3] = 1.0
    for k, i in ((1, 0), (2, 1), (3, 2)):
        B[k, i, 3] = B[k, 3, i] = 1.0
    diag = {4: (-0.5, 0.5, 0.5), 6: (0.5, -0.5, 0.5), 9: (0.5, 0.5, -0.5)}  # Ixx, Iyy, Izz -> Sigma diagonal
    for k, d in diag.items():
        B[k, :3, :3] = np.diag(d)
    for k, (i, j) in ((5, (0, 1)), (7, (0, 2)), (8, (1, 2))):  # Ixy, Ixz, Iyz -> -I off the diagonal
        B[k, i, j] = B[k, j, i] = -1.0
    return B


_PSEUDO_BASIS = _pseudo_basis()


def _solve_consistent(regressor: RigidBodyRegressor, G: np.ndarray, g: np.ndarray, theta0: np.ndarray,
                      lam: float) -> tuple[np.ndarray, str]:
    """min theta^T G theta - 2 g^T theta + lam sum_k s_k^2 (theta_k - theta0_k)^2 subject to every body's
    pseudo-inertia >= eps_b 1 and rotor inertia >= 0 (module docstring), with cvxpy and Clarabel, in the
    column-scaled variables z = theta s of the unconstrained solve.

    Returns:
        (theta (P,), the solver's status).

    Raises:
        ValueError: the solver finds no solution (status named).
    """
    import cvxpy as cp

    s2 = np.maximum(np.diag(G).copy(), 1e-10 * max(float(np.diag(G).max()), 1e-300))
    d = 1.0 / np.sqrt(s2)
    M = d[:, None] * G * d[None, :]
    evals, evecs = np.linalg.eigh(0.5 * (M + M.T))
    keep = evals > 1e-12 * max(float(evals.max()), 1e-300)
    A = np.sqrt(evals[keep])[:, None] * evecs[:, keep].T
    z = cp.Variable(len(d))
    z0 = theta0 / d
    objective = cp.sum_squares(A @ z) - 2 * (d * g) @ z + lam * cp.sum_squares(z - z0)
    constraints = []
    for b in range(regressor.n_inertial // 10):
        sl = slice(10 * b, 10 * b + 10)
        J0 = pseudo_inertia(theta0[sl])
        eps = 1e-6 * float(np.trace(J0)) if np.trace(J0) > 0 else 1e-9
        Jb = sum(d[10 * b + k] * z[10 * b + k] * _PSEUDO_BASIS[k] for k in range(10))
        constraints.append(0.5 * (Jb + Jb.T) >> eps * np.eye(4))
    arm = slice(regressor.n_inertial, regressor.n_inertial + regressor.n_joints)
    constraints.append(z[arm] >= 0)
    problem = cp.Problem(cp.Minimize(objective), constraints)
    import warnings

    try:
        with warnings.catch_warnings():  # "may be inaccurate": said by the status, and consistency is checked after
            warnings.simplefilter("ignore", UserWarning)
            problem.solve(solver=cp.CLARABEL)
    except cp.error.SolverError as err:
        raise ValueError(f"physically consistent identification: the solver failed ({err})") from err
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or z.value is None:
        raise ValueError(f"physically consistent identification: no solution (solver status {problem.status!r})")
    return d * np.asarray(z.value, dtype=np.float64), str(problem.status)


def urdf_gravity_model(regressor: RigidBodyRegressor) -> RigidBodyModel:
    """The gravity baseline: the URDF's own inertial parameters, nothing fitted, predicting g(q) (the torque that
    holds each pose at rest; dq and ddq are ignored)."""
    n = regressor.n_inertial
    return RigidBodyModel(regressor, np.arange(n), regressor.prior_parameters()[:n],
                          {"prior": "URDF inertias, gravity only"}, gravity_only=True)

