"""Physically consistent identification (issue 35): on short, poorly exciting data plain least squares returns
bodies no real body has (pseudo-inertia not positive definite), the LMI-constrained fit (Wensing, Kim, Slotine 2018)
does not, and still fits the data."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.models.rbd import RigidBodyRegressor, fit_rigid_body, pseudo_inertia
from deadzone_id_ros.models.rbd.consistency import nearest_consistent, params_from_pseudo_inertia


@pytest.fixture(scope="module")
def short_data():
    """2 s of one slow, small sinusoid on every joint of the bundled 3-DOF arm (200 samples at 100 Hz), torques
    from the URDF's own parameters plus 0.05 N·m noise: a few directions of the parameter space are excited."""
    from deadzone_id_ros.resources import default_urdf

    reg = RigidBodyRegressor(default_urdf().read_text(), ("joint1", "joint2", "joint3"))
    t = np.arange(0.0, 2.0, 0.01)
    q = 0.2 * np.sin(np.pi * t)[:, None] * np.ones(3) + np.array([0.0, 0.1, 0.2])
    dq = np.gradient(q, t, axis=0)
    ddq = np.gradient(dq, t, axis=0)
    tau = reg.regressor(q, dq, ddq) @ reg.true_parameters() + np.random.default_rng(0).normal(0, 0.05, q.shape)
    return reg, q, dq, ddq, tau


def test_pseudo_inertia_is_positive_definite_for_a_real_body():
    # a 2 kg box 0.1 x 0.2 x 0.3 m with its centre at (0.1, 0, 0): inertia about the frame origin by Steiner
    m, c, (a, b, h) = 2.0, np.array([0.1, 0.0, 0.0]), (0.1, 0.2, 0.3)
    ic = m / 12 * np.diag([b * b + h * h, a * a + h * h, a * a + b * b])
    i0 = ic + m * (c @ c * np.eye(3) - np.outer(c, c))
    p = np.array([m, *(m * c), i0[0, 0], i0[0, 1], i0[1, 1], i0[0, 2], i0[1, 2], i0[2, 2]])
    J = pseudo_inertia(p)
    assert J[3, 3] == m and np.allclose(J[:3, 3], m * c) and np.linalg.eigvalsh(J).min() > 0
    assert np.allclose(J[:3, :3], 0.5 * np.trace(i0) * np.eye(3) - i0)
    p[0] = -1.0  # a negative mass
    assert np.linalg.eigvalsh(pseudo_inertia(p)).min() < 0
    with pytest.raises(ValueError, match="10 inertial parameters"):
        pseudo_inertia(p[:9])


def test_a_body_a_hair_outside_consistency_is_moved_onto_it():
    # the DFKI elbow of an rbd_consistent fit, as Clarabel returned it: 26 g, unexcited inertia of 31 kg·m², and a
    # pseudo-inertia eigenvalue of -1e-8 (the solver's tolerance at that scale); the export refused it
    p = np.array([0.02640344106784674, -7.440037896357857e-14, 3.701020847577505e-05, -0.0020929344394961247,
                  0.00016733013381297365, 2.2061970169096864e-16, 31.158149355075732, -5.896552856322199e-15,
                  4.443618452161782e-06, 31.157983816845285])
    assert np.allclose(params_from_pseudo_inertia(pseudo_inertia(p)), p, rtol=0, atol=1e-12)  # the exact inverse
    assert np.linalg.eigvalsh(pseudo_inertia(p)).min() <= 0
    eps = 1e-9
    fixed = nearest_consistent(p, eps)
    assert np.linalg.eigvalsh(pseudo_inertia(fixed)).min() >= eps * (1 - 1e-6)
    assert np.abs(fixed - p).max() < 1e-6  # a change of the solver's tolerance, not a new body
    good = nearest_consistent(fixed, eps)
    assert np.array_equal(good, fixed)  # a consistent body is left alone
    with pytest.raises(ValueError, match="eps"):
        nearest_consistent(p, 0.0)


def test_consistent_fit_on_short_poorly_exciting_data(short_data):
    reg, q, dq, ddq, tau = short_data
    plain = fit_rigid_body(reg, q, dq, ddq, tau, prior_weight=0.0)  # least squares on every parameter
    assert plain.inconsistent_bodies(), "plain least squares should return an inconsistent body here"
    lmi = fit_rigid_body(reg, q, dq, ddq, tau, prior_weight=0.0, consistent=True)
    assert lmi.inconsistent_bodies() == [] and lmi.fit_info["inconsistent_bodies"] == []
    assert lmi.fit_info["consistent"] is True and lmi.fit_info["solver_status"].startswith("optimal")
    p = lmi.parameters()
    for k in range(1, reg.model.njoints):
        body = str(reg.model.names[k])
        J = pseudo_inertia(np.array([p[f"{body}.{n}"] for n in ("m", "mcx", "mcy", "mcz", "Ixx", "Ixy", "Iyy", "Ixz",
                                                                  "Iyz", "Izz")]))
        assert np.linalg.eigvalsh(J).min() > 0 and p[f"{body}.m"] > 0
    assert all(p[f"joint{j}.armature"] >= -1e-12 for j in (1, 2, 3))
    # it still explains the data: training RMSE within 2x of the unconstrained fit (+ 0.01 N·m)
    rmse = lambda m: float(np.sqrt(np.mean((m.predict(q, dq, ddq) - tau) ** 2)))  # noqa: E731
    assert rmse(lmi) <= 2 * rmse(plain) + 0.01
    with pytest.raises(ValueError, match="give prior_weight"):
        fit_rigid_body(reg, q, dq, ddq, tau, prior_weight=None, consistent=True)


def test_the_gravity_baseline_is_the_urdfs_gravity_torque(short_data, tmp_path):
    import pinocchio as pin

    from deadzone_id_ros.models import LearnedModel, load_artifact, save_artifact
    from deadzone_id_ros.models.rbd import urdf_gravity_model

    reg, q, dq, ddq, _ = short_data
    grav = urdf_gravity_model(reg)
    model, data = reg.model, reg.model.createData()
    want = np.array([pin.computeGeneralizedGravity(model, data, reg.robot.configuration(qi[None])[0])[reg.robot.idx_v]
                     for qi in q[::20]])
    assert np.allclose(grav.predict(q[::20], dq[::20], ddq[::20]), want, rtol=1e-10, atol=1e-10)
    assert np.allclose(grav.predict(q[::20], 0 * dq[::20], 0 * ddq[::20]), want, rtol=1e-10, atol=1e-10)
    save_artifact(LearnedModel(reg.joint_names, "gravity", rbd=grav), tmp_path / "g")
    loaded = load_artifact(tmp_path / "g")
    assert loaded.rbd is not None and loaded.rbd.gravity_only
    assert np.allclose(loaded.predict(q[::20], dq[::20], ddq[::20]), want, rtol=1e-10, atol=1e-10)
