"""``deadzone-id param list|get|set|describe``: a running node's parameters without the ros2 command line.

    deadzone-id param list                                   # the feedforward_controller's parameters
    deadzone-id param get feedforward_velocity kp
    deadzone-id param set feedforward_velocity measured      # applied live, or refused with the reason
    deadzone-id param set kp "[400.0, 400.0, 400.0]"
    deadzone-id param describe feedforward_velocity          # type, description, allowed values or range
    deadzone-id param --node /sim_arm list

What ``ros2 param list|get|set|describe`` does, through the node's parameter services in the environment's
ROS_DOMAIN_ID (:mod:`deadzone_id_ros.nodes.param_client`). A value is YAML text (a list in brackets, quoted), read
after the parameter's type: ``1`` sets a float parameter to 1.0, and any text sets a string parameter to that text.
Exit status: 0 on success, 1 when the value is refused (the reason is printed; the controller also logs a refusal by
its own rules, while rclpy's checks of read-only, type and range answer without a log line), 2 when the node does not
answer within the timeout (each step waits at most that long), has no parameter of that name, or the value is no
parameter value.
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
    """Run the action; returns 0, or 1 when a set is refused.

    Raises:
        GraphUnreachable: the node does not answer (exit 2).  ParameterError: a name the node does not declare, a
            value that is no parameter value, an invalid node name (exit 2).  ConfigError: wrong arguments (exit 2).
    """
    from ..errors import ConfigError
    from ..nodes import param_client as pc

    node, names = "/" + args.node.strip("/"), list(args.args)
    if args.action == "list" and names:
        raise ConfigError(f"param list takes no names (got {names})")
    if args.action in ("get", "describe") and not names:
        raise ConfigError(f"param {args.action} needs at least one parameter name (`deadzone-id param list`)")
    if args.action == "set" and len(names) != 2:
        raise ConfigError(f"param set takes NAME VALUE (got {names}); quote a list: \"[1.0, 2.0]\"")
    if args.action == "list":
        print("\n".join(pc.list_parameters(node, args.timeout)))
    elif args.action == "get":
        for name, value in pc.get_parameters(node, names, args.timeout):
            print(f"{name}: {NOT_SET if value is None else repr(value)}")
    elif args.action == "describe":
        for d in pc.describe_parameters(node, names, args.timeout):
            print(f"{d.name}: {d.type}{', read-only' if d.read_only else ', live'}"
                  f"{'; ' + d.constraints if d.constraints else ''}\n    {d.description}")
    else:
        ok, reason = pc.set_parameter(node, names[0], names[1], args.timeout)
        print(f"{node} {names[0]} = {names[1]}: {'applied' if ok else 'refused: ' + reason}")
        return 0 if ok else 1
    return 0
