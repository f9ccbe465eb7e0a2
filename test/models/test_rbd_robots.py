"""Identification on the real-arm URDFs (KUKA LWR4+, DFKI double pendulum) and on reduced (locked) models.

Torques are generated noise-free with pinocchio's RNEA on the URDF itself plus known rotor inertia, viscous and
smooth Coulomb friction; identification must give them back on held-out states and recover the friction.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from deadzone_id_ros.models import RigidBodyRegressor, fit_rigid_body
from deadzone_id_ros.resources import share_file

EPS = 0.01


def _urdf(name: str) -> str:
    return share_file("urdf", f"{name}.urdf").read_text()


def _torques(model, q_full, dq_full, ddq_full, idx_v, armature, viscous, coulomb):
    """RNEA on the full model + joint friction/armature on the joints idx_v: (N, len(idx_v)) [N·m]."""
    data = model.createData()
    tau = np.array([pin.rnea(model, data, q, v, a)[idx_v] for q, v, a in zip(q_full, dq_full, ddq_full)])
    dq, ddq = dq_full[:, idx_v], ddq_full[:, idx_v]
    return tau + armature * ddq + viscous * dq + coulomb * np.tanh(dq / EPS)


def _check_fit(reg, tau_fn, armature, viscous, coulomb, n_fit=500):
    q, dq, ddq = reg.random_states(n_fit, seed=11)
    tau = tau_fn(q, dq, ddq)
    moving = np.abs(dq) > 0.05
    q2, dq2, ddq2 = reg.random_states(200, seed=12)
    tau2 = tau_fn(q2, dq2, ddq2)
    # the default fit (every parameter, URDF prior weighted by cross-validation) gives the torques back as well
    prior_fit = fit_rigid_body(reg, q, dq, ddq, tau, moving)
    err = prior_fit.predict(q2, dq2, ddq2) - tau2
    assert np.all(np.sqrt((err ** 2).mean(0)) / np.sqrt((tau2 ** 2).mean(0)) < 1e-4)
    np.testing.assert_allclose(prior_fit.coulomb(), coulomb, rtol=1e-4)
    model = fit_rigid_body(reg, q, dq, ddq, tau, moving, prior_weight=None)  # plain least squares, base columns
    err = model.predict(q2, dq2, ddq2) - tau2
    rel = np.sqrt((err ** 2).mean(0)) / np.sqrt((tau2 ** 2).mean(0))
    assert np.all(rel < 1e-6), rel
    p = model.parameters()
    for j, n in enumerate(reg.joint_names):
        assert p[f"{n}.viscous"] == pytest.approx(viscous[j], rel=1e-6)
        assert p[f"{n}.coulomb"] == pytest.approx(coulomb[j], rel=1e-6)
    # identifiable combinations of the URDF's own inertial parameters + armature: projected onto the base columns
    pi = reg.true_parameters(armature, viscous, coulomb)
    W = reg.regressor(q2, dq2, ddq2).reshape(-1, reg.n_columns)
    beta_true = np.linalg.lstsq(W[:, model.columns], W @ pi, rcond=None)[0]
    np.testing.assert_allclose(model.coefficients, beta_true, rtol=1e-5, atol=1e-8)
    return model


def test_kuka_lwr4plus_identification_recovers_torques_friction_and_base_parameters():
    xml = _urdf("kuka_lwr4plus")
    names = tuple(f"lwr_arm_{i}_joint" for i in range(7))
    reg = RigidBodyRegressor(xml, names, EPS, source="kuka_lwr4plus.urdf")
    assert reg.locked == {} and reg.n_joints == 7
    full = pin.buildModelFromXML(xml)
    arm, vis, cou = np.linspace(0.2, 0.05, 7), np.linspace(2.0, 0.3, 7), np.linspace(1.5, 0.2, 7)
    idx = np.arange(7)
    model = _check_fit(reg, lambda q, dq, ddq: _torques(full, q, dq, ddq, idx, arm, vis, cou), arm, vis, cou)
    assert len(model.columns) < reg.n_columns  # some parameters are only identifiable in combination


@pytest.mark.parametrize("design", ["a0", "c0"])
def test_dfki_double_pendulum_identification(design):
    xml = _urdf(f"dfki_double_pendulum_{design}")
    reg = RigidBodyRegressor(xml, ("shoulder", "elbow"), EPS)
    full = pin.buildModelFromXML(xml)
    arm, vis, cou = np.array([0.0028, 0.0028]), np.array([0.001, 0.001]), np.array([0.093, 0.078])
    _check_fit(reg, lambda q, dq, ddq: _torques(full, q, dq, ddq, np.arange(2), arm, vis, cou), arm, vis, cou,
               n_fit=200)


def test_locked_joint_and_joint_map_on_kuka():
    """Data with 6 differently named joints; the URDF's wrist joint A6 is locked at 0.5 rad, not at zero."""
    xml = _urdf("kuka_lwr4plus")
    urdf_of = [f"lwr_arm_{i}_joint" for i in (0, 1, 2, 3, 4, 6)]
    data_names = tuple(f"a{i + 1}" for i in range(6))
    jmap = dict(zip(data_names, urdf_of))
    reg = RigidBodyRegressor(xml, data_names, EPS, joint_map=jmap, locked={"lwr_arm_5_joint": 0.5})
    assert reg.locked == {"lwr_arm_5_joint": 0.5}
    assert reg.robot.describe() == "locked 1 URDF joint(s) the data lacks: lwr_arm_5_joint=0.5"
    full = pin.buildModelFromXML(xml)
    arm, vis, cou = np.full(6, 0.1), np.full(6, 0.5), np.full(6, 0.3)
    idx = np.array([0, 1, 2, 3, 4, 6])

    def tau_fn(q, dq, ddq):
        def pad(a, v):
            return np.insert(a, 5, v, axis=1)
        return _torques(full, pad(q, 0.5), pad(dq, 0.0), pad(ddq, 0.0), idx, arm, vis, cou)

    _check_fit(reg, tau_fn, arm, vis, cou, n_fit=400)
    # locked at 0 is another model: the wrist and flange bodies sit elsewhere in the merged link
    reg0 = RigidBodyRegressor(xml, data_names, EPS, joint_map=jmap)
    assert reg0.locked == {"lwr_arm_5_joint": 0.0}
    assert not np.allclose(reg0.true_parameters(), reg.true_parameters(), atol=1e-4)


def test_artifact_keeps_joint_map_and_lock_positions(tmp_path):
    from deadzone_id_ros.models import LearnedModel, load_artifact, save_artifact

    xml = _urdf("kuka_lwr4plus")
    data_names = tuple(f"a{i + 1}" for i in range(6))
    jmap = dict(zip(data_names, [f"lwr_arm_{i}_joint" for i in (0, 1, 2, 3, 4, 6)]))
    reg = RigidBodyRegressor(xml, data_names, EPS, joint_map=jmap, locked={"lwr_arm_5_joint": 0.5})
    q, dq, ddq = reg.random_states(150, seed=3)
    tau = reg.regressor(q, dq, ddq) @ reg.true_parameters(np.full(6, 0.1), np.full(6, 0.5), np.full(6, 0.3))
    model = LearnedModel(data_names, "rbd", rbd=fit_rigid_body(reg, q, dq, ddq, tau))
    loaded = load_artifact(save_artifact(model, tmp_path / "rbd").path)
    assert loaded.rbd.regressor.locked == {"lwr_arm_5_joint": 0.5}
    assert loaded.rbd.regressor.joint_map == jmap
    np.testing.assert_allclose(loaded.predict(q, dq, ddq), model.predict(q, dq, ddq), atol=1e-10)
