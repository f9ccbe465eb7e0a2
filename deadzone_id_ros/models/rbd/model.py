"""The identified rigid-body + friction model (:class:`RigidBodyModel`, an InverseDynamicsModel) and the URDF's
gravity baseline; fitted by :mod:`.identify`."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np

from ..base import check_joint_arrays
from .consistency import pseudo_inertia
from .regressor import CHUNK_ROWS, INERTIAL_NAMES, RigidBodyRegressor

__all__ = ["RigidBodyFitInfo", "RigidBodyModel", "urdf_gravity_model"]

_MEMO_ROWS, _MEMO_SIZE = 1000, 4  # predictions of >= this many samples are remembered, the last this many of them


class RigidBodyFitInfo(TypedDict, total=False):
    """How a :class:`RigidBodyModel` was fitted (:func:`~.identify.fit_rigid_body`); each fit fills its keys.

    Keys:
        prior_weight: the prior weight lambda used (dimensionless), None for the plain least-squares fit.
        rows: the moving (sample, joint) rows fitted on.
        cv_nrmse: lambda (formatted ``:g``) -> cross-validated normalized RMSE (empty with a given lambda).
        folds: cross-validation folds.
        prior: what the prior (or the gravity baseline) is.
        consistent: whether every body was constrained physically consistent.
        solver_status: the conic solver's status of a consistent fit ("" otherwise).
        inconsistent_bodies: bodies whose fitted inertial parameters are not physically consistent.
        stribeck_velocity: (J,) Stribeck velocity [rad/s] of the extended friction (None: no extended friction).
        velocity_cv: Stribeck-velocity multiplier (``:g``, or "none") -> its cross-validated normalized RMSE.
        breakaway: (J,) breakaway friction [N·m] from moving pairs (Coulomb + Stribeck).
        static_band: (J,) half width of the static-friction band [N·m] from stuck pairs.

    The last four are filled by :func:`~deadzone_id_ros.models.friction_fit.fit_extended_friction`.
    """

    prior_weight: float | None
    rows: int
    cv_nrmse: dict[str, float]
    folds: int
    prior: str
    consistent: bool
    solver_status: str
    inconsistent_bodies: list[str]
    stribeck_velocity: list[float] | None
    velocity_cv: dict[str, float]
    breakaway: list[float]
    static_band: list[float]


@dataclass(frozen=True)
class RigidBodyModel:
    """Identified rigid-body + friction model; implements InverseDynamicsModel.

    Attributes:
        regressor: the :class:`~.regressor.RigidBodyRegressor` (URDF, joint order, friction_eps).
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
    fit_info: RigidBodyFitInfo = field(default_factory=RigidBodyFitInfo, compare=False)
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
        for s in range(0, len(q2), CHUNK_ROWS):
            sl = slice(s, s + CHUNK_ROWS)
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
            v = [p.get(f"{body}.{n}") for n in INERTIAL_NAMES]
            if any(x is None for x in v):
                bad.append(body)
                continue
            if np.linalg.eigvalsh(pseudo_inertia(np.asarray(v, dtype=np.float64))).min() <= 0:
                bad.append(body)
        return bad




def urdf_gravity_model(regressor: RigidBodyRegressor) -> RigidBodyModel:
    """The gravity baseline: the URDF's own inertial parameters, nothing fitted, predicting g(q) (the torque that
    holds each pose at rest; dq and ddq are ignored)."""
    n = regressor.n_inertial
    return RigidBodyModel(regressor, np.arange(n), regressor.prior_parameters()[:n],
                          RigidBodyFitInfo(prior="URDF inertias, gravity only"), gravity_only=True)

