"""Artifacts: train -> save -> load in a fresh process, ONNX export, and refusal of tampered/wrong-version files."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from deadzone_id_ros import __version__
from deadzone_id_ros.data.deadzone import fit_dead_zone
from deadzone_id_ros.data.types import Episode
from deadzone_id_ros.errors import ArtifactError
from deadzone_id_ros.models import (
    InverseDynamicsModel,
    LearnedModel,
    RigidBodyRegressor,
    export_onnx,
    fit_rigid_body,
    load_artifact,
    save_artifact,
)
from deadzone_id_ros.resources import default_urdf
from deadzone_id_ros.robot_configs import bundled_controller_config
from deadzone_id_ros.training.config import TrainConfig
from deadzone_id_ros.training.trainer import TrainArrays, train_mlp

JOINTS = ("joint1", "joint2", "joint3")
CFG = TrainConfig(hidden_sizes=(32, 32), max_steps=60, eval_interval=20, num_threads=1, progress=False, batch_size=256)


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    q, dq, ddq = rng.normal(size=(3, n, 3))
    tau = np.sin(q) * [1.0, 3.0, 0.5] + 0.2 * dq + 0.05 * ddq + 0.3 * np.sign(dq)
    return q, dq, ddq, tau


@pytest.fixture(scope="module")
def trained():
    q, dq, ddq, tau = _data()
    ep = Episode("syn", "synthetic", JOINTS, np.arange(len(q)) * 1e-3, q, dq, ddq, tau)
    dz = fit_dead_zone([ep])
    r = dz.mask(dq)
    x = np.concatenate([q, dq, ddq], axis=1)
    mlp, _ = train_mlp(TrainArrays(x, tau, r), TrainArrays(x[:300], tau[:300], r[:300]), "masked", CFG)
    return LearnedModel(JOINTS, "masked", mlp=mlp, dead_zone=dz)


@pytest.fixture(scope="module")
def rbd_model():
    q, dq, ddq, _ = _data(300, seed=1)
    reg = RigidBodyRegressor(default_urdf().read_text(), JOINTS)
    from deadzone_id_ros.sim import SimArm

    return fit_rigid_body(reg, q, dq, ddq, SimArm().inverse_dynamics(q, dq, ddq, friction=True))


def test_round_trip_in_a_fresh_process(trained, tmp_path):
    art = save_artifact(trained, tmp_path / "art", metrics={"rmse_mean": 0.1}, training_data={"sources": []}).path
    q, dq, ddq, _ = _data(64, seed=7)
    np.savez(tmp_path / "in.npz", q=q, dq=dq, ddq=ddq)
    code = (
        "import sys, numpy as np\n"
        "from deadzone_id_ros.models import load_artifact\n"
        "m = load_artifact(sys.argv[1])\n"
        "d = np.load(sys.argv[2])\n"
        "np.save(sys.argv[3], m.predict(d['q'], d['dq'], d['ddq']))\n"
        "assert 'torch' not in sys.modules, 'loading must not need torch'\n"
    )
    subprocess.run([sys.executable, "-c", code, str(art), str(tmp_path / "in.npz"), str(tmp_path / "out.npy")],
                   check=True, timeout=60)
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"), trained.predict(q, dq, ddq), rtol=0, atol=1e-6)
    meta = json.loads((art / "model.json").read_text())
    assert meta["joint_names"] == list(JOINTS) and meta["package_version"] == __version__
    assert meta["dead_zone"]["alpha"] == 0.1 and len(meta["dead_zone"]["sigma"]) == 3
    assert meta["units"]["tau"] == "N*m" and meta["method"] == "masked"
    assert len(meta["normalization"]["input_mean"]) == 9
    loaded = load_artifact(art)
    assert isinstance(loaded, InverseDynamicsModel)
    np.testing.assert_allclose(loaded.predict(q[0], dq[0], ddq[0]), trained.predict(q, dq, ddq)[0], atol=1e-6)


def test_onnx_matches_numpy(trained, tmp_path):
    import onnxruntime as ort

    art = save_artifact(trained, tmp_path / "art").path
    q, dq, ddq, _ = _data(100, seed=8)
    sess = ort.InferenceSession(str(art / "model.onnx"), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"q": q.astype(np.float32), "dq": dq.astype(np.float32), "ddq": ddq.astype(np.float32)})[0]
    np.testing.assert_allclose(got, load_artifact(art).predict(q, dq, ddq), rtol=1e-5, atol=1e-5)


def test_rbd_and_hybrid_round_trip(trained, rbd_model, tmp_path):
    q, dq, ddq, _ = _data(20, seed=9)
    rbd = LearnedModel(JOINTS, "rbd", rbd=rbd_model)
    saved = save_artifact(rbd, tmp_path / "rbd")
    art = saved.path
    assert not (art / "model.onnx").exists() and saved.onnx_file is None and "not exportable" in saved.onnx_reason
    assert json.loads((art / "model.json").read_text())["onnx"]["exportable"] is False
    np.testing.assert_allclose(load_artifact(art).predict(q, dq, ddq), rbd.predict(q, dq, ddq), atol=1e-12)
    with pytest.raises(ArtifactError, match="not exportable to ONNX"):
        export_onnx(rbd, tmp_path / "x.onnx")
    hybrid = LearnedModel(JOINTS, "hybrid", mlp=trained.mlp, rbd=rbd_model)
    saved = save_artifact(hybrid, tmp_path / "hybrid")
    art = saved.path
    # what save_artifact says it wrote is what model.json records and what is on disk
    assert saved.onnx_file == "residual.onnx" == json.loads((art / "model.json").read_text())["onnx"]["file"]
    assert (art / "residual.onnx").exists() and set(saved.files) == {"robot.urdf", "weights.npz", "residual.onnx"}
    np.testing.assert_allclose(load_artifact(art).predict(q, dq, ddq),
                               rbd_model.predict(q, dq, ddq) + trained.mlp.forward(np.c_[q, dq, ddq]), atol=1e-9)


def test_tampered_weights_are_refused(trained, tmp_path):
    art = save_artifact(trained, tmp_path / "art", onnx=False).path
    with np.load(art / "weights.npz") as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["mlp.layer0.weight"] = arrays["mlp.layer0.weight"] * 1.01
    np.savez(art / "weights.npz", **arrays)
    with pytest.raises(ArtifactError, match=r"weights.npz: sha256 .* does not match model.json"):
        load_artifact(art)


def test_tampered_normalization_in_json_is_refused(trained, tmp_path):
    art = save_artifact(trained, tmp_path / "art", onnx=False).path
    meta = json.loads((art / "model.json").read_text())
    meta["normalization"]["input_mean"][0] += 1.0
    (art / "model.json").write_text(json.dumps(meta))
    with pytest.raises(ArtifactError, match="normalization differs"):
        load_artifact(art)


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda m: m.update(package_version="9.9.0"), r"written by deadzone_id_ros 9\.9\.0, but this is"),
        (lambda m: m.update(format_version=2), "format_version 2 is not supported"),
        (lambda m: m.update(format="something.else"), "format 'something.else' is not"),
        (lambda m: m.update(method="magic"), r"unknown method\(s\) \['magic'\]"),
        (lambda m: m.pop("files"), "missing key 'files'"),
    ],
)
def test_wrong_version_or_metadata_is_refused(trained, tmp_path, edit, match):
    art = save_artifact(trained, tmp_path / "art", onnx=False).path
    meta = json.loads((art / "model.json").read_text())
    edit(meta)
    (art / "model.json").write_text(json.dumps(meta))
    with pytest.raises(ArtifactError, match=match):
        load_artifact(art)


def test_missing_or_malformed_artifact(tmp_path, trained):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_artifact(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ArtifactError, match="model.json is missing"):
        load_artifact(tmp_path / "empty")
    art = save_artifact(trained, tmp_path / "art", onnx=False).path
    (art / "model.json").write_text("{not json")
    with pytest.raises(ArtifactError, match="not valid JSON"):
        load_artifact(art)
    art2 = save_artifact(trained, tmp_path / "art2", onnx=False).path
    (art2 / "weights.npz").unlink()
    with pytest.raises(ArtifactError, match="weights.npz is missing"):
        load_artifact(art2)


def test_predict_shape_errors(trained):
    with pytest.raises(ValueError, match=r"ddq must have shape \(2, 3\) like q; got \(2, 2\)"):
        trained.predict(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"ddq must have shape \(3,\) like q; got \(2,\)"):
        trained.predict(np.zeros(3), np.zeros(3), np.zeros(2))
    with pytest.raises(ValueError, match=r"q must have shape \(N, 3\) or \(3,\); got \(4,\)"):
        trained.predict(np.zeros(4), np.zeros(4), np.zeros(4))
    with pytest.raises(ValueError, match="method 'rbd' needs rbd=yes"):
        LearnedModel(JOINTS, "rbd", mlp=trained.mlp)


def test_model_json_is_strict_json_with_numpy_metrics(trained, tmp_path):
    art = save_artifact(trained, tmp_path / "art", onnx=False,
                        metrics={"rmse_per_joint": np.array([0.1, np.nan, 0.2]), "n": np.int64(5)}).path
    text = (art / "model.json").read_text()
    assert "NaN" not in text
    assert json.loads(text)["metrics"] == {"rmse_per_joint": [0.1, None, 0.2], "n": 5}


def _controller_feedforward(model_path, q, dq):
    """Run controller ticks (mode ctc, no reference: hold the first q) from ``model_path``, the model at the measured
    velocity (so that every input of the graph varies; the reference's would be 0 here).

    Returns (model torque ff + fb, ddq_ref = fb / Jn) per tick, each (N, J)."""
    from deadzone_id_ros.control import FeedforwardController
    from deadzone_id_ros.models.runtime import load_model

    cfg = bundled_controller_config(joint_names=JOINTS, mode="ctc", model="learned", model_path=str(model_path),
                                    feedforward_velocity="measured")
    ctl = FeedforwardController(cfg, load_model(cfg))
    tau, ddq_ref = [], []
    for k in range(len(q)):
        ctl.step(0.001 * (k + 1), q[k], dq[k])
        tau.append(ctl.parts.ff + ctl.parts.fb)  # = model(q, dq, ddq_ref)
        ddq_ref.append(ctl.parts.fb / ctl.jn)  # ddq_d = 0 without a reference
    return np.array(tau), np.array(ddq_ref)


def test_exported_onnx_runs_in_the_controller_like_numpy(trained, rbd_model, tmp_path):
    """Issue 12 item 7: train -> `deadzone-id export --onnx` -> controller tick from the .onnx (standalone, no JSON)
    equals the artifact's numpy prediction to 1e-5; a hybrid's residual.onnx gets the rigid body from its artifact."""
    from deadzone_id_ros.models.export import export_artifact_onnx
    from deadzone_id_ros.models.runtime import RigidBodyPlusOnnx, load_model

    art = save_artifact(trained, tmp_path / "art", onnx=False).path
    standalone = tmp_path / "elsewhere" / "model.onnx"
    standalone.parent.mkdir()
    assert export_artifact_onnx(art, standalone).ok
    assert sorted(p.name for p in standalone.parent.iterdir()) == ["model.onnx"]  # no sidecar file
    rng = np.random.default_rng(11)  # states near a hold position, as in a control loop (errors of ~10 mrad)
    q, dq = rng.normal(size=3) + 0.01 * rng.normal(size=(40, 3)), 0.2 * rng.normal(size=(40, 3))
    tau, ddq_ref = _controller_feedforward(standalone, q, dq)
    want = load_artifact(art).predict(q, dq, ddq_ref)
    assert np.abs(ddq_ref).max() > 1.0 and np.abs(want).max() > 0.5  # the check is not about zeros
    np.testing.assert_allclose(tau, want, rtol=0, atol=1e-5)
    np.testing.assert_allclose(_controller_feedforward(art, q, dq)[0], want, rtol=0, atol=1e-9)
    assert export_artifact_onnx(art).ok  # into the artifact: model.json records it
    assert json.loads((art / "model.json").read_text())["onnx"]["format"] == "deadzone_id_ros.inverse_dynamics_onnx"
    np.testing.assert_allclose(_controller_feedforward(art / "model.onnx", q, dq)[0], want, rtol=0, atol=1e-5)

    hybrid_art = save_artifact(LearnedModel(JOINTS, "hybrid", mlp=trained.mlp, rbd=rbd_model), tmp_path / "hybrid").path

    cfg = bundled_controller_config(joint_names=JOINTS, mode="ctc", model="learned",
                           model_path=str(hybrid_art / "residual.onnx"))
    assert isinstance(load_model(cfg), RigidBodyPlusOnnx)
    tau, ddq_ref = _controller_feedforward(hybrid_art / "residual.onnx", q, dq)
    np.testing.assert_allclose(tau, load_artifact(hybrid_art).predict(q, dq, ddq_ref), rtol=0, atol=1e-5)
    alone = tmp_path / "alone.onnx"
    alone.write_bytes((hybrid_art / "residual.onnx").read_bytes())
    with pytest.raises(ArtifactError, match="alone.onnx: this network is a hybrid model's MLP residual"):
        load_model(bundled_controller_config(joint_names=JOINTS, mode="ctc", model="learned", model_path=str(alone)))
