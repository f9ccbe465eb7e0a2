"""``deadzone-id launch FILE [name:=value ...]``: run a project launch file without ros2 launch.

FILE is a path or a file name in the package's ``launch/`` share directory (e.g. ``sim.launch.yaml``). The nodes run
as child processes with their output prefixed by ``[name]``; SIGINT/SIGTERM to the launcher stop them in reverse
start order (SIGINT, then SIGTERM, then SIGKILL after timeouts); SIGHUP (a closed terminal) does the same. A node
marked ``on_exit: shutdown`` (replay.launch.yaml's bag_replay; sim_feedforward.launch.yaml's excitation, which exits
after its motion with ``end_when_finished:=true``, the default) ends the launch when it exits. Exit status: 0 after a
requested shutdown in which every node exited cleanly, 1 if a node died on its own or exited non-zero (the others are
then stopped) or had to be killed, 2 for a bad launch file or argument.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ..launching import LaunchedGraph, load_launch_file, parse_launch_arguments
from ..launching.graph import STOP_SIGNALS

if TYPE_CHECKING:
    from ..launching.plan import ArgSpec, LaunchPlan

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``launch`` subcommand."""
    p = subparsers.add_parser(
        "launch",
        help="start a *.launch.yaml file (ROS 2 YAML front end subset) as child processes",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", help="launch file path, or a file name in the package's launch/ directory")
    p.add_argument("arguments", nargs="*", metavar="name:=value", help="launch arguments")
    p.add_argument("--print", dest="print_only", action="store_true",
                   help="print the command line of every node and exit without starting anything")
    p.add_argument("--show-args", action="store_true", help="list the launch arguments with defaults and exit")
    p.add_argument("--shutdown-timeout", type=float, default=5.0,
                   help="seconds to wait for each node after SIGINT before escalating (default 5)")
    p.set_defaults(func=run, take_extra=_take_launch_arguments)


def _show_arguments(plan: LaunchPlan) -> str:
    """The launch arguments a user can set, by file: the launched file's first, then each included file's; an
    argument its include sets is listed apart, with the value the include gives it (set that one instead)."""
    by_file: dict[str, list[ArgSpec]] = {}
    for a in plan.arguments:
        by_file.setdefault(a.source.rsplit(": launch[", 1)[0], []).append(a)
    lines = []
    for file, specs in by_file.items():
        own = [a for a in specs if not a.set_by]
        lines.append(f"# {Path(file).name}" + ("" if file == str(plan.file) else " (included)"))
        for a in own:
            default = "(required)" if a.default is None else f"(default: {a.default!r})"
            lines.append(f"{a.name} {default}\n    {a.description}")
        lines += [f"  {a.name}: {a.set_by}" for a in specs if a.set_by]
    return "\n".join(lines)


def _take_launch_arguments(args: argparse.Namespace, extra: list[str]) -> bool:
    """Accept ``name:=value`` tokens given after an option (``FILE --print a:=1``) as launch arguments."""
    if not all(":=" in token and not token.startswith("-") for token in extra):
        return False
    args.arguments = [*args.arguments, *extra]
    return True


def _check_robot(spec: str) -> None:
    """Resolve the robot profile ``robot:=spec`` before any node starts: a profile that cannot be read or whose URDF
    is missing stops the launch with one message naming the profile and the path, and nothing is started (no node
    error blaming a parameter file, no empty episode left in the output folder).

    Raises:
        ConfigError: the profile or its URDF cannot be resolved (``robot:=SPEC: ...``).
    """
    from ..errors import ConfigError, DeadzoneIdError
    from ..robot.defaults import load_robot

    try:
        load_robot(spec)
    except (DeadzoneIdError, FileNotFoundError) as err:
        raise ConfigError(f"robot:={spec}: {err}") from err


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; returns the exit status. Raises LaunchError/FileNotFoundError for bad input."""
    import shlex

    given = parse_launch_arguments(args.arguments)
    if args.show_args:
        plan = load_launch_file(args.file, given, strict=False, allow_missing=True)
        print(_show_arguments(plan))
        return 0
    plan = load_launch_file(args.file, given)
    if "robot" in given and not args.print_only:
        _check_robot(given["robot"])
    if args.print_only:
        for spec in plan.nodes:
            print(f"# {spec.label}\n{shlex.join(spec.command())}")
        return 0

    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        received.append(signum)
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in STOP_SIGNALS}
    graph = LaunchedGraph(plan, sink=sys.stdout)
    try:
        graph.start()
        outcome = graph.wait(stop=stop)
        if outcome == "died":
            for node in graph.died():
                print(f"[launch] {node.label} died with status {node.returncode}; stopping the others",
                      file=sys.stderr)
        elif outcome == "shutdown":
            done = [n.label for n in graph.nodes if n.spec.on_exit == "shutdown" and n.returncode == 0]
            print(f"[launch] {', '.join(done)} finished; stopping the others", file=sys.stderr)
        elif outcome == "stopped":
            print(f"[launch] {signal.Signals(received[0]).name} received; stopping the nodes", file=sys.stderr)
    finally:
        # after a failure, nodes still importing are stopped without a KeyboardInterrupt traceback over the error
        status = graph.shutdown(timeout=args.shutdown_timeout, quiet_if_starting=bool(graph.died()))
        for s, handler in previous.items():
            signal.signal(s, handler)
    if graph.died() or any(n.killed for n in graph.nodes):
        return 1
    bad = {label: code for label, code in status.items() if code != 0}
    if bad:
        print(f"[launch] nodes with a non-zero exit status: {bad}", file=sys.stderr)
        return 1
    return 0

