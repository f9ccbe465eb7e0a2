"""``deadzone-id param list|get|set|describe``: a running node's parameters without the ros2 command line.

    deadzone-id param list                                   # the feedforward_controller's parameters
    deadzone-id param get feedforward_velocity kp
    deadzone-id param set feedforward_velocity measured      # applied live, or refused with the reason
    deadzone-id param set kp "[400.0, 400.0, 400.0]"
    deadzone-id param describe feedforward_velocity          # type, description, allowed values or range
    deadzone-id param --node /sim_arm list

What ``ros2 param list|get|set|describe`` does, through the node's parameter services in the environment's
ROS_DOMAIN_ID; a value is YAML text, typed as ``ros2 param set`` types it (``1`` an integer, ``1.0`` a float, a list
in brackets). Exit status: 0 on success, 1 when the node refuses a value (its reason is printed, and the node logs
it), 2 when the node does not answer within the timeout or has no parameter of that name.
"""

from __future__ import annotations

import argparse

__all__ = ["ACTIONS", "register", "run"]

ACTIONS = ("list", "get", "set", "describe")

#: what ``get`` prints for a parameter declared without a value
NOT_SET = ("(not set: the node's default applies; a per-joint value left unset is the robot profile's, "
           "`deadzone-id robot show`)")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``param`` subcommand."""
    p = subparsers.add_parser("param", help="list, get, set or describe a running node's parameters",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--node", default="/feedforward_controller",
                   help="the node's fully qualified name (default /feedforward_controller)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the node (default 10)")
    p.add_argument("action", choices=ACTIONS, help="list the names; get or describe NAME...; set NAME VALUE")
    p.add_argument("args", nargs="*", metavar="NAME|VALUE", help="parameter names (get, describe) or NAME VALUE (set)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the action; returns 0, or 1 when a set is refused. Raises GraphUnreachable (exit 2) and ConfigError
    (exit 2: wrong number of arguments)."""
    from ..errors import ConfigError
    from ..nodes import graph_client as gc

    try:
        return _run(args, gc)
    except KeyError as err:  # a name the node does not declare
        raise ConfigError(err.args[0]) from None


def _run(args: argparse.Namespace, gc) -> int:  # noqa: ANN001 - the graph_client module
    """The work of :func:`run`."""
    from ..errors import ConfigError

    node, names = "/" + args.node.strip("/"), list(args.args)
    if args.action == "list" and names:
        raise ConfigError(f"param list takes no names (got {names})")
    if args.action in ("get", "describe") and not names:
        raise ConfigError(f"param {args.action} needs at least one parameter name (`deadzone-id param list`)")
    if args.action == "set" and len(names) != 2:
        raise ConfigError(f"param set takes NAME VALUE (got {names}); quote a list: \"[1.0, 2.0]\"")
    if args.action == "list":
        print("\n".join(gc.list_parameters(node, args.timeout)))
    elif args.action == "get":
        for name, value in gc.get_parameters(node, names, args.timeout):
            print(f"{name}: {NOT_SET if value is None else repr(value)}")
    elif args.action == "describe":
        for d in gc.describe_parameters(node, names, args.timeout):
            print(f"{d.name}: {d.type}{', read-only' if d.read_only else ', live'}"
                  f"{'; ' + d.constraints if d.constraints else ''}\n    {d.description}")
    else:
        ok, reason = gc.set_parameter(node, names[0], names[1], args.timeout)
        print(f"{node} {names[0]} = {names[1]}: {'applied' if ok else 'refused: ' + reason}")
        return 0 if ok else 1
    return 0
