"""ONNX export of a model artifact, checked against the numpy model with onnxruntime (``deadzone-id export``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .artifact import export_onnx, load_artifact, sha256_file
from .onnx_format import onnx_manifest

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

    The file is in the one ONNX format of the project (:mod:`deadzone_id_ros.models.onnx_format`: inputs q, dq, ddq
    (N, J) float32, normalization inside, joint names and units in the metadata), loadable by the controller
    standalone (``model_path:=.../model.onnx``). Without ``out`` the file goes into the artifact (model.onnx;
    residual.onnx for hybrid, whose rigid-body part the controller adds from the artifact) and model.json records
    its sha256 and the ONNX interface.

    Raises:
        ArtifactError: the artifact fails verification, the model has no MLP (rbd), or it does not predict N·m (it
            was trained on effort in another unit; the ONNX file is for the controller, which commands N·m) --
            refused before anything is written.
        FileNotFoundError: no artifact at ``model_dir``.
    """
    from .artifact import check_newton_metres
    from .runtime import OnnxModel

    model = load_artifact(model_dir)
    check_newton_metres(model, str(model_dir))
    root = Path(model_dir)
    if root.is_file():
        root = root.parent
    name = "residual.onnx" if model.rbd is not None else "model.onnx"
    target = Path(out) if out else root / name
    export_onnx(model, target)
    J = len(model.joint_names)
    x = np.random.default_rng(0).normal(size=(3, 16, J)).astype(np.float32)
    got = OnnxModel(target).predict(x[0], x[1], x[2])  # the controller's loader: checks the format's metadata too
    want = model.mlp.forward(np.concatenate([x[0], x[1], x[2]], axis=1).astype(np.float64))  # type: ignore[union-attr]
    err = float(np.abs(got - want).max())
    if not out:
        meta_path = root / "model.json"
        meta = json.loads(meta_path.read_text())
        meta["files"][name] = sha256_file(target)
        meta["onnx"] = onnx_manifest(name, model.rbd is not None)
        meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    return OnnxExport(target, model.rbd is not None, err, err <= 1e-4 * max(1.0, float(np.abs(want).max())))
