"""``deadzone-id sense``: sensing force without a force sensor, every estimator against the simulator's truth.

Runs the controller on held-out references of the simulated arm in process, with scripted pushes at the end effector
and a hold with a quasi-static push, and compares the model's residual with and without the dead-zone band, the
momentum observer on the URDF's nominal rigid body and the DOB estimate: false contacts per minute of free motion and
during holds, RMSE during contact vs the simulator's torque noise floor, detection delay, the smallest push detected.
Writes OUT/sense.json, OUT/sense.md and OUT/plots/sense_estimate.png (:mod:`deadzone_id_ros.experiments.sense`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sense`` subcommand."""
    from ._args import add_simulation_parser

    p = add_simulation_parser(subparsers, "sense", "external torque and contact from the model, against simulated "
                              "truth", __doc__, "robot profile (default: the bundled arm)")
    p.add_argument("--model", default="", metavar="PATH",
                   help="the model under test: an artifact directory or .onnx (e.g. the pick of `deadzone-id "
                   "compare`); default: the URDF's rigid body with its friction")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], metavar="N",
                   help="evaluation seeds, held out from the calibration's (default 1 2 3)")
    p.add_argument("--duration", type=float, default=60.0, metavar="S",
                   help="free motion with pushes per seed [s] (default 60)")
    p.add_argument("--calibration-duration", type=float, default=60.0, metavar="S",
                   help="free motion for the thresholds [s] (default 60)")
    p.add_argument("--free-duration", type=float, default=0.0, metavar="S",
                   help="free motion without pushes per seed [s], counted for false contacts only (default 0: none; "
                   "e.g. 160 with 3 seeds and --duration 60 gives about 10 simulated minutes of free motion)")
    p.add_argument("--hold-duration", type=float, default=10.0, metavar="S", help="hold per seed [s] (default 10)")
    p.add_argument("--confirm", type=int, default=None, metavar="N",
                   help="consecutive samples above threshold that start a contact (default: the detector's "
                   "CONFIRM_SAMPLES, 2; 1: the rule before it)")
    p.add_argument("--cutoff", type=float, default=100.0, metavar="RAD_S", help="estimator cutoff (default 100)")
    p.add_argument("--point", type=float, nargs=3, default=None, metavar=("X", "Y", "Z"),
                   help="the pushed point (and the wrench's) in the last link's frame [m]; default: the profile's "
                   "payload position (0 0 0.22 unless the profile sets it: the bundled arm's tip, not every arm's; "
                   "the report names the point used)")
    p.add_argument("--real-dir", type=Path, default=None, metavar="DIR",
                   help="instead of the simulation: each estimator's free-motion residual and implied threshold on the "
                   "real recordings in DIR (kuka_lwr4_fri.bag, dfki_double_pendulum/*.csv, as demo-real reads them); "
                   "writes OUT/sense_real.md and .json")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the experiment, write the report, print the table; returns 0.

    Raises:
        ConfigError: a bad setting (named).
    """
    from ..experiments.sense import SenseSettings, run_sense, write_sense
    from ..sensing.contact import CONFIRM_SAMPLES
    from ._args import command_line_error

    if args.real_dir is not None:
        return _run_real(args.real_dir, args.out)

    try:
        settings = SenseSettings(robot=args.robot, model_path=args.model, seeds=tuple(args.seeds),
                                 duration=args.duration, calibration_duration=args.calibration_duration,
                                 hold_duration=args.hold_duration, free_duration=args.free_duration,
                                 confirm=CONFIRM_SAMPLES if args.confirm is None else args.confirm, cutoff=args.cutoff,
                                 point=None if args.point is None else tuple(args.point))
    except ValueError as err:
        raise command_line_error(err) from err
    res, traces = run_sense(settings)
    print(write_sense(args.out, res, traces))
    print(f"wrote {args.out / 'sense.json'} and {args.out / 'sense.md'}; see docs/sensing.md for what they mean")
    print(f"wrote {args.out / 'sensing.yaml'}: these sensing settings (thresholds, band, friction correction) as node "
          f"parameters; with the same model, sense force on the simulated arm with\n"
          f"  deadzone-id launch sim_feedforward.launch.yaml robot:={res.robot} mode:=ctc_dob sensing:=true "
          f"sensing_params_file:={args.out / 'sensing.yaml'}\n(its header gives the model arguments)")
    return 0


def _run_real(real_dir: Path, out: Path) -> int:
    """The real-recordings part: the runs of ``demo-real`` (the DFKI CSVs converted to rosbag2 under OUT/data)."""
    from ..experiments.sense.real import real_markdown, sense_real_sets
    from .demo import _convert_dfki

    kuka = real_dir / "kuka_lwr4_fri.bag"
    csvs = sorted((real_dir / "dfki_double_pendulum").glob("*.csv"))
    if not kuka.is_file() or not csvs:
        raise FileNotFoundError(f"{real_dir} must hold kuka_lwr4_fri.bag and dfki_double_pendulum/*.csv (the shared "
                                "real recordings; see demo-real)")
    runs = [(kuka.stem, [kuka], "kuka_lwr4plus", 2.0)]
    runs += [(r.name, list(r.bags), r.urdf, r.block_seconds) for r in _convert_dfki(csvs, out)]
    print(real_markdown(sense_real_sets(runs, out)))
    print(f"wrote {out / 'sense_real.md'} and {out / 'sense_real.json'}")
    return 0
