"""Load-dependent friction identified on free motion: the model error an external-torque residual carries (core).

Why: a geared joint's dry friction grows with the torque its gear transmits (P. Hamon, M. Gautier, P. Garrec, "New
dry friction model with load- and velocity-dependence and dynamic identification of multi-DOF robots", ICRA 2011;
for hobby servos model M4 of M. Duclusaud, G. Passault, V. Padois, O. Ly, "Extended Friction Models for the Physics
Simulation of Servo Actuators", arXiv:2410.08650, 2024, which the simulator's geared profile follows). A model
f(q, dq, ddq) cannot carry that term in contact: under a push the motor torque, and with it the friction, changes by
an amount free motion never showed with that state. Measured on the bundled arm (``deadzone-id sense`` traces,
docs/sensing_results.md): this is what kept the residual of the URDF's rigid body 0.4 N·m off on the elbow while it
moved, against a torque noise of 0.01 N·m.

What: per joint j, a friction law linear in its parameters theta_j (5,), in the measured motor torque tau_m and the
velocity v:

    phi(v, tau_m) = sgn(v) [1, s(v), |tau_m|, s(v) |tau_m|] + [v]            s(v) = exp(-(|v| / vs)^alpha)

(Coulomb, Stribeck, load, load x Stribeck, viscous; sgn smoothed as tanh(v / 0.01 rad/s)). It is identified by least
squares on the moving samples of free motion, with the estimator's own raw residual (w = f - tau_m, no contact) as
the target: whatever of the friction the model f lacks, w shows, and phi theta is that part. The corrected residual
is w - phi theta. The fit is regularized and the Stribeck velocity vs and exponent alpha are chosen on a held-out
time block (:func:`identify_load_friction`). Stuck samples are left out of the fit: their static friction is the dead
zone's band, not a law.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["FRICTION_TERMS", "STRIBECK_EXPONENTS", "STRIBECK_VELOCITIES", "LoadFriction", "identify_load_friction",
           "identify_run_friction"]

#: the regressors of :class:`LoadFriction`, in column order
FRICTION_TERMS = ("coulomb", "stribeck", "load", "load_stribeck", "viscous")
SIGN_VELOCITY = 0.01  # [rad/s] smoothing of sgn(v)
#: the grid of Stribeck velocities vs [rad/s] :func:`identify_load_friction` chooses from: 0.3 to 3 rad/s in steps of
#: a factor 10^(1/6) = 1.47 (it was (0.3, 1, 3), steps of 3.3; why: that function's docstring)
STRIBECK_VELOCITIES = tuple(float(v) for v in np.geomspace(0.3, 3.0, 7))
#: the grid of Stribeck exponents alpha :func:`identify_load_friction` chooses from
STRIBECK_EXPONENTS = (1.0, 1.5, 2.0)


@dataclass(frozen=True)
class LoadFriction:
    """An identified friction correction (module docstring).

    Attributes:
        joint_names: (J,).  theta: (J, 5) coefficients of :data:`FRICTION_TERMS` [N·m, N·m, 1, 1, N·m·s/rad].
        stribeck_velocity: vs [rad/s] > 0.  exponent: alpha > 0.

    Raises:
        ValueError: shapes or values (named).
    """

    joint_names: tuple[str, ...]
    theta: np.ndarray
    stribeck_velocity: float
    exponent: float

    def __post_init__(self) -> None:
        theta = np.asarray(self.theta, dtype=float)
        if theta.shape != (len(self.joint_names), len(FRICTION_TERMS)) or not np.all(np.isfinite(theta)):
            raise ValueError(f"theta must be ({len(self.joint_names)}, {len(FRICTION_TERMS)}) finite values, got "
                             f"shape {theta.shape}")
        object.__setattr__(self, "theta", theta)
        if not (self.stribeck_velocity > 0 and self.exponent > 0):
            raise ValueError(f"stribeck_velocity {self.stribeck_velocity!r} and exponent {self.exponent!r} must be "
                             "> 0")

    def features(self, dq: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """phi (..., J, 5) at velocity ``dq`` (..., J) [rad/s] and motor torque ``tau`` (..., J) [N·m]."""
        return friction_features(dq, tau, self.stribeck_velocity, self.exponent)

    def torque(self, dq: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """phi theta (..., J) [N·m]: the part of the raw residual the law explains (subtract it from the residual).

        Evaluated factored, sgn (th0 + s th1 + |tau| (th2 + s th3)) + th4 dq, without building phi: the same sum in
        another order (equal to the last bits), at a third of the cost on one sample (the estimator's every tick).
        """
        dq, tau = np.asarray(dq, dtype=float), np.asarray(tau, dtype=float)
        th = self.theta
        sign, s = _sign_and_stribeck(dq, self.stribeck_velocity, self.exponent)
        return sign * (th[:, 0] + s * th[:, 1] + np.abs(tau) * (th[:, 2] + s * th[:, 3])) + th[:, 4] * dq

    def load_gain(self) -> np.ndarray:
        """(J,) the identified growth of the static friction with |tau_m| at rest (|load + load x Stribeck|) [1]."""
        return np.abs(self.theta[:, 2] + self.theta[:, 3])


def _sign_and_stribeck(dq: np.ndarray, velocity: float, exponent: float) -> tuple[np.ndarray, np.ndarray]:
    """The smooth sign tanh(dq / SIGN_VELOCITY) and the Stribeck curve exp(-(|dq| / vs)^alpha), each shaped like
    ``dq`` [rad/s]: the factors of every friction term."""
    return np.tanh(dq / SIGN_VELOCITY), np.exp(-((np.abs(dq) / velocity) ** exponent))


def friction_features(dq: np.ndarray, tau: np.ndarray, velocity: float, exponent: float) -> np.ndarray:
    """The regressors of :data:`FRICTION_TERMS`, (..., J, 5), at ``dq`` [rad/s] and ``tau`` [N·m] (..., J)."""
    dq, tau = np.asarray(dq, dtype=float), np.asarray(tau, dtype=float)
    sign, s = _sign_and_stribeck(dq, velocity, exponent)
    load = np.abs(tau)
    return np.stack([sign, sign * s, sign * load, sign * s * load, dq], axis=-1)


def identify_load_friction(residual: np.ndarray, dq: np.ndarray, tau: np.ndarray,
                           velocity_threshold: Sequence[float] | np.ndarray, joint_names: Sequence[str],
                           velocities: Sequence[float] = STRIBECK_VELOCITIES,
                           exponents: Sequence[float] = STRIBECK_EXPONENTS, ridge: float = 1e-3,
                           validation: float = 0.3) -> LoadFriction:
    """Regularized least-squares fit of :class:`LoadFriction` on free motion (module docstring).

    The regressors are nearly collinear for some (vs, alpha) (sgn(v) s(v) is sgn(v) minus a multiple of v where
    |v| << vs), which lets plain least squares trade huge opposite coefficients that then extrapolate badly to loads
    and speeds the calibration did not show. So the fit is ridge regression (Tikhonov; A. E. Hoerl, R. W. Kennard,
    Technometrics 12(1), 1970) on regressors scaled to unit RMS, with penalty ``ridge`` times the number of samples,
    and (vs, alpha) is the pair with the least error on a held-out last ``validation`` share of the samples (a time
    block, not random rows), after which the chosen pair is refitted on every sample. A joint whose held-out error the
    law does not lower (fitted on the rest, with that pair) gets no correction (theta_j = 0): where the model already
    holds the friction, or the torque is measured after the gears (a link-side sensor), the law would only fit noise.
    The same block also chose (vs, alpha), so the check is not independent of the choice: it drops a law that does not
    pay even at its best pair, and can keep one that would not pay on other data.

    Why the grid is fine (:data:`STRIBECK_VELOCITIES`, :data:`STRIBECK_EXPONENTS`): the corrected residual must hold
    at speeds and loads beyond the calibration run's (the excitation's peak speed differs from seed to seed, up to 3x
    on a joint: a free-motion run reaches speeds its calibration never showed), and there the load x Stribeck term
    ``s(v) |tau_m|`` decides it. Measured on the so101 (``deadzone-id sense``, docs/sensing_results.md): with vs in
    (0.3, 1, 3) and alpha in (1, 2) the held-out block picked vs = 1, alpha = 2, whose s(2.6 rad/s) = 0.001 against
    the simulated servo's 0.13 (vs = 1.52, alpha = 1.33, geared_desktop_arm): up to 2.2 rad/s (the calibration's
    elbow) both curves fit alike, beyond it the law dropped 0.03 N·m of friction at 1.1 N·m of load, and the elbow's
    residual crossed its threshold at 2.6 to 2.8 rad/s (3 false contacts in 10 simulated minutes). On the finer grid
    the held-out block tells the curves apart (vs = 1.39, alpha = 1.5 there) and the largest excess of that run falls
    to 0.82 of the threshold. The law still extrapolates: it holds beyond the calibrated speeds only as far as the
    arm's friction has this form.

    Args:
        residual: (N, J) the estimator's raw residual f - tau_m on free motion (no contact) [N·m].
        dq: (N, J) velocity [rad/s].  tau: (N, J) motor torque of each sample's interval [N·m].
        velocity_threshold: (J,) [rad/s]: samples with |dq| above it (moving) are fitted.  joint_names: (J,).
        velocities, exponents: the grid of vs [rad/s] and alpha.
        ridge: >= 0, the penalty per sample on the scaled coefficients.  validation: in (0, 1), the held-out share.

    Raises:
        ValueError: shapes differ, a joint with fewer moving samples than 10 per parameter, non-finite values, an empty
            grid, ridge or validation out of range.
    """
    w, v, t = (np.asarray(a, dtype=float) for a in (residual, dq, tau))
    names = tuple(joint_names)
    if w.ndim != 2 or w.shape != v.shape or w.shape != t.shape or w.shape[1] != len(names):
        raise ValueError(f"residual {w.shape}, dq {v.shape} and tau {t.shape} must be the same (N, {len(names)})")
    if not (np.all(np.isfinite(w)) and np.all(np.isfinite(v)) and np.all(np.isfinite(t))):
        raise ValueError("residual, dq and tau must be finite")
    if not velocities or not exponents:
        raise ValueError("velocities and exponents must each hold at least one value")
    if not (ridge >= 0 and 0 < validation < 1):
        raise ValueError(f"ridge = {ridge!r} must be >= 0 and validation = {validation!r} in (0, 1)")
    moving = np.abs(v) > np.asarray(velocity_threshold, dtype=float)
    split = int(round(len(w) * (1.0 - validation)))
    for j, name in enumerate(names):
        for part in (moving[:split, j], moving[split:, j]):
            if part.sum() < 10 * len(FRICTION_TERMS):
                raise ValueError(f"joint {name!r} moves in {int(part.sum())} samples of a part of the calibration: "
                                 "too few to fit its friction")
    best, best_err = (float(velocities[0]), float(exponents[0])), np.inf
    for vs in velocities:
        for alpha in exponents:
            phi = friction_features(v, t, vs, alpha)
            err = 0.0
            for j in range(len(names)):
                fit, held = moving[:split, j], moving[split:, j]
                theta = _ridge(phi[:split][fit, j], w[:split][fit, j], ridge)
                err += float(((phi[split:][held, j] @ theta - w[split:][held, j]) ** 2).sum())
            if err < best_err:
                best, best_err = (float(vs), float(alpha)), err
    phi = friction_features(v, t, *best)
    theta = np.array([_ridge(phi[moving[:, j], j], w[moving[:, j], j], ridge) for j in range(len(names))])
    for j in range(len(names)):  # a joint keeps its law only where the law lowers its held-out error
        fit, held = moving[:split, j], moving[split:, j]
        law = phi[split:][held, j] @ _ridge(phi[:split][fit, j], w[:split][fit, j], ridge)
        if not ((law - w[split:][held, j]) ** 2).sum() < (w[split:][held, j] ** 2).sum():
            theta[j] = 0.0
    return LoadFriction(names, theta, *best)


def identify_run_friction(residual: np.ndarray, dq: np.ndarray, tau: np.ndarray,
                          velocity_threshold: Sequence[float] | np.ndarray,
                          joint_names: Sequence[str]) -> tuple[LoadFriction, np.ndarray]:
    """:func:`identify_load_friction` on the series of one free-motion run sampled state by state, as the estimators
    see it: sample k's residual is that of the interval from state k-1 to state k, so it goes with the velocity at
    the interval's start, dq_{k-1}; the first sample has no interval and is left out of the fit.

    Args:
        residual: (N, J) the raw residual of each interval [N·m].  dq: (N, J) the velocity of each state [rad/s].
        tau: (N, J) motor torque of each interval [N·m].  velocity_threshold: (J,) [rad/s].  joint_names: (J,).

    Returns:
        (the identified law, dq0 (N, J): the interval-start velocity of each sample [rad/s], the first sample's its
        own), so that ``residual - law.torque(dq0, tau)`` is the corrected residual of the run.

    Raises:
        ValueError: as :func:`identify_load_friction`.
    """
    v = np.asarray(dq, dtype=float)
    dq0 = np.vstack([v[:1], v[:-1]])
    law = identify_load_friction(np.asarray(residual, dtype=float)[1:], dq0[1:], np.asarray(tau, dtype=float)[1:],
                                 velocity_threshold, joint_names)
    return law, dq0


def _ridge(x: np.ndarray, y: np.ndarray, ridge: float) -> np.ndarray:
    """argmin |x b - y|² + ridge N |diag(scale) b|², scale = RMS of each column of x (N, K); returns b (K,)."""
    scale = np.sqrt((x ** 2).mean(axis=0))
    scale = np.where(scale > 0, scale, 1.0)
    xs = x / scale
    k = xs.shape[1]
    b = np.linalg.solve(xs.T @ xs + ridge * len(y) * np.eye(k), xs.T @ y)
    return b / scale
