"""The per-joint residual (issue 35, item 4): a registered method whose network is one small network per joint
reading only that joint's own q, dq, ddq and its rigid-body torque, trained with the dead-zone mask through the one
planner; it saves and loads, and is not written to ONNX (whose inputs are q, dq, ddq only)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deadzone_id_ros.data.deadzone import fit_dead_zone
from deadzone_id_ros.models import load_artifact, save_artifact
from deadzone_id_ros.models.methods import get_method, resolve_methods
from deadzone_id_ros.models.mlp import block_masks
from deadzone_id_ros.models.rbd import RigidBodyRegressor
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.training.evaluate import evaluate_model
from deadzone_id_ros.training.fit import stack_episodes
from deadzone_id_ros.training.planner import PER_JOINT_HIDDEN, fit_method, per_joint_blocks


def test_per_joint_blocks_and_masks():
    # 3 joints, joint 1 continuous: features [q0, sin q1, q2, cos q1, dq0..2, ddq0..2, tau_rb0..2] (13 columns)
    blocks = per_joint_blocks(3, (1,))
    assert blocks == ((0, 4, 7, 10), (1, 3, 5, 8, 11), (2, 6, 9, 12))
    masks = block_masks(blocks, (6, 6), 13)
    assert [m.shape for m in masks] == [(6, 13), (6, 6), (3, 6)]
    assert masks[0][2:4].sum(axis=0).nonzero()[0].tolist() == [1, 3, 5, 8, 11]  # joint 1's units read its columns
    assert np.array_equal(masks[1], np.kron(np.eye(3), np.ones((2, 2))))
    with pytest.raises(ValueError, match="multiples of the 3 blocks"):
        block_masks(blocks, (7,), 13)
    with pytest.raises(ValueError, match="must lie in"):
        block_masks(((0, 13),), (2,), 13)


def test_per_joint_residual_is_registered_and_fitted_per_joint(sim_dataset, tiny_config, tmp_path):
    entry = get_method("hybrid_joint")
    assert entry.per_joint and entry.needs.residual and entry.needs.mask and entry.needs.rigid_body == "required"
    assert "hybrid_joint" in [m.name for m in resolve_methods(None)]
    eps = sim_dataset.episodes
    dz = fit_dead_zone(eps[:1])
    train, val = stack_episodes(eps[:1], dz), stack_episodes(eps[1:], dz)
    reg = RigidBodyRegressor(default_urdf().read_text(), train.joint_names, tiny_config.friction_eps_for(dz.threshold))
    rbd = fit_method("rbd", train, val, dz, tiny_config, regressor=reg).model
    fit = fit_method("hybrid_joint", train, val, dz, tiny_config, rbd=rbd.rbd)
    model, mlp = fit.model, fit.model.mlp
    assert mlp is not None and model.rbd is rbd.rbd
    assert mlp.extra_inputs == 3 and mlp.hidden_sizes == tuple(3 * w for w in PER_JOINT_HIDDEN)
    # joint j's output reads only joint j's inputs: change everything of joints 1 and 2, joint 0's output stays
    x = np.concatenate([val.q, val.dq, val.ddq, rbd.predict(val.q, val.dq, val.ddq)], axis=1)[:200]
    other = x.copy()
    for j in (1, 2):
        other[:, [j, 3 + j, 6 + j, 9 + j]] += np.random.default_rng(j).normal(0.0, 1.0, (len(x), 4))
    a, b = mlp.forward(x), mlp.forward(other)
    assert np.allclose(a[:, 0], b[:, 0], atol=1e-12) and not np.allclose(a[:, 1:], b[:, 1:])
    assert np.isfinite(evaluate_model(model, val).nrmse_mean)
    saved = save_artifact(model, tmp_path / "art")
    again = load_artifact(tmp_path / "art")
    assert np.allclose(again.predict(val.q, val.dq, val.ddq), model.predict(val.q, val.dq, val.ddq), atol=1e-9)
    meta = json.loads((tmp_path / "art" / "model.json").read_text())
    assert saved.onnx_file is None and "reads the rigid-body torque" in meta["onnx"]["reason"]
