"""``deadzone-id robots [--json] [--joints NAME]``: the robot model names ``--urdf`` accepts.

Lists the URDFs bundled under urdf/ and, when the optional ``example-robot-data`` package is installed (``make
demo-real`` / ``make test`` install it), its collection. ``--joints NAME`` prints that model's movable joints (what
``--joint-map bag_name:urdf_name`` maps onto).
"""

from __future__ import annotations

import argparse
import json

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``robots`` subcommand."""
    p = subparsers.add_parser(
        "robots",
        help="list the robot model names --urdf accepts",
        description="Robot models by name: the bundled URDFs and example-robot-data's collection (optional extra). "
        "--urdf also takes any URDF file path.",
    )
    p.add_argument("--json", action="store_true", help="print name, origin and URDF path as JSON")
    p.add_argument("--joints", metavar="NAME", default=None, help="print the movable joints of this model")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the names (or one model's joints). Returns 0."""
    from ..robot import ERD_DISTRIBUTION, available_robots, resolve_robot_model

    if args.joints:
        from ..robot.urdf_text import load_urdf_model

        entry = resolve_robot_model(args.joints)
        model = load_urdf_model(entry.urdf_path)
        joints = [str(n) for i, n in enumerate(model.names) if i > 0 and model.joints[i].nv > 0]
        print(json.dumps(joints) if args.json else "\n".join(joints))
        return 0
    robots = available_robots()
    if args.json:
        print(json.dumps([{"name": n, "origin": e.origin, "urdf": str(e.urdf_path)} for n, e in robots.items()],
                         indent=2))
        return 0
    for origin in ("bundled", ERD_DISTRIBUTION):
        names = [n for n, e in robots.items() if e.origin == origin]
        print(f"{origin} ({len(names)}):")
        print("  " + ("\n  ".join(names) if names else f"(none: {ERD_DISTRIBUTION} is not installed)"))
    print("--robot NAME takes each fixed-base serial arm of these with a profile derived from its URDF (`deadzone-id "
          "robot show NAME` prints it, `deadzone-id robot check NAME` checks it; a legged robot, hand or humanoid is "
          "refused with the reason); a profile file of your own overrides it (docs/own-arm.md)")
    return 0
