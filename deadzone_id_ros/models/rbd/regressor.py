"""The joint torque regressor W(q, dq, ddq) of a URDF's kinematic tree plus rotor inertia and friction columns
(the model of :mod:`deadzone_id_ros.models.rbd`), rows in the data's joint order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ...errors import RobotDescriptionError
from ..base import check_joint_arrays
from ..friction import ExtendedFriction

__all__ = ["CHUNK_ROWS", "INERTIAL_NAMES", "RigidBodyRegressor"]

#: pinocchio's order of one body's 10 inertial parameters (m, m*c, I about the body frame origin)
INERTIAL_NAMES = ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
#: samples per regressor batch (bounds the (N, J, P) array in memory)
CHUNK_ROWS = 20000


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
        from ...robot.reduced import build_reduced_model

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
            [f"{b}.{p}" for b in bodies for p in INERTIAL_NAMES]
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

