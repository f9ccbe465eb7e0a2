"""``deadzone-id train``: fit one method on bags and write a model artifact.

    deadzone-id train --bag BAG [BAG ...] --method masked --out DIR [--config training.yaml] [--urdf URDF]

The bags are split by time blocks into train/validation/test; the dead-zone thresholds are fitted on the training
split; the test metrics go into the artifact's model.json. This module also holds the argument and data-loading
helpers shared by ``evaluate`` and ``compare``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_config_arguments", "add_data_arguments", "load_bags", "register", "run", "train_config_from_args"]


def add_data_arguments(p: argparse.ArgumentParser, *, bag_required: bool = True) -> None:
    """--bag, --topic, --joints: which bags and which JointState topic/joints to read."""
    p.add_argument("--bag", nargs="+", required=bag_required, metavar="BAG",
                   help="ROS 1 .bag files or rosbag2 directories (sqlite3/MCAP); all must have the same joints")
    p.add_argument("--topic", default=None, help="JointState topic (default: the only usable one)")
    p.add_argument("--joints", nargs="+", default=None, metavar="JOINT", help="joints to use, in this order")


def add_config_arguments(p: argparse.ArgumentParser) -> None:
    """--config and the common overrides (--seed, --threads, --max-steps, --alpha, --block-seconds, --no-progress,
    --urdf)."""
    p.add_argument("--config", default=None, help="training parameters file (default: the bundled config/training.yaml)")
    p.add_argument("--seed", type=int, default=None, help="training seed (overrides the config)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (overrides num_threads)")
    p.add_argument("--max-steps", type=int, default=None, help="gradient steps at most (overrides max_steps)")
    p.add_argument("--alpha", type=float, default=None, help="dead-zone threshold in velocity stds (overrides alpha)")
    p.add_argument("--block-seconds", type=float, default=None,
                   help="split block length [s] (overrides block_seconds; 0 keeps whole episodes)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--urdf", default=None,
                   help="URDF file or robot model name (`deadzone-id robots`) for rbd/hybrid (default: the bundled arm, "
                   "only for simulator data whose joints match)")


def train_config_from_args(args: argparse.Namespace):
    """Load the TrainConfig of ``--config`` with the command-line overrides applied (validated)."""
    from ..errors import ConfigError
    from ..training.config import load_train_config

    cfg = load_train_config(args.config)
    try:
        return cfg.with_overrides(seed=args.seed, num_threads=args.threads, max_steps=args.max_steps,
                                  alpha=args.alpha, block_seconds=args.block_seconds, progress=False if args.no_progress else None)
    except ValueError as err:
        raise ConfigError(f"command line: {err}") from err


def load_bags(args: argparse.Namespace, joints: Any = None):
    """Load ``args.bag`` with the data engineer's loader; returns the Dataset.

    Raises:
        FileNotFoundError / DataError: from the loader, naming the bag, topic, message index and field.
    """
    from ..data.dataset import DatasetConfig, load_dataset
    from ..errors import ConfigError

    try:
        dcfg = DatasetConfig(topic=args.topic, joints=tuple(joints or args.joints) if (joints or args.joints) else None)
    except ValueError as err:
        raise ConfigError(f"command line: {err}") from err
    return load_dataset(args.bag, dcfg)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``train`` subcommand."""
    from ..models.predictor import METHODS

    p = subparsers.add_parser("train", help="train one method on bags and write a model artifact",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_arguments(p)
    p.add_argument("--method", required=True, choices=list(METHODS), help="loss / model to fit")
    p.add_argument("--out", required=True, help="artifact directory to write")
    p.add_argument("--no-onnx", action="store_true", help="do not export model.onnx")
    add_config_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Train and save; prints the test metrics. Returns 0."""
    from ..data.deadzone import fit_dead_zone
    from ..data.split import split_episodes
    from ..errors import DataError
    from ..models.artifact import save_artifact
    from ..models.rbd import RigidBodyRegressor
    from ..training.evaluate import evaluate_model, json_clean
    from ..training.fit import fit_method, stack_episodes
    from ..training.sources import detect_simulator, fingerprint, resolve_urdf

    cfg = train_config_from_args(args)
    sources = fingerprint(args.bag)
    ds = load_bags(args)
    try:
        split = split_episodes(ds.episodes, tuple(cfg.split_fractions), cfg.block_seconds or None, seed=cfg.split_seed)
    except ValueError as err:
        raise DataError(f"{', '.join(args.bag)}: cannot split {ds.num_samples} samples: {err}") from err
    dz = fit_dead_zone(split.train, alpha=cfg.alpha)
    train, val, test = (stack_episodes(s, dz) for s in (split.train, split.val, split.test))
    regressor = None
    if args.method in ("rbd", "hybrid"):
        xml, source = resolve_urdf(args.urdf, ds.joint_names, simulated=detect_simulator(args.bag)[0])
        if xml is None:
            raise DataError(f"method {args.method!r} needs a URDF with joints {list(ds.joint_names)}: {source}; "
                            "pass --urdf")
        regressor = RigidBodyRegressor(xml, ds.joint_names, cfg.friction_eps_for(dz.threshold), source=source)
    print(f"train {args.method}: {len(train)} train / {len(val)} val / {len(test)} test samples, joints "
          f"{list(ds.joint_names)}", file=sys.stderr)
    fit = fit_method(args.method, train, val, dz, cfg, regressor=regressor)
    metrics = evaluate_model(fit.model, test)
    metrics["usable_fraction"] = fit.usable_fraction
    training_data = {"sources": sources, "samples": {"train": len(train), "val": len(val), "test": len(test)},
                     "split": {"fractions": list(cfg.split_fractions), "block_seconds": cfg.block_seconds,
                               "split_seed": cfg.split_seed},
                     "loader_report": {k: ds.report.get(k) for k in ("samples", "episodes", "warnings")}}
    import dataclasses

    save_artifact(fit.model, args.out, metrics=json_clean(metrics), training_data=training_data,
                  extra={"train_config": json_clean(dataclasses.asdict(cfg)), "train_info": json_clean(fit.info)},
                  onnx=not args.no_onnx)
    print(f"{'joint':>16s} {'test RMSE [N*m]':>16s} {'nRMSE':>8s} {'moving pairs':>13s}")
    for j, n in enumerate(ds.joint_names):
        print(f"{n:>16s} {metrics['rmse_per_joint'][j]:16.4f} {metrics['nrmse_per_joint'][j]:8.3f} "
              f"{metrics['n_moving_per_joint'][j]:13d}")
    print(f"usable data {fit.usable_fraction:.1%}; artifact written to {args.out}")
    return 0
