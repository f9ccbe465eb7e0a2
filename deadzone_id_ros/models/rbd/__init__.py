"""Rigid-body (Newton–Euler) inverse dynamics with identified base parameters and friction (core, no ROS).

Where each part lives: :mod:`.regressor` (the joint torque regressor of the URDF), :mod:`.model` (the identified
model that predicts, and the URDF's gravity baseline), :mod:`.identify` (both fits below) and :mod:`.consistency`
(the pseudo-inertia and the physically consistent solve).

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

from .consistency import pseudo_inertia
from .identify import PRIOR_GRID, fit_rigid_body
from .model import RigidBodyFitInfo, RigidBodyModel, urdf_gravity_model
from .regressor import RigidBodyRegressor

__all__ = ["PRIOR_GRID", "RigidBodyFitInfo", "RigidBodyModel", "RigidBodyRegressor", "fit_rigid_body",
           "pseudo_inertia", "urdf_gravity_model"]
