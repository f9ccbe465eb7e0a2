"""``deadzone-id robot show NAME|FILE`` and ``deadzone-id robot ros2-control NAME|FILE [-o FILE]``.

``show`` prints a robot profile resolved against its URDF: limits (from the URDF), friction, the nominal inertia
diag M(q_home) and the default gains (derived, formulas in :mod:`deadzone_id_ros.robot.derived`), each marked with
where it came from. ``ros2-control`` writes the controller_manager parameter file (joint_state_broadcaster and an
effort forward_command_controller in the profile's command order). NAME is a profile shipped in config/robots/
(``three_dof_arm``, ``so101``, ``panda``); FILE a profile YAML file of your own.
"""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = ["register", "run_ros2_control", "run_show"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``robot`` subcommand with its ``show`` and ``ros2-control`` actions."""
    p = subparsers.add_parser("robot", help="show a robot profile resolved, or write its ros2_control config",
                              description=__doc__)
    actions = p.add_subparsers(dest="robot_action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print the resolved profile (derived values marked)")
    show.add_argument("robot", metavar="NAME|FILE", help="a shipped profile name or a profile YAML file")
    show.set_defaults(func=run_show)
    ctl = actions.add_parser("ros2-control", help="write the controller_manager YAML for the profile")
    ctl.add_argument("robot", metavar="NAME|FILE", help="a shipped profile name or a profile YAML file")
    ctl.add_argument("-o", "--output", default=None, help="write here instead of stdout")
    ctl.set_defaults(func=run_ros2_control)


def run_show(args: argparse.Namespace) -> int:
    """Print the resolved profile. Returns 0; a bad profile or URDF raises (printed by main, status 2)."""
    from ..robot.derived import derive_robot
    from ..robot.profile import resolve_profile
    from ..robot.profile_text import profile_listing

    print(profile_listing(derive_robot(resolve_profile(args.robot))), end="")
    return 0


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
