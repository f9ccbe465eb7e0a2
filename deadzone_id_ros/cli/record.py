"""``deadzone-id record start|stop|split``: control the recorder's episodes without the ros2 command line.

    deadzone-id record start [--node /recorder] [--timeout 10]
    deadzone-id record split          # close the episode and start the next one without losing a message
    deadzone-id record stop

Calls the recorder node's std_srvs/Trigger service ``<node>/<action>`` (what ``ros2 service call /recorder/start
std_srvs/srv/Trigger`` does) in the environment's ROS_DOMAIN_ID, and prints its answer (the episode directory).
Exit status: 0 when the recorder reports success, 1 when it refuses (e.g. stop with no open episode), 2 when the
service does not answer within the timeout.
"""

from __future__ import annotations

import argparse

__all__ = ["ACTIONS", "register", "run"]

ACTIONS = ("start", "stop", "split")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``record`` subcommand."""
    p = subparsers.add_parser("record", help="start, stop or split the recorder's episodes (std_srvs/Trigger)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=ACTIONS, help="start a new episode, stop the open one, or split it")
    p.add_argument("--node", default="/recorder", help="the recorder node's fully qualified name (default /recorder)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the service (default 10)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Call the service; returns 0 on success, 1 if the recorder refused. Raises GraphUnreachable (exit 2)."""
    from ..nodes.graph_client import call_trigger

    service = f"{args.node.rstrip('/')}/{args.action}"
    ok, message = call_trigger(service, args.timeout)
    print(f"{service}: {'ok' if ok else 'refused'}: {message}")
    return 0 if ok else 1
