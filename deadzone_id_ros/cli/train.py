"""``deadzone-id train``: fit one method on bags and write a model artifact.

    deadzone-id train --bag BAG [BAG ...] --method masked --out DIR [--config training.yaml] [--urdf URDF]

The bags are split by time blocks into train/validation/test; the dead-zone thresholds are fitted on the training
split; the test metrics go into the artifact's model.json (:func:`deadzone_id_ros.training.pipeline.train_one`,
the same steps as ``compare``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ._args import add_config_arguments, add_data_arguments

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``train`` subcommand."""
    from ..models.predictor import METHODS

    p = subparsers.add_parser("train", help="train one method on bags and write a model artifact",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_arguments(p)
    p.add_argument("--method", required=True, choices=list(METHODS), help="loss / model to fit")
    p.add_argument("--out", required=True,
                   help="artifact directory to write (new, empty, or an earlier `train` output, which is replaced)")
    p.add_argument("--force", action="store_true", help="replace --out even if it is not an earlier `train` output")
    p.add_argument("--no-onnx", action="store_true", help="do not export model.onnx")
    add_config_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Train and save; prints the test metrics. Returns 0."""
    from ..data.effort_units import unit_label
    from ..outputs import check_output_dir, output_dir
    from ..training.blocks import MISSING
    from ..training.pipeline import train_one
    from ._args import train_config_from_args, training_inputs

    cfg = train_config_from_args(args)
    check_output_dir(args.out, "train", force=args.force)  # refuse before loading anything
    inputs = training_inputs(args)
    with output_dir(args.out, "train", force=args.force) as out:
        result, _ = train_one(inputs, args.method, cfg, out, onnx=not args.no_onnx,
                              log=lambda m: print(m.replace(str(out), str(args.out)), file=sys.stderr))
    metrics = result.metrics
    head = f"test RMSE [{unit_label(inputs.effort_units)}]"
    print(f"{'joint':>16s} {head:>16s} {'nRMSE':>8s} {'moving pairs':>13s}")
    for j, n in enumerate(inputs.joint_names):
        if n in metrics.missing:
            print(f"{n:>16s} {MISSING:>16s} {MISSING:>8s} {0:13d}  {metrics.missing[n]}")
            continue
        print(f"{n:>16s} {metrics.test.rmse_per_joint[j]:16.4f} {metrics.test.nrmse_per_joint[j]:8.3f} "
              f"{metrics.test.n_moving_per_joint[j]:13d}")
    print(f"usable data {result.fit.usable_fraction:.1%}; artifact written to {args.out}")
    onnx = json.loads((Path(args.out) / "model.json").read_text()).get("onnx") or {}
    if not args.no_onnx and onnx.get("exportable") is False and result.fit.model.mlp is not None:
        print(f"no ONNX file: {onnx.get('reason')}", file=sys.stderr)
    return 0
