"""``deadzone-id convert CSV --out DIR --time COL --joint NAME:pos=COL[,vel=COL][,effort=COL][,command=COL] ...``
or ``deadzone-id convert LEROBOT_DATASET --out DIR --position-unit deg|rad``.

Turns a CSV log into a rosbag2 of sensor_msgs/JointState (plus /effort_controller/commands when command columns are
given), so that non-ROS logs go through the same data path. Example (DFKI double pendulum)::

    deadzone-id convert design_A0_20220815_trajectory_00.csv --out dfki_A0 --time time \\
        --joint shoulder:pos=pos_meas1,vel=vel_meas1,effort=tau_meas1,command=tau_con1 \\
        --joint elbow:pos=pos_meas2,vel=vel_meas2,effort=tau_meas2,command=tau_con2

A LeRobot dataset (its directory with meta/info.json, or one of its parquet files) becomes one bag per episode,
DIR/episode_NNNNNN, when it records effort (a servo's load or current; its unit goes into each bag's episode.yaml);
its joints and rate come from info.json, and --position-unit says what LeRobot did not record: the unit of
observation.state. A dataset without effort is refused: it cannot train an inverse-dynamics model.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from ..data.bag import STORAGE_CHOICES
from ..data.convert import TIME_UNITS, convert_csv, parse_joint_spec
from ..data.effort_units import NEWTON_METRE
from ..errors import DataError
from ..stamps import s_to_ns

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``convert`` subcommand."""
    p = subparsers.add_parser(
        "convert",
        help="convert a CSV log or a LeRobot dataset to rosbag2 (JointState)",
        description=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("csv", metavar="CSV|LEROBOT_DATASET",
                   help="CSV file with one header row, or a LeRobot dataset (directory or one of its parquet files)")
    p.add_argument("--out", required=True, help="bag directory to create (must not exist)")
    p.add_argument("--time", metavar="COL", help="CSV: time column (required for a CSV)")
    p.add_argument("--time-unit", default="s", choices=list(TIME_UNITS), help="unit of the time column (default s)")
    p.add_argument(
        "--joint",
        action="append",
        metavar="NAME:pos=COL[,vel=COL][,effort=COL][,command=COL]",
        help="CSV: column mapping of one joint; repeat per joint, in the controller's joint order (required for a CSV)",
    )
    p.add_argument("--position-unit", choices=("deg", "rad"), default=None,
                   help="LeRobot: the unit of observation.state positions (LeRobot does not record it: deg with "
                   "use_degrees, or a range normalized to [-100, 100], which needs the arm's calibration and is "
                   "refused); default: the unit info.json states (deadzone-id export-lerobot writes it)")
    p.add_argument("--delimiter", default=None, choices=[",", ";", "tab"],
                   help="column separator (default: detected from the header)")
    p.add_argument("--decimal", default=None, choices=[".", ","],
                   help="decimal mark (default: ',' when the separator is not ',' and values look like 0,5)")
    p.add_argument("--storage", default="mcap", choices=STORAGE_CHOICES, help="rosbag2 storage (default mcap)")
    p.add_argument("--start-time", type=float, default=None, metavar="EPOCH_S",
                   help="start time [s since epoch] for relative time columns (default: the CSV's mtime)")
    p.add_argument("--robot", default="", help="robot name for episode.yaml")
    p.add_argument("--notes", default="", help="free text for episode.yaml")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Convert; prints the bag path, the sample count and any warning (a time reset with its line). Returns 0.

    Raises:
        DataError: a CSV without --time/--joint, or a LeRobot dataset without effort or --position-unit (each says
            what to give).
    """
    from ..data.lerobot import find_lerobot_root

    if find_lerobot_root(args.csv) is not None:
        return _run_lerobot(args)
    if not args.time or not args.joint:
        raise DataError(f"{args.csv}: a CSV needs --time COL and --joint NAME:pos=COL,... (one per joint)")
    joints = [parse_joint_spec(s) for s in args.joint]
    start = None if args.start_time is None else s_to_ns(args.start_time)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, rec = convert_csv(
            args.csv, args.out, args.time, joints, time_unit=args.time_unit, storage=args.storage,
            start_time_ns=start, metadata={"robot": args.robot, "notes": args.notes},
            delimiter="\t" if args.delimiter == "tab" else args.delimiter, decimal=args.decimal,
        )
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    extra = " and /effort_controller/commands" if rec.command is not None else ""
    print(f"wrote {out}: {len(rec.state_t_ns)} /joint_states messages{extra} for joints {list(rec.joint_names)}")
    return 0


def _run_lerobot(args: argparse.Namespace) -> int:
    """A LeRobot dataset to one bag per episode under ``args.out``; prints each bag and the next step."""
    import os
    import shutil
    from pathlib import Path

    from ..data.bag import write_recording
    from ..data.lerobot import lerobot_recordings, open_lerobot

    ds = open_lerobot(args.csv)
    if not ds.has_effort:
        raise DataError(ds.no_effort_reason())
    position_unit = args.position_unit or ds.position_unit  # given, else as the export's info.json states it
    if not position_unit:
        raise DataError(f"{ds.summary()}: LeRobot does not record the unit of observation.state; give --position-unit "
                        "deg (use_degrees, or SO-100 datasets of older lerobot) or rad. A range normalized to "
                        "[-100, 100] (lerobot's SO-101 default) needs the arm's calibration and cannot be converted")
    out = Path(args.out)
    if out.exists():
        raise DataError(f"cannot write {out}: it exists (choose another --out)")
    start = s_to_ns(args.start_time) if args.start_time is not None else \
        int(os.stat(ds.files[0]).st_mtime) * 1_000_000_000
    episodes = lerobot_recordings(ds, position_unit, start)
    tmp = out.parent / f".{out.name}.partial-{os.getpid()}"
    try:
        tmp.mkdir(parents=True)
        for index, rec in episodes:
            rec.metadata.update({k: v for k, v in (("robot", args.robot), ("notes", args.notes)) if v})
            write_recording(rec, tmp / f"episode_{index:06d}", storage=args.storage)
        tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    for index, rec in episodes:
        print(f"wrote {out / f'episode_{index:06d}'}: {len(rec.state_t_ns)} /joint_states messages for joints "
              f"{list(rec.joint_names)}, effort {ds.effort_key} in {ds.effort_unit}")
    print(f"next: deadzone-id inspect {out}/episode_*" + ("" if ds.effort_unit == NEWTON_METRE else
          f" (the effort is in {ds.effort_unit}: --torque-constant JOINT:K converts it to N·m for a model the "
          "controller can run)"))
    return 0
