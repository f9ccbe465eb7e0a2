"""External joint torque estimators (core, no ROS): the direct residual, the momentum observer and the DOB.

Sign convention (Haddadin, De Luca, Albu-Schäffer, "Robot collisions: a survey on detection, isolation, and
identification", IEEE T-RO 33(6), 2017; franka_ros2): the arm obeys

    M(q) ddq + C(q, dq) dq + g(q) + tau_f = tau_m + tau_ext,

so tau_ext [N·m] is the torque the environment applies on the joints, J(q)^T F for a force F on the arm. The issue
writes the residual the other way round (tau_m - f); the magnitude is the same.

All three estimators share one discrete form, exact for a torque held between samples (as the controller's DOB,
:mod:`deadzone_id_ros.control.dob`): per sampling interval [t_{k-1}, t_k] of measured length dt_k a raw residual w_k is
formed from the two samples, then one first-order low-pass filter, discretized with the measured dt_k (ZOH),
``y_k = a_k y_{k-1} + (1 - a_k) w_k``, ``a_k = exp(-g dt_k)``, gives the estimate. The raw residuals:

- :class:`ResidualEstimator` (any :class:`~deadzone_id_ros.models.base.InverseDynamicsModel`: nominal or identified
  rigid body, learned ONNX network, the pick): ``w_k = f(q_{k-1}, dq_{k-1}, (dq_k - dq_{k-1}) / dt_k) - tau_k``. The
  acceleration is the interval's mean (the backward difference); the low-pass filter after f is the causal ddq filter
  (for a model linear in ddq, filtering w equals evaluating f on a filtered ddq). Why this form for the product's
  models: a learned model is a black box f(q, dq, ddq), not split into M, C and g, so the momentum form below cannot
  take it; the interval form needs nothing but f and is exact for a semi-implicit Euler simulator step (the
  estimate equals J^T F to rounding on the ideal arm, see the tests).
- :class:`MomentumObserver` (De Luca, Mattone, "Actuator failure detection and isolation using generalized momenta",
  ICRA 2003; the survey above, Sec. IV): with p = M(q) dq, ``w_k = (p_k - p_{k-1}) / dt_k - tau_k - C(q, dq)^T dq +
  g(q) + tau_f(dq)`` (rigid-body terms at t_{k-1}, pinocchio), filtered with gain K_O = g. Needs no ddq; only for a
  rigid-body model. The textbook baseline, on the URDF's nominal parameters.
- :class:`DobEstimator`: the controller's disturbance observer (Ohnishi et al. 1996, :mod:`.control.dob`) with the
  nominal inertia Jn and h = the URDF's nominal rigid body at zero acceleration; tau_ext = -tau_dis_hat (the DOB
  estimates everything its nominal plant misses, external torque included).

``tau_k`` is the torque that acted over the interval: the measured effort of sample k in the simulator (the held,
applied command) or the commanded torque of tick k-1 when commands are given.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..models.base import InverseDynamicsModel, check_joint_arrays

if TYPE_CHECKING:
    from ..models.runtime import NominalRigidBodyModel
    from .friction import LoadFriction

__all__ = ["DobEstimator", "ExternalTorqueEstimator", "MomentumObserver", "ResidualEstimator", "ZohLowPass"]


class ZohLowPass:
    """First-order low-pass filter per joint, exact (ZOH) for the measured period: y = a y + (1 - a) w, a = exp(-g dt).

    Args:
        cutoff: (J,) g [rad/s], > 0; ``math.inf`` passes the input through (no filtering).

    Raises:
        ValueError: cutoff not 1-D or not > 0 (NaN included).
    """

    def __init__(self, cutoff: Sequence[float] | np.ndarray) -> None:
        g = np.asarray(cutoff, dtype=float)
        if g.ndim != 1 or not np.all(g > 0):
            raise ValueError(f"cutoff must be (J,) values > 0 [rad/s] (inf: no filter), got {g.tolist()}")
        self._neg = -g
        self.y = np.zeros_like(g)
        self._dt = math.nan
        self._a = np.zeros_like(g)

    def reset(self) -> None:
        """Output back to zero."""
        self.y = np.zeros_like(self.y)

    def update(self, dt: float, w: np.ndarray) -> np.ndarray:
        """Advance by ``dt`` [s] (> 0) with input ``w`` (J,) held over the interval; return y (J,)."""
        if dt != self._dt:
            self._a = np.exp(self._neg * dt)
            self._dt = dt
        self.y = self._a * self.y + (1.0 - self._a) * w
        return self.y


class ExternalTorqueEstimator(ABC):
    """An estimator of the external joint torque tau_ext (J,) [N·m] from joint samples, one call per sample.

    Args:
        joint_names: (J,) order of every array in and out.
        cutoff: (J,) cutoff g of the output low-pass filter [rad/s] (the observer gain K_O of the momentum observer).

    Raises:
        ValueError: cutoff not (J,) values > 0.
    """

    #: registry name of the estimator kind ("residual", "momentum", "dob")
    kind = ""

    def __init__(self, joint_names: Sequence[str], cutoff: Sequence[float] | np.ndarray) -> None:
        self.joint_names = tuple(joint_names)
        g = np.asarray(cutoff, dtype=float)
        if g.shape != (len(self.joint_names),):
            raise ValueError(f"cutoff must have {len(self.joint_names)} values (one per joint "
                             f"{list(self.joint_names)}), got shape {g.shape}")
        self._lpf = ZohLowPass(g)
        self._prev: tuple[float, np.ndarray, np.ndarray] | None = None

    @property
    def estimate(self) -> np.ndarray:
        """(J,) the latest estimate [N·m] (zeros before the second sample)."""
        return self._lpf.y

    def reset(self) -> None:
        """Forget the history (the next sample starts a new interval) and zero the estimate."""
        self._lpf.reset()
        self._prev = None

    def update(self, t: float, q: np.ndarray, dq: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Take sample k and return the estimate tau_ext (J,) [N·m] for the state at ``t``.

        Args:
            t: sample time [s]; a sample not later than the previous one restarts the estimator (returns zeros).
            q: (J,) position [rad].  dq: (J,) velocity [rad/s].
            tau: (J,) motor torque that acted since the previous sample [N·m] (see the module docstring).

        Raises:
            ValueError: an array not of shape (J,), or a non-finite value (names the argument).
        """
        q, dq, tau = (np.asarray(a, dtype=float) for a in (q, dq, tau))
        n = len(self.joint_names)
        # one cheap test per tick (a sum is finite only when every term is); the slow path names what is wrong
        shapes_ok = q.shape == dq.shape == tau.shape == (n,)
        if not shapes_ok or not math.isfinite(q.sum() + dq.sum() + tau.sum()):
            check_joint_arrays(n, batch=False, q=q, dq=dq, tau=tau)
            for name, a in (("q", q), ("dq", dq), ("tau", tau)):
                if not np.all(np.isfinite(a)):
                    raise ValueError(f"{name} has non-finite values: {a.tolist()}")
        prev = self._prev
        self._prev = (t, q, dq)
        if prev is None or not t > prev[0]:
            self._lpf.reset()
            self._start(q, dq)
            return self._lpf.y
        dt = t - prev[0]
        return self._lpf.update(dt, self._raw(dt, prev[1], prev[2], q, dq, tau))

    def _start(self, q: np.ndarray, dq: np.ndarray) -> None:
        """Hook: the first sample of a run (after reset or a non-increasing stamp); nothing to do by default."""
        return None

    @abstractmethod
    def _raw(self, dt: float, q0: np.ndarray, dq0: np.ndarray, q1: np.ndarray, dq1: np.ndarray,
             tau: np.ndarray) -> np.ndarray:
        """Unfiltered residual w (J,) [N·m] of the interval from (q0, dq0) to (q1, dq1), dt [s] long."""


