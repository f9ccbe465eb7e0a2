"""``deadzone-id teleop``: leader–follower teleoperation with force feedback, simulated in process.

Two simulated arms of a robot profile, a scripted operator (a joint impedance pulling the leader along a reference)
and a box in the follower's workspace; scenarios free motion, a push against the box, holding a contact, and a gentle
push on a stuck follower joint; unilateral (position copy) and bilateral (four-channel, force feedback) control, each
with the nominal rigid body and the dead-zone-aware model. Writes OUT/teleop.json, OUT/teleop.md and OUT/plots/
(:mod:`deadzone_id_ros.experiments.teleop`; see docs/teleoperation.md). With --record, one demonstration (bilateral,
hold, unless --modes or --scenarios leave them out) is also written as a rosbag2 under OUT/demonstration; with
--lerobot DIR it is also exported as a LeRobot dataset (``deadzone-id export-lerobot``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``teleop`` subcommand."""
    from ..experiments.teleop.results import SCENARIOS
    from ..experiments.teleop.sizing import HAND_DAMPING_TIME, HAND_LOAD_SHARE
    from ._args import add_simulation_parser

    p = add_simulation_parser(subparsers, "teleop", "leader-follower teleoperation with force feedback, in "
                              "simulation", __doc__, "robot profile of both arms (default: bundled)")
    p.add_argument("--models", nargs="+", default=["nominal", "identified"], metavar="MODEL",
                   help="'nominal' (URDF rigid body), 'identified' (profile model + dead-zone band), 'ideal' (the "
                   "identified model's control with the simulator's true external torques as force sensors: the "
                   "control law's floor) or a learned model path (artifact directory or .onnx); default: nominal "
                   "identified")
    p.add_argument("--modes", nargs="+", default=["unilateral", "bilateral"], choices=["unilateral", "bilateral"],
                   help="unilateral: the follower copies the leader's position (as LeRobot's kits); bilateral: and "
                   "the operator feels the contact (force feedback); default: both")
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=list(SCENARIOS),
                   help="free motion, a push against the box, holding the contact, a gentle push on a stuck joint; "
                   "default: all (docs/teleoperation.md)")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], metavar="N",
                   help="simulation seeds, one run each (default 1 2 3)")
    p.add_argument("--duration", type=float, default=4.0, metavar="S",
                   help="per scenario [s] (default 4; at least 3.2, the contact windows need it)")
    p.add_argument("--hand-stiffness", type=float, default=None, metavar="NM_RAD",
                   help="operator impedance stiffness [N·m/rad], on every joint (default: sized to the arm, so that "
                   f"pushing into the box asks for {HAND_LOAD_SHARE:.3g} of the moved joint's effort limit: "
                   "10 N·m/rad on the bundled arm, 4.8 on so101, 218 on panda)")
    p.add_argument("--hand-damping", type=float, default=None, metavar="NMS_RAD",
                   help=f"operator impedance damping [N·m·s/rad] (default: {HAND_DAMPING_TIME:g} s times the "
                   "stiffness)")
    p.add_argument("--force-gain", type=float, default=1.0, help="bilateral force gain k_f (default 1)")
    p.add_argument("--force-damping", type=float, default=0.0, metavar="PER_S",
                   help="common-mode damping [1/s] (default 0)")
    p.add_argument("--position-scale", type=float, default=1.0,
                   help="follower motion per leader motion (default 1)")
    p.add_argument("--force-scale", type=float, default=1.0, help="felt torque per contact torque (default 1)")
    p.add_argument("--record", action="store_true",
                   help="also record one demonstration as OUT/demonstration: the hold scenario (the first of "
                   "--scenarios when hold is not among them), bilateral (when among --modes), the first model and "
                   "seed")
    p.add_argument("--force", action="store_true",
                   help="replace --out even if it is not an earlier `teleop` output (an earlier one is replaced "
                   "whole: no plot of an earlier run stays beside the new report)")
    p.add_argument("--lerobot", default=None, metavar="DIR",
                   help="also export the recorded demonstration (implies --record) as a LeRobot dataset (v2.1, "
                   "parquet) at DIR, as `deadzone-id export-lerobot` does at its default 50 fps")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the scenarios, write the report, print it; returns 0.

    Raises:
        ConfigError: a bad setting (named).  SafetyError: the arms' joints cannot be mapped.  OutputError: --out is
            not empty and not an earlier teleop output (without --force).
    """
    from ..experiments.teleop import TeleopSettings, run_teleop
    from ..experiments.teleop.report import write_teleop
    from ..outputs import check_output_dir, output_dir
    from ._args import command_line_error

    try:
        settings = TeleopSettings(robot=args.robot, models=tuple(args.models), modes=tuple(args.modes),
                                  scenarios=tuple(args.scenarios), seeds=tuple(args.seeds), duration=args.duration,
                                  hand_stiffness=args.hand_stiffness,
                                  hand_damping=args.hand_damping, force_gain=args.force_gain,
                                  force_damping=args.force_damping, position_scale=args.position_scale,
                                  force_scale=args.force_scale)
    except ValueError as err:
        raise command_line_error(err) from err
    if args.lerobot and Path(args.lerobot).exists():  # before the runs, not after them
        raise command_line_error(ValueError(f"--lerobot {args.lerobot}: it exists (choose a new directory)"))
    check_output_dir(args.out, "teleop", force=args.force)  # likewise
    res, traces = run_teleop(settings)
    with output_dir(args.out, "teleop", force=args.force, in_place=True) as out:
        report = write_teleop(out, res, traces)
        if args.record or args.lerobot:
            from ..experiments.teleop.record import record_demonstration

            scenario = "hold" if "hold" in settings.scenarios else settings.scenarios[0]
            mode = "bilateral" if "bilateral" in settings.modes else settings.modes[0]
            bag = record_demonstration(out / "demonstration", settings, scenario=scenario, mode=mode)
    print(report)
    print(f"wrote {args.out / 'teleop.json'} and {args.out / 'teleop.md'}; see docs/teleoperation.md")
    if args.record or args.lerobot:
        print(f"recorded {bag} ({mode}, {scenario}, model {settings.models[0]}, seed {settings.seeds[0]}): both arms, "
              f"the commands and the forces. `deadzone-id inspect {bag}` lists it; `deadzone-id export-lerobot {bag} "
              "--out DIR` makes it a LeRobot dataset. Its efforts hold the operator's and the contact's torque, so it "
              "is not free-motion data for `deadzone-id train` (docs/teleoperation.md)")
        if args.lerobot:
            from ..data.lerobot_export import export_lerobot

            res = export_lerobot([bag], args.lerobot)
            for note in res.notes:
                print(f"note: {note}", file=sys.stderr)
            print(res.summary())
    return 0
