"""``deadzone-id evaluate``: torque error of a saved model on bags.

    deadzone-id evaluate --model DIR --bag BAG [BAG ...] [--json OUT] [--joint-map A:B ...] [--lock J=V ...]

Joints are matched BY NAME to the artifact's joint order. A rigid-body model keeps the joint map and lock positions
it was identified with; ``--joint-map`` / ``--lock`` here are checked against them (a model identified with the
wrist locked elsewhere is refused rather than evaluated on the wrong kinematics). The error is measured on
(sample, joint) pairs where the joint moves, with the dead-zone thresholds stored in the artifact (the training
split's); what the model predicts while a joint is stuck is reported separately. A bag the model was trained on
(same sha256 as a training bag in model.json) is named in a warning, on the terminal and in the JSON: its figures are
optimistic.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..models import LearnedModel

__all__ = ["check_robot_options", "register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``evaluate`` subcommand."""
    from ._args import add_data_arguments, add_robot_arguments

    p = subparsers.add_parser("evaluate", help="torque error of a model artifact on bags",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="model artifact directory")
    add_data_arguments(p)
    p.add_argument("--json", default=None, help="also write the metrics to this JSON file")
    add_robot_arguments(p)
    p.set_defaults(func=run)


def check_robot_options(model: LearnedModel, joint_map: dict[str, str], locked: dict[str, float], where: str) -> None:
    """Refuse ``--joint-map`` / ``--lock`` that differ from those ``model``'s rigid-body part was identified with.

    Args:
        model: a loaded :class:`~deadzone_id_ros.models.LearnedModel`.
        joint_map: bag name -> URDF name as given; locked: URDF joint -> position [rad or m] as given.
        where: the artifact's name, for messages.

    Raises:
        DataError: options given for a model without a rigid-body part, a map that differs from the artifact's, or
            a lock position that differs from (or names a joint not locked in) the artifact's.
    """
    from ..errors import DataError

    if not joint_map and not locked:
        return
    rbd = getattr(model, "rbd", None)
    if rbd is None:
        raise DataError(f"{where}: --joint-map / --lock given, but the model ({model.method}) has no rigid-body part")
    reg = rbd.regressor
    if joint_map and joint_map != dict(reg.joint_map):
        raise DataError(f"{where}: --joint-map {joint_map} differs from the map the model was identified with "
                        f"{dict(reg.joint_map)} (data joints {list(reg.joint_names)}, URDF joints "
                        f"{list(reg.robot.urdf_joint_names)})")
    for name, value in locked.items():
        had = reg.locked.get(name)
        if had is None or not abs(had - value) <= 1e-9:
            raise DataError(f"{where}: --lock {name}={value:g} differs from the model's locked joints "
                            f"{ {n: v for n, v in reg.locked.items()} }")


def run(args: argparse.Namespace) -> int:
    """Evaluate; prints a per-joint table. Returns 0."""
    from ..data.deadzone import fit_dead_zone
    from ..data.effort_units import unit_label, with_joint_kinds
    from ..errors import DataError
    from ..models.artifact import load_artifact, model_effort_units, model_joint_kinds
    from ..training.blocks import fmt_values
    from ..training.evaluate import evaluate_model, json_clean
    from ..training.fit import stack_episodes
    from ..training.sources import fingerprint, training_overlap
    from ._args import effort_options, load_bags, robot_options

    model = load_artifact(args.model)
    check_robot_options(model, *robot_options(args), where=str(args.model))
    if args.joints and tuple(args.joints) != tuple(model.joint_names):
        raise DataError(f"--joints {args.joints} differ from the model's joints {list(model.joint_names)}")
    seen = training_overlap(model.metadata.get("training_data"), fingerprint(args.bag))
    warnings = [f"WARNING: {p} was used to train this model (same sha256 as a training bag in model.json): these "
                "figures include the training data and are optimistic; evaluate on a recording the model has not "
                "seen, or read the held-out test metrics in model.json" for p in seen]
    for w in warnings:
        print(w, file=sys.stderr)
    trained = model.metadata.get("training_data") or {}
    given, _ = effort_options(args)
    if given and given != (trained.get("torque_constants") or {}):
        raise DataError(f"--torque-constant {given} differs from the constants the model was trained with "
                        f"{trained.get('torque_constants') or {}} (model.json); leave it out to use the model's")
    ds = load_bags(args, joints=model.joint_names, torque_constants=trained.get("torque_constants"))
    model_units = model_effort_units(model)
    kinds = model_joint_kinds(model)
    if kinds:  # the model's URDF said which joints are prismatic: their effort is force in N
        peaks = {j: float(np.nanmax(np.abs(np.concatenate([e.tau[:, i] for e in ds.episodes])), initial=0.0))
                 for i, j in enumerate(ds.joint_names)}
        ds = dataclasses.replace(ds, effort_units=with_joint_kinds(ds.effort_units, kinds, peaks,
                                                                   ds.effort_unit_reason)[0])
    if model_units != ds.effort_units:
        raise DataError(f"{', '.join(args.bag)}: effort units {ds.effort_units} differ from the model's "
                        f"{model_units} (model.json); give the --torque-constant / --effort-unit it was trained with")
    unit = unit_label(model_units)
    if tuple(ds.joint_names) != tuple(model.joint_names):
        raise DataError(f"{', '.join(args.bag)}: joints {list(ds.joint_names)} do not match the model's "
                        f"{list(model.joint_names)}")
    dz = model.dead_zone or fit_dead_zone(ds.episodes)
    data = stack_episodes(ds.episodes, dz)
    metrics = evaluate_model(model, data)
    print(f"model {args.model} ({model.method}) on {len(data)} samples of {len(args.bag)} bag(s)")
    print(f"{'joint':>16s} {f'RMSE [{unit}]':>11s} {'nRMSE':>7s} {'moving':>8s} {'stuck RMSE':>11s} {'stuck':>7s}")
    missing: dict[str, str] = {}
    for j, n in enumerate(model.joint_names):
        if metrics.n_moving_per_joint[j] == 0:
            peak = float(np.abs(data.dq[:, j]).max()) if len(data) else 0.0
            missing[n] = (f"no sample where {n} moves: |dq| peaks at {peak:.3g} rad/s against the "
                          f"model's dead-zone threshold {float(dz.threshold[j]):.3g} rad/s")
        cells = [fmt_values([v]) for v in (metrics.rmse_per_joint[j], metrics.nrmse_per_joint[j],
                                           metrics.dead_zone.rmse_vs_measured_per_joint[j])]
        print(f"{n:>16s} {cells[0]:>11s} {cells[1]:>7s} {metrics.n_moving_per_joint[j]:8d} {cells[2]:>11s} "
              f"{metrics.dead_zone.n_stuck_per_joint[j]:7d}" + (f"  {missing[n]}" if n in missing else ""))
    print(f"mean RMSE {metrics.rmse_mean:.4f} {unit}, mean nRMSE {metrics.nrmse_mean:.3f}")
    for w in warnings:
        print(w)
    if args.json:
        doc = {"model": str(args.model), "method": model.method, "bags": list(args.bag),
               "joint_names": list(model.joint_names), "evaluated_on_training_data": bool(seen),
               "training_bags_evaluated": seen, "warnings": warnings, **metrics.to_dict(), "missing": missing}
        with open(args.json, "w") as f:
            json.dump(json_clean(doc), f, indent=2)
    return 0
