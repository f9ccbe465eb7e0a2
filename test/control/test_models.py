"""The controller's model loaders: rigid body vs MuJoCo, ONNX + JSON normalization, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from deadzone_id_ros.control.models import OnnxModel, RigidBodyModel, ZeroModel, load_model
from deadzone_id_ros.errors import ArtifactError, ConfigError
from deadzone_id_ros.models.base import InverseDynamicsModel
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.sim import SimArm, SimArmConfig

NAMES = ("joint1", "joint2", "joint3")


def test_rigid_body_model_matches_the_simulator_without_armature():
    arm = SimArm(SimArmConfig(armature=(0.0, 0.0, 0.0)))
    model = RigidBodyModel(default_urdf(), NAMES)
    rng = np.random.default_rng(0)
    q, dq, ddq = rng.normal(size=(3, 20, 3))
    np.testing.assert_allclose(model.predict(q, dq, ddq), arm.inverse_dynamics(q, dq, ddq), atol=1e-9)
    assert isinstance(model, InverseDynamicsModel)


def test_rigid_body_friction_is_smooth_and_bounded():
    model = RigidBodyModel(default_urdf(), NAMES, friction=True, friction_velocity=0.01)
    base = RigidBodyModel(default_urdf(), NAMES)
    q, z = np.array([0.0, 0.3, 0.6]), np.zeros(3)
    fast = np.array([1.0, -1.0, 1.0])
    np.testing.assert_allclose(model.predict(q, fast, z) - base.predict(q, fast, z),
                               np.array([0.12, 0.40, 0.15]) * np.sign(fast) + np.array([0.02, 0.05, 0.03]) * fast, atol=1e-6)
    np.testing.assert_allclose(model.predict(q, z, z), base.predict(q, z, z), atol=1e-12)  # tanh(0) = 0, no chatter


def _export(tmp_path, joint_names=NAMES, **overrides):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(9, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    path = tmp_path / "net.onnx"
    torch.onnx.export(net, (torch.zeros(1, 9),), str(path), input_names=["x"], output_names=["tau"],
                      dynamic_axes={"x": {0: "n"}, "tau": {0: "n"}}, dynamo=False)
    meta = {"joint_names": list(joint_names), "input_mean": [0.1] * 9, "input_std": [2.0] * 9,
            "output_mean": [0.5, -0.5, 0.0], "output_std": [3.0, 1.0, 2.0], **overrides}
    path.with_suffix(".json").write_text(json.dumps(meta))
    return net, path


def test_onnx_model_applies_the_normalization(tmp_path):
    torch = pytest.importorskip("torch")
    net, path = _export(tmp_path)
    model = load_model("learned", NAMES, model_path=path)
    assert isinstance(model, OnnxModel) and model.joint_names == NAMES
    rng = np.random.default_rng(1)
    q, dq, ddq = rng.normal(size=(3, 5, 3))
    x = (np.concatenate([q, dq, ddq], axis=1) - 0.1) / 2.0
    with torch.no_grad():
        expect = net(torch.as_tensor(x, dtype=torch.float32)).numpy() * [3.0, 1.0, 2.0] + [0.5, -0.5, 0.0]
    np.testing.assert_allclose(model.predict(q, dq, ddq), expect, atol=1e-5)
    np.testing.assert_allclose(model.predict(q[2], dq[2], ddq[2]), expect[2], atol=1e-5)
    with pytest.raises(ValueError, match="must share a shape"):
        model.predict(q, dq, ddq[:, :2])


def test_onnx_model_errors_name_the_file_and_key(tmp_path):
    _, path = _export(tmp_path, input_std=[1.0] * 6)
    with pytest.raises(ArtifactError, match=r"net.json: input_std must have 9 values"):
        OnnxModel(path)
    meta = json.loads(path.with_suffix(".json").read_text())
    del meta["output_mean"]
    path.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(ArtifactError, match="net.json: missing key 'output_mean'"):
        OnnxModel(path)
    bad = tmp_path / "broken.onnx"
    bad.write_bytes(b"not a network")
    meta.update(output_mean=[0.0, 0.0, 0.0], input_std=[1.0] * 9)
    bad.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(ArtifactError, match="broken.onnx: onnxruntime cannot load this network"):
        OnnxModel(bad)
    with pytest.raises(FileNotFoundError, match="model file .*missing.onnx does not exist"):
        OnnxModel(tmp_path / "missing.onnx")


def test_load_model_kinds_and_errors(tmp_path):
    assert isinstance(load_model("none", NAMES), ZeroModel)
    np.testing.assert_array_equal(load_model("none", NAMES).predict(np.ones(3), np.ones(3), np.ones(3)), np.zeros(3))
    assert isinstance(load_model("rbd", NAMES), RigidBodyModel)
    with pytest.raises(ConfigError, match="model = 'mlp' must be one of"):
        load_model("mlp", NAMES)
    with pytest.raises(ConfigError, match="needs model_path"):
        load_model("learned", NAMES)
    with pytest.raises(FileNotFoundError, match="model_path .*nothing does not exist"):
        load_model("learned", NAMES, model_path=tmp_path / "nothing")
    (tmp_path / "art").mkdir()
    with pytest.raises(ArtifactError, match="model.json is missing"):
        load_model("learned", NAMES, model_path=tmp_path / "art")
