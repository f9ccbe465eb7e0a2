"""Runtime models (models/runtime.py): nominal rigid body vs MuJoCo, ONNX + JSON normalization, load_model, errors."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from deadzone_id_ros.control import ControllerConfig
from deadzone_id_ros.errors import ArtifactError, ConfigError, RobotDescriptionError
from deadzone_id_ros.models.base import InverseDynamicsModel, check_joint_arrays
from deadzone_id_ros.models.runtime import NominalRigidBodyModel, OnnxModel, ZeroModel, load_model
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.sim import SimArm, SimArmConfig

NAMES = ("joint1", "joint2", "joint3")


def test_rigid_body_model_matches_the_simulator_without_armature():
    arm = SimArm(SimArmConfig(armature=(0.0, 0.0, 0.0)))
    model = NominalRigidBodyModel(default_urdf(), NAMES)
    rng = np.random.default_rng(0)
    q, dq, ddq = rng.normal(size=(3, 20, 3))
    np.testing.assert_allclose(model.predict(q, dq, ddq), arm.inverse_dynamics(q, dq, ddq), atol=1e-9)
    assert isinstance(model, InverseDynamicsModel)


def test_rigid_body_friction_is_smooth_and_bounded():
    model = NominalRigidBodyModel(default_urdf(), NAMES, friction=True, friction_velocity=0.01)
    base = NominalRigidBodyModel(default_urdf(), NAMES)
    q, z = np.array([0.0, 0.3, 0.6]), np.zeros(3)
    fast = np.array([1.0, -1.0, 1.0])
    np.testing.assert_allclose(
        model.predict(q, fast, z) - base.predict(q, fast, z),
        np.array([0.12, 0.40, 0.15]) * np.sign(fast) + np.array([0.02, 0.05, 0.03]) * fast,
        atol=1e-6,
    )
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
    model = load_model(ControllerConfig(model="learned", model_path=str(path)))
    assert isinstance(model, OnnxModel) and model.joint_names == NAMES
    rng = np.random.default_rng(1)
    q, dq, ddq = rng.normal(size=(3, 5, 3))
    x = (np.concatenate([q, dq, ddq], axis=1) - 0.1) / 2.0
    with torch.no_grad():
        expect = net(torch.as_tensor(x, dtype=torch.float32)).numpy() * [3.0, 1.0, 2.0] + [0.5, -0.5, 0.0]
    np.testing.assert_allclose(model.predict(q, dq, ddq), expect, atol=1e-5)
    np.testing.assert_allclose(model.predict(q[2], dq[2], ddq[2]), expect[2], atol=1e-5)
    with pytest.raises(ValueError, match=r"ddq must have shape \(5, 3\) like q; got \(5, 2\)"):
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


def _settings(model: str, model_path: str = "") -> SimpleNamespace:
    """Model fields of a ControllerConfig without its validation, to reach load_model's own errors."""
    return SimpleNamespace(model=model, joint_names=NAMES, urdf_path="", model_path=model_path, model_friction=False,
                           friction_velocity=0.01)


def test_load_model_kinds_and_errors(tmp_path):
    none = load_model(ControllerConfig(mode="pd", model="none"))
    assert isinstance(none, ZeroModel) and none.joint_names == NAMES
    np.testing.assert_array_equal(none.predict(np.ones(3), np.ones(3), np.ones(3)), np.zeros(3))
    rbd = load_model(ControllerConfig(model="rbd", model_friction=True, friction_velocity=0.02))
    assert isinstance(rbd, NominalRigidBodyModel) and rbd.friction and rbd.friction_velocity == 0.02
    with pytest.raises(ConfigError, match="model = 'mlp' must be one of"):
        load_model(_settings("mlp"))
    with pytest.raises(ConfigError, match="needs model_path"):
        load_model(_settings("learned"))
    with pytest.raises(FileNotFoundError, match="model_path .*nothing does not exist"):
        load_model(ControllerConfig(model="learned", model_path=str(tmp_path / "nothing")))
    (tmp_path / "art").mkdir()
    with pytest.raises(ArtifactError, match="model.json is missing"):
        load_model(ControllerConfig(model="learned", model_path=str(tmp_path / "art")))


def test_load_model_reads_the_urdf_path_of_the_settings(tmp_path):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(default_urdf().read_text().replace('name="joint3"', 'name="elbow"'))
    model = load_model(ControllerConfig(joint_names=("joint1", "joint2", "elbow"), urdf_path=str(urdf)))
    assert model.joint_names == ("joint1", "joint2", "elbow")
    with pytest.raises(RobotDescriptionError, match="joint3"):
        load_model(ControllerConfig(urdf_path=str(urdf)))


@pytest.mark.parametrize(
    ("kwargs", "batch", "match"),
    [({"q": np.zeros(2)}, True, r"q must have shape \(N, 3\) or \(3,\); got \(2,\)"),
     ({"q": np.zeros((4, 3, 1))}, True, r"q must have shape \(N, 3\) or \(3,\); got \(4, 3, 1\)"),
     ({"q": np.zeros((4, 3))}, False, r"q must have shape \(3,\); got \(4, 3\)"),
     ({"q": np.zeros(3), "dq": np.zeros(3), "ddq": np.zeros((1, 3))}, True,
      r"ddq must have shape \(3,\) like q; got \(1, 3\)")],
)
def test_check_joint_arrays_names_the_argument_and_both_shapes(kwargs, batch, match):
    with pytest.raises(ValueError, match=match):
        check_joint_arrays(3, batch=batch, **kwargs)


def test_check_joint_arrays_returns_float64_in_order():
    q, dq = check_joint_arrays(2, q=[1, 2], dq=np.array([3, 4], dtype=np.float32))
    assert q.dtype == dq.dtype == np.float64 and q.tolist() == [1.0, 2.0] and dq.tolist() == [3.0, 4.0]
