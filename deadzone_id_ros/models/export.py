"""ONNX export of a model artifact, checked against the numpy model with onnxruntime (``deadzone-id export``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .artifact import export_onnx, load_artifact, sha256_file

__all__ = ["OnnxExport", "export_artifact_onnx"]


@dataclass(frozen=True)
class OnnxExport:
    """Result of :func:`export_artifact_onnx`.

    Attributes:
        path: the ONNX file.  residual: True for hybrid (the file holds the MLP residual; add the rigid-body torque).
        max_abs_diff: largest |onnxruntime - numpy| over a seeded random batch [N·m].  ok: within 1e-4 relative.
    """

    path: Path
    residual: bool
    max_abs_diff: float
    ok: bool


def export_artifact_onnx(model_dir: str | Path, out: str | Path | None = None) -> OnnxExport:
    """Export the artifact's MLP to ONNX and compare onnxruntime with the numpy model on 16 random samples.

    Without ``out`` the file goes into the artifact (model.onnx; residual.onnx for hybrid) and model.json records
    its sha256 and the ONNX interface.

    Raises:
        ArtifactError: the artifact fails verification, or the model has no MLP (rbd).
        FileNotFoundError: no artifact at ``model_dir``.
    """
    import onnxruntime as ort

    model = load_artifact(model_dir)
    root = Path(model_dir)
    if root.is_file():
        root = root.parent
    name = "residual.onnx" if model.rbd is not None else "model.onnx"
    target = Path(out) if out else root / name
    export_onnx(model, target)
    J = len(model.joint_names)
    x = np.random.default_rng(0).normal(size=(3, 16, J)).astype(np.float32)
    sess = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"q": x[0], "dq": x[1], "ddq": x[2]})[0]
    want = model.mlp.forward(np.concatenate([x[0], x[1], x[2]], axis=1).astype(np.float64))  # type: ignore[union-attr]
    err = float(np.abs(got - want).max())
    if not out:
        meta_path = root / "model.json"
        meta = json.loads(meta_path.read_text())
        meta["files"][name] = sha256_file(target)
        meta["onnx"] = {
            "exportable": True,
            "file": name,
            "contents": "MLP residual; add the rigid-body torque" if model.rbd is not None else "full model",
            "inputs": {"q": "(N, J) float32 rad", "dq": "(N, J) float32 rad/s", "ddq": "(N, J) float32 rad/s^2"},
            "outputs": {"tau": "(N, J) float32 N*m"},
        }
        meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return OnnxExport(target, model.rbd is not None, err, err <= 1e-4 * max(1.0, float(np.abs(want).max())))
