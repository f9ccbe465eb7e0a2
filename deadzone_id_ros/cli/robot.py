"""``deadzone-id robot show NAME|FILE``, ``deadzone-id robot check NAME|FILE`` and ``deadzone-id robot ros2-control
NAME|FILE [-o FILE]``.

``show`` prints a robot profile resolved against its URDF: limits (from the URDF), friction, the nominal inertia
diag M(q_home) and the default gains (derived, formulas in :mod:`deadzone_id_ros.robot.derived`), each marked with
where it came from. ``check`` runs the profile's simulated arm in closed loop for a few seconds and says whether it is
trustworthy, and if not, what to change in the profile (:mod:`deadzone_id_ros.experiments.check`; exit status 1
when it found a problem). ``ros2-control`` writes the controller_manager parameter file (joint_state_broadcaster and an
effort forward_command_controller in the profile's command order). NAME is a profile shipped in config/robots/
(``three_dof_arm``, ``so101``, ``panda``) or a fixed-base serial arm of the robot catalog (``deadzone-id robots``;
its profile derived from the URDF, ``catalog:NAME`` where a shipped profile has the name); FILE a profile YAML file
of your own.
"""

from __future__ import annotations

import argparse
from pathlib import Path

_SPEC_HELP = ("a shipped profile, a fixed-base serial arm of the catalog (`deadzone-id robots`; catalog:NAME where a "
              "shipped profile has the name) or a profile YAML file")

__all__ = ["register", "run_check", "run_ros2_control", "run_show"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``robot`` subcommand with its ``show``, ``check`` and ``ros2-control`` actions."""
    p = subparsers.add_parser("robot", help="show a robot profile resolved, or write its ros2_control config",
                              description=__doc__)
    actions = p.add_subparsers(dest="robot_action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print the resolved profile (derived values marked)")
    show.add_argument("robot", metavar="NAME|FILE", help=_SPEC_HELP)
    show.set_defaults(func=run_show)
    chk = actions.add_parser("check", help="a short closed-loop test of the profile in the simulator: is it "
                             "trustworthy, and what to change if not")
    chk.add_argument("robot", metavar="NAME|FILE", help=_SPEC_HELP)
    chk.add_argument("--duration", type=float, default=4.0, metavar="S",
                     help="closed-loop simulated time [s] (default 4)")
    chk.add_argument("--seed", type=int, default=1, metavar="N", help="excitation and noise seed (default 1)")
    chk.add_argument("--json", default=None, metavar="FILE", help="also write the figures and findings as JSON")
    chk.set_defaults(func=run_check)
    ctl = actions.add_parser("ros2-control", help="write the controller_manager YAML for the profile")
    ctl.add_argument("robot", metavar="NAME|FILE", help=_SPEC_HELP)
    ctl.add_argument("-o", "--output", default=None, help="write here instead of stdout")
    ctl.set_defaults(func=run_ros2_control)


def run_show(args: argparse.Namespace) -> int:
    """Print the resolved profile. Returns 0; a bad profile or URDF raises (printed by main, status 2)."""
    from ..robot.derived import derive_robot
    from ..robot.profile import resolve_profile
    from ..robot.profile_text import profile_listing

    print(profile_listing(derive_robot(resolve_profile(args.robot))), end="")
    return 0


def run_check(args: argparse.Namespace) -> int:
    """Print the robot check. Returns 0 when the simulated arm is trustworthy, 1 when the check found a problem."""
    import json

    from ..errors import ConfigError
    from ..experiments.check import CheckSettings, run_check
    from ..robot_configs import load_robot

    try:
        settings = CheckSettings(duration=args.duration, seed=args.seed)
    except ValueError as err:
        raise ConfigError(f"command line: --{err}") from err
    result = run_check(load_robot(args.robot), settings)
    print(result.text(), end="")
    if args.json:
        Path(args.json).write_text(json.dumps(result.to_dict(), indent=2) + "\n")
        print(f"wrote {args.json}")
    return 0 if result.trustworthy else 1


def run_ros2_control(args: argparse.Namespace) -> int:
    """Write (or print) the controller_manager YAML. Returns 0."""
    from ..robot.profile import resolve_profile
    from ..robot.profile_text import ros2_control_yaml

    text = ros2_control_yaml(resolve_profile(args.robot))
    if args.output:
        Path(args.output).write_text(text)
        print(f"wrote {args.output}")
    else:
        print(text, end="")
    return 0
