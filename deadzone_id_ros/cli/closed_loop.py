"""``deadzone-id closed-loop --compare DIR``: every controller in closed loop on held-out references.

Runs pd_dob, ctc_dob with the URDF's nominal rigid body, and ctc_dob with the comparison's identified rigid body,
masked, conventional and picked models, each on several held-out excitation seeds in-process (the controller and
simulator code of the nodes, no DDS, faster than real time), with the default DOB and with a weak DOB (cutoff a
fraction of the default, where the feedforward has to carry the load). Optionally one live run per controller
over DDS (sim_feedforward.launch.yaml in lockstep) on the first seed, beside the in-process run of the same seed
and duration: the check that the nodes behave like the in-process loop. The ctc_dob models are evaluated at the
reference's velocity, as the controller does by default; --feedforward-velocity measured runs them at the measured
one, to compare the two laws on the same models. Writes OUT/closed_loop.json,
OUT/closed_loop.md and OUT/plots/closed_loop_reversals.png (the experiment:
:mod:`deadzone_id_ros.experiments.closed_loop.run`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..experiments.closed_loop.run import DEFAULT_SEEDS, WEAK_DOB_FRACTION
from ._check import add_check_argument, robot_check_first

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``closed-loop`` subcommand."""
    p = subparsers.add_parser("closed-loop", help="every controller in closed loop on held-out references",
                              description=__doc__.split("\n\n")[1])
    p.add_argument("--compare", type=Path, required=True, metavar="DIR", help="a `deadzone-id compare` output")
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help="output folder (default: --compare DIR)")
    p.add_argument("--seeds", type=int, nargs="+", default=list(DEFAULT_SEEDS), metavar="N",
                   help="held-out excitation seeds (default 999 1000 1001)")
    p.add_argument("--duration", type=float, default=8.0, metavar="S", help="seconds per seed (default 8)")
    p.add_argument("--weak-dob-fraction", type=float, default=WEAK_DOB_FRACTION, metavar="F",
                   help=f"weak DOB: cutoff as a fraction of the default (default {WEAK_DOB_FRACTION})")
    p.add_argument("--live-duration", type=float, default=0.0, metavar="S",
                   help="also one live run over DDS per controller of this length (default 0: none)")
    p.add_argument("--workers", type=int, default=2, help="processes for the in-process runs (default 2)")
    p.add_argument("--feedforward-velocity", choices=("desired", "measured"), default="desired",
                   help="the velocity the ctc_dob models are evaluated at: desired (the reference's, the controller's "
                   "default) or measured (the law before 2026-12-07; in process only, without --live-duration); "
                   "docs/controller.md, \"The velocity the model sees\"")
    p.add_argument("--robot", default=None, metavar="NAME|FILE",
                   help="robot profile (`deadzone-id robot show`) of the simulated arm and the controller "
                   "(default: the bundled arm), in process and in the live runs (robot:= of the launch files)")
    add_check_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the comparison, write closed_loop.json and closed_loop.md, print the table; returns 0.

    Raises:
        FileNotFoundError: ``--compare``/report.json is missing.
        ConfigError: a bad --duration, --workers, --seeds or --weak-dob-fraction; --feedforward-velocity measured
            with --live-duration.
    """
    from ..errors import ConfigError

    report = Path(args.compare) / "report.json"
    if not report.is_file():  # before the heavy imports: a wrong folder is answered at once
        raise FileNotFoundError(f"{report} does not exist (run `deadzone-id compare --out {args.compare}` first)")
    from ..experiments.closed_loop.run import check_feedforward_velocity, run_closed_loop, write_closed_loop

    if not args.duration > 0 or args.workers < 1:
        raise ConfigError(f"--duration ({args.duration}) must be > 0 s and --workers ({args.workers}) >= 1")
    try:
        check_feedforward_velocity(args.feedforward_velocity, args.live_duration)  # before the robot check runs
    except ValueError as err:
        raise ConfigError(str(err)) from err
    out = args.out or args.compare
    robot_check_first(args.robot, args.no_check)
    try:
        res = run_closed_loop(args.compare, out, args.seeds, args.duration, args.weak_dob_fraction,
                              args.live_duration, args.workers, robot=args.robot,
                              feedforward_velocity=args.feedforward_velocity)
    except ValueError as err:
        raise ConfigError(str(err)) from err
    print(write_closed_loop(out, res))
    return 0
