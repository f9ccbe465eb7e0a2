"""Rigid-body baseline: base-parameter identification from pinocchio's regressor recovers the simulated arm."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from deadzone_id_ros.errors import RobotDescriptionError
from deadzone_id_ros.models import RigidBodyRegressor, fit_rigid_body
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot_configs import bundled_sim_config
from deadzone_id_ros.sim import SimArm


@pytest.fixture(scope="module")
def arm():
    return SimArm(bundled_sim_config(profile="ideal"))  # exact Coulomb + viscous friction, what the rbd model fits


@pytest.fixture(scope="module")
def reg(arm):
    return RigidBodyRegressor(default_urdf().read_text(), arm.joint_names, friction_eps=0.01)


def test_noise_free_fit_recovers_torques_and_base_parameters(arm, reg):
    q, dq, ddq = reg.random_states(600, seed=1)
    tau = arm.inverse_dynamics(q, dq, ddq)  # MuJoCo, friction off: rigid body + armature
    model = fit_rigid_body(reg, q, dq, ddq, tau, prior_weight=None)  # plain least squares on base columns
    # fresh states: predicted torques within 1% (relative RMS per joint)
    q2, dq2, ddq2 = reg.random_states(300, seed=2)
    tau2 = arm.inverse_dynamics(q2, dq2, ddq2)
    rel = np.sqrt(((model.predict(q2, dq2, ddq2) - tau2) ** 2).mean(0)) / np.sqrt((tau2 ** 2).mean(0))
    assert np.all(rel < 0.01), rel
    # identifiable combinations: project the URDF's true parameters (+ armature) onto the chosen base columns
    pi = reg.true_parameters(armature=arm.config.armature)
    W = reg.regressor(q2, dq2, ddq2).reshape(-1, reg.n_columns)
    beta_true = np.linalg.lstsq(W[:, model.columns], W @ pi, rcond=None)[0]
    big = np.abs(beta_true) > 1e-6
    assert big.sum() >= 8  # first moments, inertia combinations, armature
    np.testing.assert_allclose(model.coefficients[big], beta_true[big], rtol=0.01)
    np.testing.assert_allclose(model.coefficients[~big], 0.0, atol=1e-6)
    # friction is off in the data: identified friction near zero
    params = model.parameters()
    for n in arm.joint_names:
        assert abs(params[f"{n}.viscous"]) < 1e-6 and abs(params[f"{n}.coulomb"]) < 1e-6


def test_friction_recovered_on_moving_rows(arm, reg):
    q, dq, ddq = reg.random_states(800, seed=3)
    tau = arm.inverse_dynamics(q, dq, ddq, friction=True)  # Coulomb with an exact sign
    moving = np.abs(dq) > 0.1  # tanh(dq / 0.01) = sign(dq) to 1e-8 here
    model = fit_rigid_body(reg, q, dq, ddq, tau, moving)
    p = model.parameters()
    for j, n in enumerate(arm.joint_names):
        assert p[f"{n}.viscous"] == pytest.approx(arm.config.damping[j], rel=0.01)
        assert p[f"{n}.coulomb"] == pytest.approx(arm.config.frictionloss[j], rel=0.01)


def test_prior_fit_keeps_what_the_data_does_not_excite_at_the_urdf(reg):
    """Only joint 1 moves, about one configuration: plain least squares cannot tell the other parameters apart and
    predicts badly elsewhere; the prior fit keeps them at the URDF's values and predicts every state."""
    rng = np.random.default_rng(5)
    q = np.zeros((400, 3))
    q[:, 0] = rng.uniform(-1, 1, 400)
    dq, ddq = np.zeros_like(q), np.zeros_like(q)
    dq[:, 0], ddq[:, 0] = rng.normal(0, 1, 400), rng.normal(0, 3, 400)
    theta0 = reg.prior_parameters()
    tau = reg.regressor(q, dq, ddq) @ theta0  # the URDF's own torques (its inertias, damping and friction)
    moving = np.abs(dq) > 0.05
    prior = fit_rigid_body(reg, q, dq, ddq, tau, moving)
    plain = fit_rigid_body(reg, q, dq, ddq, tau, moving, prior_weight=None)
    q2, dq2, ddq2 = reg.random_states(200, seed=6)
    tau2 = reg.regressor(q2, dq2, ddq2) @ theta0
    rel = {name: np.sqrt(((m.predict(q2, dq2, ddq2) - tau2) ** 2).mean()) / np.sqrt((tau2 ** 2).mean())
           for name, m in (("prior", prior), ("plain", plain))}
    assert rel["prior"] < 1e-3 and rel["plain"] > 0.1, rel
    assert prior.inconsistent_bodies() == []
    np.testing.assert_allclose(fit_rigid_body(reg, q, dq, ddq, tau, moving, prior_weight=1e6).coefficients, theta0,
                               rtol=1e-4, atol=1e-9)