class ResidualEstimator(ExternalTorqueEstimator):
    """Direct residual with any inverse-dynamics model: w = f(q0, dq0, (dq1 - dq0)/dt) - tau, then the low-pass.

    Args:
        model: tau = f(q, dq, ddq) [N·m].
        cutoff: (J,) [rad/s], see :class:`ExternalTorqueEstimator`.
        joint_names: (J,) the estimator's joint order (default the model's); the model's joints in any order.
        friction: a friction correction identified on this model's free-motion residual
            (:func:`~.friction.identify_load_friction`, in the estimator's joint order): w - phi(dq0, tau) theta.

    Raises:
        ValueError: cutoff shape, the model's joints are not ``joint_names`` (names both), or a model that reads the
            joint-state history.
    """

    kind = "residual"

    def __init__(self, model: InverseDynamicsModel, cutoff: Sequence[float] | np.ndarray,
                 joint_names: Sequence[str] | None = None, friction: LoadFriction | None = None) -> None:
        super().__init__(model.joint_names if joint_names is None else joint_names, cutoff)
        if friction is not None and friction.joint_names != self.joint_names:
            raise ValueError(f"friction joints {list(friction.joint_names)} are not the estimator's "
                             f"{list(self.joint_names)}")
        self.friction = friction
        self.set_model(model)

    def set_model(self, model: InverseDynamicsModel) -> None:
        """Use ``model`` from the next sample on (a controller's model swap); its joints in any order.

        Raises:
            ValueError: its joints are not the estimator's (names both), or it reads the joint-state history (a
                history method's model: the estimator evaluates one state per sample).
        """
        from ..models.history import per_tick_refusal

        mine, theirs = self.joint_names, tuple(model.joint_names)
        refusal = per_tick_refusal(model)
        if refusal:
            raise ValueError(refusal)
        if sorted(mine) != sorted(theirs):
            raise ValueError(f"model joints {list(theirs)} are not the estimator's {list(mine)}")
        self.model = model
        self._to = np.array([mine.index(j) for j in theirs], dtype=int)
        self._from = np.array([theirs.index(j) for j in mine], dtype=int)
        self._identity = mine == theirs

    def _raw(self, dt: float, q0: np.ndarray, dq0: np.ndarray, q1: np.ndarray, dq1: np.ndarray,
             tau: np.ndarray) -> np.ndarray:
        ddq = (dq1 - dq0) / dt
        if self._identity:
            w = np.asarray(self.model.predict(q0, dq0, ddq), dtype=float) - tau
        else:
            t, f = self._to, self._from
            w = np.asarray(self.model.predict(q0[t], dq0[t], ddq[t]), dtype=float)[f] - tau
        return w if self.friction is None else w - self.friction.torque(dq0, tau)


