"""Physical consistency of a body's inertial parameters: the pseudo-inertia matrix and the identification with every
body's pseudo-inertia constrained positive definite (Wensing, Kim, Slotine, "Linear Matrix Inequalities for
Physically Consistent Inertial Parameter Identification", IEEE RA-L 2018), solved with cvxpy and Clarabel."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .regressor import RigidBodyRegressor

__all__ = ["nearest_consistent", "params_from_pseudo_inertia", "pseudo_inertia", "solve_consistent"]


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


def params_from_pseudo_inertia(J: np.ndarray) -> np.ndarray:
    """The 10 inertial parameters (:func:`pseudo_inertia`'s order) of a symmetric 4x4 pseudo-inertia ``J``: m = J_33,
    h = J_{0:3,3}, I = tr(S) 1 - S with S = J_{0:3,0:3} (the inverse of :func:`pseudo_inertia`).

    Raises:
        ValueError: ``J`` is not 4x4.
    """
    J = np.asarray(J, dtype=np.float64)
    if J.shape != (4, 4):
        raise ValueError(f"J must be 4x4, got shape {J.shape}")
    S = 0.5 * (J[:3, :3] + J[:3, :3].T)
    inertia = np.trace(S) * np.eye(3) - S
    h = 0.5 * (J[:3, 3] + J[3, :3])
    return np.array([J[3, 3], *h, inertia[0, 0], inertia[0, 1], inertia[1, 1], inertia[0, 2], inertia[1, 2],
                     inertia[2, 2]])


#: relative change (Frobenius norm over the trace of the pseudo-inertia) of the repair below which it is the solver's
#: tolerance and passes without a word
REPAIR_TOLERANCE = 1e-6


def nearest_consistent(params: np.ndarray, eps: float) -> np.ndarray:
    """``params`` (10,) moved to the nearest body (Frobenius norm of the pseudo-inertia) whose pseudo-inertia has
    every eigenvalue >= ``eps`` (> 0): the eigenvalues below it raised to it. Unchanged when already so. A
    conic solver returns a point on its constraint's boundary up to its tolerance; this puts it on the consistent
    side, a change of the order of that tolerance.

    Raises:
        ValueError: ``params`` does not hold 10 values, or ``eps`` is not > 0.
    """
    if not eps > 0:
        raise ValueError(f"eps = {eps!r} must be > 0")
    J = pseudo_inertia(params)
    w, v = np.linalg.eigh(J)
    if w.min() >= eps:
        return np.asarray(params, dtype=np.float64).copy()
    return params_from_pseudo_inertia((v * np.maximum(w, eps)) @ v.T)


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


def solve_consistent(regressor: RigidBodyRegressor, G: np.ndarray, g: np.ndarray, theta0: np.ndarray,
                     lam: float) -> tuple[np.ndarray, str]:
    """min theta^T G theta - 2 g^T theta + lam sum_k s_k^2 (theta_k - theta0_k)^2 subject to every body's
    pseudo-inertia >= eps_b 1 and rotor inertia >= 0 (the docstring of :mod:`deadzone_id_ros.models.rbd`), with
    cvxpy and Clarabel, in the column-scaled variables z = theta s of the unconstrained solve.

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
    margins = []
    for b in range(regressor.n_inertial // 10):
        sl = slice(10 * b, 10 * b + 10)
        J0 = pseudo_inertia(theta0[sl])
        eps = 1e-6 * float(np.trace(J0)) if np.trace(J0) > 0 else 1e-9
        margins.append((sl, eps))
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
    theta = d * np.asarray(z.value, dtype=np.float64)
    # the solver meets the constraints to its tolerance, relative to the problem's scale: a body whose unexcited
    # inertia the fit left large can come out a hair outside (on DFKI A0 the elbow's pseudo-inertia had a negative
    # eigenvalue of 1e-8 beside entries of 31 kg·m², and export refused it); put every body on the consistent side
    for b, (sl, eps) in enumerate(margins):
        before = pseudo_inertia(theta[sl])
        theta[sl] = nearest_consistent(theta[sl], eps)
        moved = float(np.linalg.norm(pseudo_inertia(theta[sl]) - before)) / max(float(np.trace(before)), 1e-300)
        if moved > REPAIR_TOLERANCE:  # more than the solver's tolerance: say so, the fit is not what was solved
            warnings.warn(f"physically consistent identification: body {b} was {moved:.2g} of its pseudo-inertia's "
                          f"trace outside consistency (solver status {problem.status!r}); moved onto it",
                          RuntimeWarning, stacklevel=2)
    theta[arm] = np.maximum(theta[arm], 0.0)
    return theta, str(problem.status)
