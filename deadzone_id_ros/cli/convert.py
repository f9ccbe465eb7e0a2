"""``deadzone-id convert CSV --out DIR --time COL --joint NAME:pos=COL[,vel=COL][,effort=COL][,command=COL] ...``.

Turns a CSV log into a rosbag2 of sensor_msgs/JointState (plus /effort_controller/commands when command columns are
given), so that non-ROS logs go through the same data path. Example (DFKI double pendulum)::

    deadzone-id convert design_A0_20220815_trajectory_00.csv --out dfki_A0 --time time \\
        --joint shoulder:pos=pos_meas1,vel=vel_meas1,effort=tau_meas1,command=tau_con1 \\
        --joint elbow:pos=pos_meas2,vel=vel_meas2,effort=tau_meas2,command=tau_con2
"""

from __future__ import annotations

import argparse

from ..data.bag import STORAGE_CHOICES
from ..data.convert import TIME_UNITS, convert_csv, parse_joint_spec
from ..stamps import s_to_ns

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``convert`` subcommand."""
    p = subparsers.add_parser(
        "convert",
        help="convert a CSV log to a rosbag2 of JointState",
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("csv", metavar="CSV", help="CSV file with one header row")
    p.add_argument("--out", required=True, help="bag directory to create (must not exist)")
    p.add_argument("--time", required=True, metavar="COL", help="time column")
    p.add_argument("--time-unit", default="s", choices=list(TIME_UNITS), help="unit of the time column (default s)")
    p.add_argument(
        "--joint",
        action="append",
        required=True,
        metavar="NAME:pos=COL[,vel=COL][,effort=COL][,command=COL]",
        help="column mapping of one joint; repeat per joint, in the controller's joint order",
    )
    p.add_argument("--storage", default="mcap", choices=STORAGE_CHOICES, help="rosbag2 storage (default mcap)")
    p.add_argument("--start-time", type=float, default=None, metavar="EPOCH_S",
                   help="start time [s since epoch] for relative time columns (default: the CSV's mtime)")
    p.add_argument("--robot", default="", help="robot name for episode.yaml")
    p.add_argument("--notes", default="", help="free text for episode.yaml")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Convert; prints the bag path and sample count. Returns 0."""
    joints = [parse_joint_spec(s) for s in args.joint]
    start = None if args.start_time is None else s_to_ns(args.start_time)
    out, rec = convert_csv(
        args.csv, args.out, args.time, joints, time_unit=args.time_unit, storage=args.storage, start_time_ns=start,
        metadata={"robot": args.robot, "notes": args.notes},
    )
    extra = " and /effort_controller/commands" if rec.command is not None else ""
    print(f"wrote {out}: {len(rec.state_t_ns)} /joint_states messages{extra} for joints {list(rec.joint_names)}")
    return 0
