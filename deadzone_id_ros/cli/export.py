"""``deadzone-id export``: (re)write the ONNX file of a model artifact for C++ controllers.

    deadzone-id export --model DIR --onnx [--out FILE]

The artifact is verified first (version and sha256). Without ``--out`` the file goes into the artifact
(model.onnx; residual.onnx for hybrid, whose rigid-body part must be added) and model.json records its sha256.
The rigid-body model (rbd) is not exportable to ONNX.
"""

from __future__ import annotations

import argparse

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``export`` subcommand."""
    p = subparsers.add_parser("export", help="export a model artifact to ONNX",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="model artifact directory")
    p.add_argument("--onnx", action="store_true", required=True, help="export ONNX (the only format)")
    p.add_argument("--out", default=None, help="ONNX file to write (default: inside the artifact); must not exist")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Export; checks the ONNX output against the numpy model with onnxruntime. Returns 0, 1 if they disagree."""
    from ..models.export import export_artifact_onnx
    from ..outputs import output_file

    if args.out is None:
        result = export_artifact_onnx(args.model)
    else:
        with output_file(args.out, force=args.force) as work:
            result = export_artifact_onnx(args.model, work)
    path = result.path if args.out is None else args.out
    print(f"wrote {path} ({'MLP residual' if result.residual else 'full model'}); onnxruntime vs numpy: "
          f"max |diff| = {result.max_abs_diff:.2e} N*m")
    if not result.ok:
        print(f"export check failed: onnxruntime differs from the numpy model by {result.max_abs_diff:.3g} N*m")
        return 1
    return 0
