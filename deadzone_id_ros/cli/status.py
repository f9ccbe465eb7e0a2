"""``deadzone-id status``: print the latest /diagnostics of each node of a running graph, without the ros2 CLI.

    deadzone-id status [--timeout 5] [--topic /diagnostics]

Listens to diagnostic_msgs/DiagnosticArray in the environment's ROS_DOMAIN_ID, waits up to ``--timeout`` seconds for
a first message and then ``--settle`` more so that every node is heard, and prints per node its level (OK, WARN,
ERROR, STALE), message and key/values. Exit status: 0 when every status is OK or WARN, 1 when one is ERROR or STALE,
2 when no diagnostics arrive within the timeout (the message says so).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..nodes.graph_client import DiagnosticReport

__all__ = ["format_diagnostics", "register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``status`` subcommand."""
    p = subparsers.add_parser("status", help="print the latest /diagnostics of each running node",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topic", default="/diagnostics", help="DiagnosticArray topic (default /diagnostics)")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for a first message (default 5)")
    p.add_argument("--settle", type=float, default=1.5,
                   help="seconds to keep listening after the first message (default 1.5)")
    p.set_defaults(func=run)


def format_diagnostics(reports: Sequence[DiagnosticReport]) -> str:
    """Text of :class:`~deadzone_id_ros.nodes.graph_client.DiagnosticReport` items: one block per node and status."""
    lines = []
    for r in reports:
        lines.append(f"{r.node}  [{r.level}] {r.name}: {r.message}  (stamp {r.stamp:.3f} s)")
        width = max((len(k) for k, _ in r.values), default=0)
        lines += [f"    {k:<{width}}  {v}" for k, v in r.values]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the statuses; returns 0 (all OK/WARN) or 1 (an ERROR/STALE). Raises GraphUnreachable (exit 2)."""
    from ..nodes.graph_client import collect_diagnostics

    reports = collect_diagnostics(args.topic, args.timeout, args.settle)
    print(format_diagnostics(reports))
    return 1 if any(r.level in ("ERROR", "STALE") for r in reports) else 0