def test_prior_fit_weights_joints_alike_and_says_what_it_chose(arm, reg):
    q, dq, ddq = reg.random_states(300, seed=7)
    tau = arm.inverse_dynamics(q, dq, ddq, friction=True)
    model = fit_rigid_body(reg, q, dq, ddq, tau, np.abs(dq) > 0.1)
    info = model.fit_info
    assert info["prior_weight"] in [float(k) for k in info["cv_nrmse"]] and info["folds"] == 5
    assert info["cv_nrmse"][f"{info['prior_weight']:g}"] == min(info["cv_nrmse"].values())
    with pytest.raises(ValueError, match="prior_weight"):
        fit_rigid_body(reg, q, dq, ddq, tau, prior_weight="big")


def test_single_sample_prediction_matches_batch(arm, reg):
    q, dq, ddq = reg.random_states(50, seed=4)
    model = fit_rigid_body(reg, q, dq, ddq, arm.inverse_dynamics(q, dq, ddq))
    np.testing.assert_allclose(model.predict(q[3], dq[3], ddq[3]), model.predict(q, dq, ddq)[3], atol=1e-12)


def test_batch_predictions_remembered_by_content(arm, reg):
    """A repeated batch prediction (equal arrays, other objects) is served from the memo, bit for bit, as a copy the
    caller may change; a changed array is predicted afresh; the memo keeps the last few only."""
    q, dq, ddq = reg.random_states(1200, seed=6)
    model = fit_rigid_body(reg, q, dq, ddq, arm.inverse_dynamics(q, dq, ddq))
    direct = reg.regressor(q, dq, ddq)[:, :, model.columns] @ model.coefficients
    first = model.predict(q, dq, ddq)
    np.testing.assert_array_equal(first, direct)
    first[:] = 0.0
    again = model.predict(q.copy(), dq.copy(), ddq.copy())
    np.testing.assert_array_equal(again, direct)
    assert len(model._memo) == 1  # served from the memo
    ddq2 = ddq.copy()
    ddq2[7, 1] += 1.0
    changed = model.predict(q, dq, ddq2)
    assert len(model._memo) == 2
    np.testing.assert_array_equal(changed, reg.regressor(q, dq, ddq2)[:, :, model.columns] @ model.coefficients)
    assert not np.array_equal(changed[7], direct[7]) and np.array_equal(changed[8:], direct[8:])
    for s in range(5):
        model.predict(*reg.random_states(1000, seed=10 + s))
    assert len(model._memo) == 4
    copy = pickle.loads(pickle.dumps(model))  # travels without the memo, predicts the same
    assert len(copy._memo) == 0 and len(model._memo) == 4
    np.testing.assert_array_equal(copy.predict(q, dq, ddq), direct)


def test_errors(arm, reg):
    xml = default_urdf().read_text()
    with pytest.raises(RobotDescriptionError, match=r"joint\(s\) \['elbow'\] not in the URDF.*data joints "
                       r"\['joint1', 'joint2', 'elbow'\], URDF joints \['joint1', 'joint2', 'joint3'\]"):
        RigidBodyRegressor(xml, ("joint1", "joint2", "elbow"))
    # a joint the data lacks is locked (default 0), no longer refused
    assert RigidBodyRegressor(xml, ("joint1", "joint2")).locked == {"joint3": 0.0}
    with pytest.raises(RobotDescriptionError, match="cannot parse"):
        RigidBodyRegressor("<robot", ("joint1",), source="broken.urdf")
    with pytest.raises(ValueError, match="friction_eps = 0 must be > 0"):
        RigidBodyRegressor(xml, arm.joint_names, friction_eps=0)
    q, dq, ddq = reg.random_states(2, seed=5)
    with pytest.raises(ValueError, match="only 6 moving"):
        fit_rigid_body(reg, q, dq, ddq, np.zeros_like(q))
    with pytest.raises(ValueError, match="tau must have the shape"):
        fit_rigid_body(reg, q, dq, ddq, np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"ddq must have shape \(2, 3\) like q; got \(2, 2\)"):
        reg.regressor(q, dq, ddq[:, :2])