class _PinocchioArm:
    """pinocchio model of a URDF for M(q), C(q, dq) and g(q) of the joints ``joint_names`` (others at neutral): the
    model (its armature on the diagonal of M), workspace and joint indices of a
    :class:`~deadzone_id_ros.models.runtime.NominalRigidBodyModel`, whose friction :meth:`friction` evaluates."""

    def __init__(self, rb: NominalRigidBodyModel) -> None:
        self.rb = rb
        self.description, self.pin, self.model, self.data = rb.description, rb._pin, rb.model, rb.data
        self.idx_v = rb._idx_v
        self._v = np.zeros(self.model.nv)

    def terms(self, q: np.ndarray, dq: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(M (J, J) [kg·m²], C^T dq (J,) [N·m], g (J,) [N·m]) at (q, dq)."""
        pin, m, d = self.pin, self.model, self.data
        qc = self.rb.set_configuration(q)
        self._v[self.idx_v] = dq
        mass = pin.crba(m, d, qc)
        mass = np.triu(mass) + np.triu(mass, 1).T  # crba fills the upper triangle
        coriolis = pin.computeCoriolisMatrix(m, d, qc, self._v)
        grav = pin.computeGeneralizedGravity(m, d, qc)
        iv = self.idx_v
        return mass[np.ix_(iv, iv)], coriolis[np.ix_(iv, iv)].T @ dq, grav[iv]


class MomentumObserver(ExternalTorqueEstimator):
    """Generalized-momentum observer on a URDF's nominal rigid body (De Luca & Mattone 2003; Haddadin et al. 2017).

    Continuous form r = K_O [p - p(0) - integral(tau_m + C^T dq - g - tau_f + r) dt], p = M(q) dq, so that
    dr/dt = K_O (tau_ext - r). Discrete form: the interval residual w (module docstring) through the ZOH low-pass
    with g = K_O; it needs no acceleration.

    The rigid body is the robot's nominal model as the controller's "rbd" model builds it
    (:class:`~deadzone_id_ros.models.runtime.NominalRigidBodyModel`): the URDF's inertia plus the profile's rotor
    armature on the diagonal of M (pinocchio's CRBA adds ``model.armature``), and its friction law ``tau_f`` (the
    profile's Coulomb and viscous friction, or the URDF's ``<dynamics>``; none for a model without friction).

    Args:
        rigid_body: the nominal model (its joints, in the estimator's order; build it as ``load_model`` builds the
            "rbd" model, with the profile's ``armature``, ``coulomb`` and ``viscous``).
        gain: (J,) K_O [1/s], > 0.

    Raises:
        ValueError: gain shape.
    """

    kind = "momentum"

    def __init__(self, rigid_body: NominalRigidBodyModel, gain: Sequence[float] | np.ndarray) -> None:
        super().__init__(rigid_body.joint_names, gain)
        self.rigid_body = rigid_body
        self._arm = _PinocchioArm(rigid_body)
        self._p_prev = np.zeros(len(self.joint_names))

    def _start(self, q: np.ndarray, dq: np.ndarray) -> None:
        mass, _, _ = self._arm.terms(q, dq)
        self._p_prev = mass @ dq

    def _raw(self, dt: float, q0: np.ndarray, dq0: np.ndarray, q1: np.ndarray, dq1: np.ndarray,
             tau: np.ndarray) -> np.ndarray:
        _, ctdq, grav = self._arm.terms(q0, dq0)
        mass1, _, _ = self._arm.terms(q1, dq1)
        p1 = mass1 @ dq1
        w = (p1 - self._p_prev) / dt - tau - ctdq + grav + self.rigid_body.friction_torque(dq0)
        self._p_prev = p1
        return w


class DobEstimator(ExternalTorqueEstimator):
    """The controller's disturbance observer (:class:`~deadzone_id_ros.control.dob.DisturbanceObserver`) read as an
    external-torque estimate: tau_ext = -tau_dis_hat, with h(q, dq) = ``model`` at zero acceleration.

    Args:
        model: the part besides Jn ddq, evaluated as f(q, dq, 0) [N·m] (e.g. the URDF's nominal rigid body).
        nominal_inertia: (J,) Jn [kg·m²] > 0.  cutoff: (J,) DOB cutoff g [rad/s] > 0.

    Raises:
        ValueError: shapes or values (from the observer).
    """

    kind = "dob"

    def __init__(self, model: InverseDynamicsModel, nominal_inertia: Sequence[float] | np.ndarray,
                 cutoff: Sequence[float] | np.ndarray) -> None:
        from ..control.dob import DisturbanceObserver

        # the DOB filters itself: the shared output filter passes its estimate through (g = inf)
        super().__init__(model.joint_names, np.full(len(model.joint_names), math.inf))
        self.model = model
        self._dob = DisturbanceObserver(np.asarray(cutoff, float), np.asarray(nominal_inertia, float))
        self._zero = np.zeros(len(self.joint_names))

    def reset(self) -> None:
        """Forget the history and zero the estimate (the observer too)."""
        super().reset()
        self._dob.reset()

    def _start(self, q: np.ndarray, dq: np.ndarray) -> None:
        self._dob.reset()
        self._dob.update(0.0, dq, self._zero, self._zero)

    def _raw(self, dt: float, q0: np.ndarray, dq0: np.ndarray, q1: np.ndarray, dq1: np.ndarray,
             tau: np.ndarray) -> np.ndarray:
        h0 = np.asarray(self.model.predict(q0, dq0, self._zero), dtype=float)
        return -self._dob.update(dt, dq1, tau, h0)
