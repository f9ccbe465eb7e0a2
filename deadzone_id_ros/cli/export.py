"""``deadzone-id export``: write a model artifact in a format other programs run.

    deadzone-id export --model DIR --onnx [--out FILE]
    deadzone-id export --model DIR --urdf --out FILE

The artifact is verified first (version and sha256). ``--onnx``: the network (model.onnx; residual.onnx for hybrid,
whose rigid-body part must be added); without ``--out`` the file goes into the artifact and model.json records its
sha256. ``--urdf``: the identified rigid body of an rbd / rbd_consistent / hybrid artifact as a URDF with the
identified inertials and ``<dynamics damping friction>`` (:mod:`deadzone_id_ros.models.urdf_export`); the rotor
inertia is printed, as URDF has no element for it.
"""

from __future__ import annotations

import argparse

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``export`` subcommand."""
    p = subparsers.add_parser("export", help="export a model artifact to ONNX or its rigid body to a URDF",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="model artifact directory")
    fmt = p.add_mutually_exclusive_group(required=True)
    fmt.add_argument("--onnx", action="store_true", help="export the network to ONNX")
    fmt.add_argument("--urdf", action="store_true",
                     help="export the identified rigid body (inertials, damping, friction) as a URDF (needs --out)")
    p.add_argument("--out", default=None, help="file to write (ONNX default: inside the artifact); must not exist")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Export; checks the ONNX output against the numpy model with onnxruntime. Returns 0, 1 if they disagree."""
    from ..models.export import export_artifact_onnx
    from ..outputs import output_file

    if args.urdf:
        return _run_urdf(args)
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


def _run_urdf(args: argparse.Namespace) -> int:
    """``--urdf``: write the identified rigid body; 2 without --out or a rigid body, 1 if the check disagrees."""
    from ..models import load_artifact
    from ..models.urdf_export import export_rigid_body_urdf
    from ..outputs import output_file

    if args.out is None:
        print("export --urdf needs --out FILE (the URDF to write)")
        return 2
    model = load_artifact(args.model)
    if model.rbd is None:
        print(f"{args.model}: method {model.method!r} has no rigid-body part; export an rbd, rbd_consistent or hybrid "
              "artifact (or use --onnx)")
        return 2
    with output_file(args.out, force=args.force) as work:
        result = export_rigid_body_urdf(model.rbd, work, source=str(args.model))
    arm = ", ".join(f"{j}={v:.4g}" for j, v in result.armature.items())
    print(f"wrote {args.out}: identified inertials and <dynamics damping friction>; pinocchio on it + friction + "
          f"armature vs the model: max |diff| = {result.max_abs_diff:.2e} N*m. Not in the URDF: rotor inertia "
          f"[kg*m^2] {arm}; smooth Coulomb sign tanh(dq / eps), eps = {list(result.friction_eps.values())} rad/s")
    if result.clipped:
        lost = ", ".join(f"{j} (viscous {v:.4g}, Coulomb {c:.4g})" for j, (v, c) in result.clipped.items())
        print(f"negative identified friction written as 0 (URDF <dynamics> holds magnitudes; readers refuse a negative "
              f"one): {lost}. The URDF's torque lacks that part; docs/identification.md says when friction comes out "
              "negative")
    if model.mlp is not None and getattr(model, "history", None) is not None:
        print("the artifact also has a network residual over the joint-state history, which no exported format "
              "carries: the URDF alone is its rigid-body part")
    elif model.mlp is not None:
        print("the artifact also has a network residual: export it with --onnx and add it to the URDF's torque")
    if not result.ok:
        print(f"export check failed: the URDF differs from the model by {result.max_abs_diff:.3g} N*m")
        return 1
    return 0
