"""``deadzone-id export-lerobot BAG [BAG ...] --out DIR [--fps 50] [--task TEXT] [--live] [--topic KEY=TOPIC ...]``.

Writes teleoperation demonstrations (rosbag2, as ``deadzone-id teleop --record`` or a live recording of the teleop
launch writes them) as one LeRobot dataset, format v2.1 (meta/info.json, episodes.jsonl, tasks.jsonl,
episodes_stats.jsonl, data/chunk-000/episode_NNNNNN.parquet), one episode per bag, frames resampled to --fps:
observation.state = the follower's q [rad], action = the leader's q [rad], observation.velocity [rad/s],
observation.effort [N·m], observation.external_torque with its dead-zone half width and the true one [N·m], and the
leader's (leader.*). A topic the bags lack is left out with a note; a missing joint_states topic is an error.

A live recording of the teleop launch (launch/teleop.launch.yaml's nodes) names its torque topics after the nodes
(sensor_msgs/JointState, the torque in effort): each bag is read with the set it holds (the in-process bag's or
the live one's); --live names the live set for every bag (teleop_bilateral's estimates and bands, the simulators'
true torques). The topic keys (KEY= leaves an optional one out) and their defaults follow in --help.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``export-lerobot`` subcommand."""
    from dataclasses import fields

    from ..data.lerobot_export import DEFAULT_FPS, DEFAULT_TASK, DemoTopics

    live = DemoTopics.live()
    table = "\n".join(f"    {f.name:20s}{f.default}" + (f"  (--live: {getattr(live, f.name)})"
                                                         if getattr(live, f.name) != f.default else "")
                      for f in fields(DemoTopics))
    keys = "--topic KEY=TOPIC keys and their defaults (the in-process bag's):\n\n" + table
    p = subparsers.add_parser(
        "export-lerobot",
        help="write teleoperation demonstration bags as a LeRobot dataset (v2.1, parquet)",
        description=__doc__.split("\n\n", 1)[1] + "\n" + keys,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("bags", nargs="+", metavar="BAG", help="demonstration bag directories, one episode each")
    p.add_argument("--out", required=True, metavar="DIR", help="dataset directory to create (must not exist)")
    p.add_argument("--fps", type=float, default=DEFAULT_FPS, help=f"frame rate [Hz] (default {DEFAULT_FPS:g})")
    p.add_argument("--task", default=DEFAULT_TASK, help=f"task text of every episode (default {DEFAULT_TASK!r})")
    p.add_argument("--robot-type", default="", help="info.json robot_type (default: the first bag's episode.yaml "
                   "robot)")
    p.add_argument("--live", action="store_true",
                   help="the torque topics of a live recording of the teleop launch (listed above, after --live:), "
                   "not the in-process bag's; --topic overrides them. Without --live or --topic each bag is read "
                   "with the set it holds")
    p.add_argument("--topic", action="append", default=[], metavar="KEY=TOPIC",
                   help="a topic other than the default (keys above); repeat per topic")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Export; prints the notes (to stderr), the dataset's summary and how to read it back. Returns 0.

    Raises:
        DataError: a bad --topic, an existing --out, a bag without a required topic (each named).
    """
    from ..data.lerobot_export import DemoTopics, export_lerobot, parse_topic_override

    topics = None  # per bag: the in-process bag's topics or a live recording's, whichever it holds
    if args.live or args.topic:
        topics = DemoTopics.live() if args.live else DemoTopics()
        for spec in args.topic:
            topics = parse_topic_override(topics, spec)
    res = export_lerobot(args.bags, args.out, fps=args.fps, topics=topics, task=args.task,
                         robot_type=args.robot_type)
    for note in res.notes:
        print(f"note: {note}", file=sys.stderr)
    print(res.summary())
    print(f"next: deadzone-id inspect {res.root}; deadzone-id convert {res.root} --out BAGS gives one bag per episode")
    return 0
