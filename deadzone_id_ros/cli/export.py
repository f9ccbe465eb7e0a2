"""``deadzone-id export``: (re)write the ONNX file of a model artifact for C++ controllers.

    deadzone-id export --model DIR --onnx [--out FILE]

The artifact is verified first (version and sha256). Without ``--out`` the file goes into the artifact
(model.onnx; residual.onnx for hybrid, whose rigid-body part must be added) and model.json records its sha256.
The rigid-body model (rbd) is not exportable to ONNX.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``export`` subcommand."""
    p = subparsers.add_parser("export", help="export a model artifact to ONNX",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="model artifact directory")
    p.add_argument("--onnx", action="store_true", required=True, help="export ONNX (the only format)")
    p.add_argument("--out", default=None, help="ONNX file to write (default: inside the artifact)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Export; checks the ONNX output against the numpy model with onnxruntime. Returns 0, 1 if they disagree."""
    import numpy as np

    from ..models.artifact import export_onnx, load_artifact, sha256_file

    model = load_artifact(args.model)
    root = Path(args.model)
    if root.is_file():
        root = root.parent
    name = "residual.onnx" if model.rbd is not None else "model.onnx"
    target = Path(args.out) if args.out else root / name
    export_onnx(model, target)
    import onnxruntime as ort

    J = len(model.joint_names)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 16, J)).astype(np.float32)
    sess = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"q": x[0], "dq": x[1], "ddq": x[2]})[0]
    want = model.mlp.forward(np.concatenate([x[0], x[1], x[2]], axis=1).astype(np.float64))  # type: ignore[union-attr]
    err = float(np.abs(got - want).max())
    if not args.out:
        meta_path = root / "model.json"
        meta = json.loads(meta_path.read_text())
        meta["files"][name] = sha256_file(target)
        meta["onnx"] = {"exportable": True, "file": name,
                        "contents": "MLP residual; add the rigid-body torque" if model.rbd is not None else "full model",
                        "inputs": {"q": "(N, J) float32 rad", "dq": "(N, J) float32 rad/s",
                                   "ddq": "(N, J) float32 rad/s^2"}, "outputs": {"tau": "(N, J) float32 N*m"}}
        meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    print(f"wrote {target} ({'MLP residual' if model.rbd is not None else 'full model'}); onnxruntime vs numpy: "
          f"max |diff| = {err:.2e} N*m")
    if not err <= 1e-4 * max(1.0, float(np.abs(want).max())):
        print(f"export check failed: onnxruntime differs from the numpy model by {err:.3g} N*m")
        return 1
    return 0
