"""Continuous joints enter every network on the circle (issue 35): a network's torque is the same at q and q + 2π
of a continuous joint, in process, after a save/load round trip and in the exported ONNX graph."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from deadzone_id_ros.models.mlp import MLPWeights, Standardizer, circle_features

torch.set_num_threads(1)


def test_circle_features_put_sin_in_place_and_append_cos():
    x = np.array([[0.3, 1.0, 2.0, 0.1, 0.2, 0.3, 4.0, 5.0, 6.0]])
    f = circle_features(x, 3, (1,))
    assert f.shape == (1, 10)
    assert np.allclose(f[0], [0.3, np.sin(1.0), 2.0, np.cos(1.0), 0.1, 0.2, 0.3, 4.0, 5.0, 6.0])
    assert circle_features(x, 3, ()) is x
    with pytest.raises(ValueError, match="indices"):
        circle_features(x, 3, (3,))
    with pytest.raises(ValueError, match="9 columns"):
        circle_features(x[:, :6], 3, (0,))
    with pytest.raises(ValueError, match="needs 3J \\+ C = 10 inputs"):
        MLPWeights((np.zeros((2, 9), np.float32), np.zeros((3, 2), np.float32)),
                   (np.zeros(2, np.float32), np.zeros(3, np.float32)), "relu",
                   Standardizer(np.zeros(9), np.ones(9)), Standardizer(np.zeros(3), np.ones(3)), (1,))


@pytest.fixture(scope="module")
def continuous_wrist_model():
    """masked trained through the one planner on the simulated arm, with joint3 made continuous in the URDF."""
    from deadzone_id_ros.data.dataset import dataset_from_recordings
    from deadzone_id_ros.data.deadzone import fit_dead_zone
    from deadzone_id_ros.models.rbd import RigidBodyRegressor
    from deadzone_id_ros.resources import default_urdf
    from deadzone_id_ros.sim.offline import simulate
    from deadzone_id_ros.training import TrainConfig, fit_method
    from deadzone_id_ros.training.fit import stack_episodes

    xml = default_urdf().read_text()
    assert '<joint name="joint3" type="revolute">' in xml
    xml = xml.replace('<joint name="joint3" type="revolute">', '<joint name="joint3" type="continuous">')
    eps = dataset_from_recordings([simulate(4.0, seed=s) for s in (1, 2)]).episodes
    dz = fit_dead_zone(eps[:1])
    train, val = stack_episodes(eps[:1], dz), stack_episodes(eps[1:], dz)
    reg = RigidBodyRegressor(xml, train.joint_names)
    assert reg.continuous_joints == (2,)
    cfg = TrainConfig(hidden_sizes=(16, 16), max_steps=60, eval_interval=20, batch_size=256, progress=False,
                      num_threads=1)
    return fit_method("masked", train, val, dz, cfg, regressor=reg).model, train


def _shifted(q: np.ndarray, joint: int, turns: int) -> np.ndarray:
    out = q.copy()
    out[:, joint] += 2 * np.pi * turns
    return out


def test_a_network_is_periodic_in_a_continuous_joint(continuous_wrist_model, tmp_path):
    from deadzone_id_ros.models import load_artifact, save_artifact
    from deadzone_id_ros.models.runtime import OnnxModel

    model, train = continuous_wrist_model
    assert model.mlp is not None and model.mlp.circular == (2,) and model.mlp.n_inputs == 10
    q, dq, ddq = train.q[::97], train.dq[::97], train.ddq[::97]
    base = model.predict(q, dq, ddq)
    for turns in (1, 2):
        assert np.allclose(model.predict(_shifted(q, 2, turns), dq, ddq), base, rtol=0, atol=1e-9)
    # the revolute joint1 is not on the circle: the same shift there changes the torque (the check can fail)
    assert np.abs(model.predict(_shifted(q, 0, 1), dq, ddq) - base).max() > 1e-3
    save_artifact(model, tmp_path / "m")
    loaded = load_artifact(tmp_path / "m")
    assert loaded.mlp is not None and loaded.mlp.circular == (2,)
    assert np.allclose(loaded.predict(_shifted(q, 2, 1), dq, ddq), base, rtol=0, atol=1e-9)
    onnx = OnnxModel(tmp_path / "m" / "model.onnx")
    got = onnx.predict(q.astype(np.float32), dq.astype(np.float32), ddq.astype(np.float32))
    tol = 1e-4 * max(1.0, float(np.abs(base).max()))
    assert np.abs(got - base).max() <= tol
    for turns in (1, 2):
        shifted = onnx.predict(_shifted(q, 2, turns).astype(np.float32), dq.astype(np.float32),
                               ddq.astype(np.float32))
        assert np.abs(shifted - got).max() <= tol
