"""Stribeck and load-dependent joint friction for the identified rigid body (core, no ROS).

The rigid body of :mod:`~deadzone_id_ros.models.rbd` carries viscous and Coulomb friction per joint. Geared and
harmonic drives show two more effects (B. Armstrong-Hélouvry, P. Dupont, C. Canudas de Wit, "A survey of models,
analysis tools and compensation methods for the control of machines with friction", Automatica 30(7), 1994;
P. Hamon, M. Gautier, P. Garrec, "New dry friction model with load- and velocity-dependence and dynamic
identification of multi-DOF robots", ICRA 2011):

- Stribeck: the friction at breakaway is above the kinetic (Coulomb) level and falls towards it as the joint speeds
  up, ``Fst s(dq)`` with s(v) = exp(-(|v| / vs)^a) (1 at rest, -> 0 moving);
- load dependence: dry friction grows with the torque the gear transmits, ``(Kl + Kls s(dq)) |tau_t|``.

Per joint j the added torque is, with sgn(v) = tanh(v / eps) the rigid body's smooth sign:

    tau_f,j = [Fst_j s_j(dq_j) + Kl_j |tau_t,j| + Kls_j s_j(dq_j) |tau_t,j|] sgn(dq_j)

which is linear in (Fst, Kl, Kls) once vs and tau_t are fixed, so the three become columns of the rigid body's
regressor (:class:`ExtendedFriction`) and are identified with its other parameters by the same prior fit on the
moving pairs (r_ij = 1). The transmitted torque tau_t is the rigid-body torque of a reference parameter vector
(inertial parameters and rotor inertia, fixed at fit time), the form of the simulator's geared joints
(:mod:`deadzone_id_ros.sim.geared`, where tau_t is the applied torque).
:func:`~deadzone_id_ros.models.friction_fit.fit_extended_friction` chooses vs
among multiples of each joint's RMS velocity by the prior fit's own cross-validation, refits once with the load
reference of the chosen fit, and reports the breakaway friction Fc + Fst next to the static band that the stuck
pairs show (r_ij = 0: the 95% quantile of |tau - rigid body without dry friction|), so the two can be compared.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["STRIBECK_EXPONENT", "ExtendedFriction"]

#: The Stribeck exponent a of s(v) = exp(-(|v| / vs)^a): 2, the Gaussian form of Armstrong-Hélouvry et al. 1994.
STRIBECK_EXPONENT = 2.0


@dataclass(frozen=True)
class ExtendedFriction:
    """Stribeck and load-dependent friction columns of a rigid-body regressor (module docstring).

    Attributes:
        stribeck_velocity: (J,) vs_j [rad/s], > 0.
        exponent: a of s(v) = exp(-(|v| / vs)^a), > 0.
        load_reference: (10 B + J,) inertial parameters of the B bodies and rotor inertias whose rigid-body torque
            is the transmitted torque tau_t, or None (Stribeck only, no load columns).

    Raises:
        ValueError: a velocity or the exponent is not positive and finite, or the reference is not finite.
    """

    stribeck_velocity: np.ndarray
    exponent: float = STRIBECK_EXPONENT
    load_reference: np.ndarray | None = None

    def __post_init__(self) -> None:
        vs = np.asarray(self.stribeck_velocity, dtype=np.float64)
        if vs.ndim != 1 or not np.all(np.isfinite(vs)) or not np.all(vs > 0):
            raise ValueError(f"stribeck_velocity = {self.stribeck_velocity!r} must be (J,) finite values > 0 rad/s")
        if not (np.isfinite(self.exponent) and self.exponent > 0):
            raise ValueError(f"exponent = {self.exponent!r} must be finite and > 0")
        if self.load_reference is not None and not np.all(np.isfinite(self.load_reference)):
            raise ValueError("load_reference holds non-finite values")
        object.__setattr__(self, "stribeck_velocity", vs)
        if self.load_reference is not None:
            object.__setattr__(self, "load_reference", np.asarray(self.load_reference, dtype=np.float64).ravel())

    @property
    def terms(self) -> tuple[str, ...]:
        """Column name suffixes, one column per joint each: stribeck, and with a load reference load, load_stribeck."""
        return ("stribeck",) if self.load_reference is None else ("stribeck", "load", "load_stribeck")

    def check(self, n_joints: int, n_inertial: int) -> None:
        """Raise ValueError unless sized for ``n_joints`` joints and ``n_inertial`` inertial parameters."""
        if self.stribeck_velocity.shape != (n_joints,):
            raise ValueError(f"stribeck_velocity has {self.stribeck_velocity.shape} values for {n_joints} joints")
        if self.load_reference is not None and self.load_reference.shape != (n_inertial + n_joints,):
            raise ValueError(f"load_reference has {self.load_reference.shape[0]} values; {n_inertial} inertial "
                             f"parameters and {n_joints} rotor inertias need {n_inertial + n_joints}")

    def curve(self, dq: np.ndarray) -> np.ndarray:
        """s(dq) = exp(-(|dq| / vs)^a), dq (N, J) [rad/s] -> (N, J) in (0, 1]."""
        return np.exp(-((np.abs(dq) / self.stribeck_velocity) ** self.exponent))

    def columns(self, inertial: np.ndarray, dq: np.ndarray, ddq: np.ndarray, eps: np.ndarray) -> np.ndarray:
        """The friction columns (N, J, T J) of the regressor: entry [:, j, t J + j] is term t of joint j.

        Args:
            inertial: (N, J, 10 B) the inertial part of the regressor.  dq, ddq: (N, J) [rad/s, rad/s²].
            eps: (J,) smooth-sign scale [rad/s].
        """
        n, J = dq.shape
        sgn = np.tanh(dq / eps)
        s = self.curve(dq)
        terms = [s * sgn]
        if self.load_reference is not None:
            k = inertial.shape[2]
            load = np.abs(inertial @ self.load_reference[:k] + self.load_reference[k:] * ddq)
            terms += [load * sgn, load * s * sgn]
        out = np.zeros((n, J, len(terms) * J))
        r = np.arange(J)
        for t, col in enumerate(terms):
            out[:, r, t * J + r] = col
        return out

    def to_json(self) -> dict[str, object]:
        """The settings as plain JSON values (an artifact's model.json)."""
        return {"stribeck_velocity": self.stribeck_velocity.tolist(), "exponent": float(self.exponent),
                "load_reference": None if self.load_reference is None else self.load_reference.tolist()}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> ExtendedFriction:
        """The inverse of :meth:`to_json`.

        Raises:
            ValueError: a missing key or bad values (named).
        """
        try:
            ref = data["load_reference"]
            return cls(np.asarray(data["stribeck_velocity"], dtype=np.float64), float(str(data["exponent"])),
                       None if ref is None else np.asarray(ref, dtype=np.float64))
        except KeyError as err:
            raise ValueError(f"friction settings lack {err}") from err
