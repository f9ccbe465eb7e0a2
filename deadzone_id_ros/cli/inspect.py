"""``deadzone-id inspect BAG [BAG ...] [--json]``: topics, joints, usable fields, dead-zone fractions, trainability.

A LeRobot dataset (its directory, or a parquet file in it) is reported for what it holds: features, fps, episodes,
joints, position ranges, the effort feature and its unit, and whether it can be trained on (not without effort).

Exit status: 0 when every bag can be trained on as given, 1 when one cannot (the report says why; a bag with
several trainable JointState topics needs ``--topic``), 2 on a user error.
"""

from __future__ import annotations

import argparse
import json

from ._args import (
    add_dead_zone_arguments,
    add_loader_arguments,
    check_bags,
    dataset_config_from_args,
    dead_zone_from_args,
)

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``inspect`` subcommand."""
    p = subparsers.add_parser(
        "inspect",
        help="show what a bag holds and whether it can be trained on",
        description="Topics, types, rates, joints, which of position/velocity/effort are usable, dead-zone "
        "fraction per joint, fraction of samples with all joints moving, and whether the bag can be trained on "
        "(if not, why). Reads ROS 1 bags and ROS 2 bags (sqlite3, MCAP), recovering damaged ROS 2 bags, and says "
        "what a LeRobot dataset holds.",
    )
    p.add_argument("bags", nargs="+", metavar="BAG",
                   help="ROS 1 .bag file or rosbag2 directory, or a LeRobot dataset (directory or parquet file)")
    p.add_argument("--json", action="store_true", help="print the same information as JSON")
    p.add_argument("--config", default=None,
                   help="training parameters file whose dead_zone block is used (default: the bundled "
                   "config/training.yaml, alpha 0.1), so inspect shows what training will use")
    add_loader_arguments(p)
    add_dead_zone_arguments(p)
    p.add_argument("--max-gap", type=float, default=0.1, help="split at stamp gaps longer than this [s] (default 0.1)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Inspect each bag (or LeRobot dataset); returns 0 if all are trainable, else 1."""
    from ..data.lerobot import find_lerobot_root

    lerobot = {b for b in args.bags if find_lerobot_root(b) is not None}
    check_bags([b for b in args.bags if b not in lerobot])  # a missing bag: said at once, before the readers load
    from ..data.inspect import format_report, inspect_bag
    from ..data.lerobot import format_lerobot_report, lerobot_report, open_lerobot
    from ..training.config import load_train_config

    config = dataset_config_from_args(args)
    dead_zone = dead_zone_from_args(args, load_train_config(args.config).dead_zone)
    infos = [lerobot_report(open_lerobot(b)) if b in lerobot else inspect_bag(b, config, dead_zone)
             for b in args.bags]
    if args.json:
        print(json.dumps(infos[0] if len(infos) == 1 else infos, indent=2))
    else:
        print("\n\n".join(format_lerobot_report(i) if b in lerobot else format_report(i)
                            for b, i in zip(args.bags, infos)))
    return 0 if all(i["trainable"] for i in infos) else 1
