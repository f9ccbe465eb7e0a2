"""Stribeck and load-dependent friction (issue 35, item 3): the extended fit recovers known friction parameters from
synthesized data with stuck pairs, its breakaway friction agrees with the static band the stuck pairs show, and the
plain rigid body (Coulomb + viscous) cannot explain such data."""

from __future__ import annotations

import numpy as np
import pytest

from deadzone_id_ros.models.friction import ExtendedFriction
from deadzone_id_ros.models.friction_fit import fit_extended_friction
from deadzone_id_ros.models.rbd import RigidBodyRegressor, fit_rigid_body

JOINTS = ("joint1", "joint2", "joint3")
FC = np.array([0.30, 0.25, 0.20])  # Coulomb [N·m]
FST = np.array([0.20, 0.15, 0.12])  # Stribeck excess at rest [N·m]: breakaway Fs = Fc + Fst
KL = np.array([0.02, 0.03, 0.02])  # load friction per N·m transmitted
KLS = np.array([0.10, 0.08, 0.10])  # load friction inside the Stribeck curve


@pytest.fixture(scope="module")
def geared_data():
    """20 s at 100 Hz of a multi-sine on the bundled 3-DOF arm with Stribeck + load friction (vs = 0.3 x each
    joint's RMS velocity) whose joints pause now and then; a paused joint is stuck and its torque is anywhere in
    its static band +- (Fc + Fst + (Kl + Kls) |tau_rb|)."""
    from deadzone_id_ros.resources import default_urdf

    base = RigidBodyRegressor(default_urdf().read_text(), JOINTS, friction_eps=0.02)
    rng = np.random.default_rng(3)
    t = np.arange(0.0, 20.0, 0.01)
    q = np.zeros((len(t), 3))
    for j in range(3):
        for f, a in zip((0.13, 0.31, 0.57), rng.uniform(0.2, 0.5, 3)):
            q[:, j] += a * np.sin(2 * np.pi * f * t + rng.uniform(0, 6.28))
    hold = (np.sin(2 * np.pi * 0.07 * t[:, None] + np.array([0.0, 2.0, 4.0])) > 0.6)  # pauses, ~30% of the time
    for j in range(3):  # freeze q during each pause
        for i in range(1, len(t)):
            if hold[i, j]:
                q[i, j] = q[i - 1, j]
    from scipy.signal import savgol_filter

    q = savgol_filter(q, 31, 3, axis=0)
    dq = np.gradient(q, t, axis=0)
    ddq = np.gradient(dq, t, axis=0)
    r = np.abs(dq) > 0.1 * dq.std(axis=0)
    rms = np.sqrt((dq ** 2 * r).sum(0) / r.sum(0))
    theta_rb = base.prior_parameters()
    ref = theta_rb[: base.n_inertial + 3]
    true = base.with_friction(ExtendedFriction(0.3 * rms, load_reference=ref))
    theta = true.prior_parameters()
    P0 = base.n_columns
    theta[P0 - 3:P0] = FC
    theta[P0:] = np.concatenate([FST, KL, KLS])
    tau = true.regressor(q, dq, ddq) @ theta + rng.normal(0.0, 0.01, q.shape)
    rb = base.regressor(q, dq, ddq)[:, :, : base.n_inertial + 3] @ ref
    band = FC + FST + (KL + KLS) * np.abs(rb)
    tau = np.where(r, tau, rb + rng.uniform(-1.0, 1.0, q.shape) * band)
    return base, q, dq, ddq, tau, r, rms


def test_extended_fit_recovers_stribeck_and_load_friction(geared_data):
    base, q, dq, ddq, tau, r, rms = geared_data
    prior = fit_rigid_body(base, q, dq, ddq, tau, r)
    model = fit_extended_friction(prior, q, dq, ddq, tau, r)
    info = model.fit_info
    assert np.allclose(info["stribeck_velocity"], 0.3 * rms)  # the CV picked the true vs of the grid
    p = model.parameters()
    got = {t: np.array([p[f"{j}.{t}"] for j in JOINTS]) for t in ("coulomb", "stribeck", "load", "load_stribeck")}
    assert np.allclose(got["coulomb"], FC, atol=0.03)
    assert np.allclose(got["stribeck"], FST, atol=0.04)
    assert np.allclose(got["load"], KL, atol=0.015)
    assert np.allclose(got["load_stribeck"], KLS, atol=0.04)
    # breakaway (moving pairs) next to the static band (stuck pairs, 95% quantile of a uniform band at >= Fs)
    assert np.allclose(info["breakaway"], FC + FST, atol=0.05)
    assert np.all(np.asarray(info["static_band"]) >= 0.9 * (FC + FST))
    # the plain rigid body cannot explain the moving pairs as well
    err = lambda m: float(np.sqrt(np.mean((m.predict(q, dq, ddq) - tau)[r] ** 2)))  # noqa: E731
    assert err(model) < 0.5 * err(prior)
    assert err(model) < 0.02


def test_no_friction_columns_where_cross_validation_says_they_do_not_pay(geared_data):
    # the same motion with Coulomb + viscous friction only: the extra columns could only fit the noise
    base, q, dq, ddq, _, r, _ = geared_data
    theta = base.prior_parameters()
    theta[base.n_columns - 3:] = FC
    tau = base.regressor(q, dq, ddq) @ theta + np.random.default_rng(5).normal(0.0, 0.05, q.shape)
    prior = fit_rigid_body(base, q, dq, ddq, tau, r)
    model = fit_extended_friction(prior, q, dq, ddq, tau, r)
    assert model.regressor.friction is None and model.fit_info["stribeck_velocity"] is None
    assert np.array_equal(model.coefficients, prior.coefficients) and model is not prior
    cv = model.fit_info["velocity_cv"]
    assert cv["none"] <= min(v for k, v in cv.items() if k != "none")


def test_extended_friction_rejects_bad_settings(geared_data):
    base = geared_data[0]
    with pytest.raises(ValueError, match="stribeck_velocity"):
        ExtendedFriction(np.array([0.1, -1.0, 0.1]))
    with pytest.raises(ValueError, match="3 joints"):
        base.with_friction(ExtendedFriction(np.array([0.1, 0.1])))
    with pytest.raises(ValueError, match="load_reference"):
        base.with_friction(ExtendedFriction(np.ones(3), load_reference=np.ones(4)))
    with pytest.raises(ValueError, match="grid"):
        fit_extended_friction(fit_rigid_body(base, *geared_data[1:5]), *geared_data[1:6], grid=())
