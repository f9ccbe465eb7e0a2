"""A running node's parameters from a short-lived client, for ``deadzone-id param`` (what ``ros2 param list|get|set|
describe`` does, which a pip install lacks).

Through rclpy's own :class:`rclpy.parameter_client.AsyncParameterClient`, in a context of its own
(:class:`~deadzone_id_ros.nodes.graph_client._Client`), in the environment's ROS_DOMAIN_ID. A value is YAML text,
typed by :func:`typed_value` after the parameter's type now: ``1`` for a float parameter is 1.0, ``2.0`` for an integer
one is 2, ``1e-3`` is a float (YAML 1.1 reads it as text), a list of numbers that mixes integers and floats is a list
of floats, and anything for a string parameter is that string. Each request is sent again once if it is not
answered within half the timeout (a request sent while the reply reader is still matching can be lost; setting the
same value twice is harmless; ``graph_client._Client.call``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import DeadzoneIdError
from .graph_client import GraphUnreachable, _Client

if TYPE_CHECKING:
    from rclpy.parameter_client import AsyncParameterClient

__all__ = ["ParameterDescription", "ParameterError", "describe_parameters", "get_parameters", "list_parameters",
           "set_parameter", "typed_value"]

#: a parameter value as Python gives it
Value = bool | int | float | str | list


class ParameterError(DeadzoneIdError):
    """A parameter the node does not declare, a value that is no parameter value, or a node name that is invalid."""


@dataclass(frozen=True)
class ParameterDescription:
    """What a node says of one of its parameters (rcl_interfaces/ParameterDescriptor), as plain data.

    Attributes:
        name: the parameter.  type: its type's name ("STRING", "DOUBLE_ARRAY", ...; a dynamically typed one's value
            type now with " (dynamic)", or "dynamic, not set").
        description: the node's text.  read_only: True when it cannot change at run time.
        constraints: the allowed values or range as text ("one of: a, b", "[lo, hi]"), "" when none.
    """

    name: str
    type: str
    description: str
    read_only: bool
    constraints: str


def typed_value(name: str, text: str, current: str) -> Value:
    """The value of the YAML text ``text`` for the parameter ``name`` whose type is ``current`` now (a
    rcl_interfaces ParameterType name: "DOUBLE", "INTEGER_ARRAY", "STRING", "NOT_SET", ...).

    Raises:
        ParameterError: ``text`` is not a number, true/false, a string or a list of one of them (a mapping, a date),
            or a list that mixes numbers with strings.
    """
    import yaml

    if current == "STRING":
        return text
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        value = text
    if value is None:
        value = text
    if current == "STRING_ARRAY" and isinstance(value, list):
        return [v if isinstance(v, str) else str(v) for v in value]
    value = [_number(v) for v in value] if isinstance(value, list) else _number(value)
    bad = ParameterError(f"{name} = {text!r} is not a parameter value: give a number, true or false, a string, or a "
                         "list of one of these in brackets (\"[1.0, 2.0]\")")
    if isinstance(value, list):
        if not value:
            raise ParameterError(f"{name} = {text!r}: an empty list has no type; give its values")
        if all(isinstance(v, bool) for v in value) or all(isinstance(v, str) for v in value):
            return value
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            raise bad
        if current == "INTEGER_ARRAY" and all(float(v).is_integer() for v in value):
            return [int(v) for v in value]
        if current == "DOUBLE_ARRAY" or any(isinstance(v, float) for v in value):
            return [float(v) for v in value]
        return value
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int):
        return float(value) if current == "DOUBLE" else value
    if isinstance(value, float):
        return int(value) if current == "INTEGER" and value.is_integer() else value
    raise bad


def _number(value: object) -> object:
    """A float for text that Python reads as one and YAML 1.1 does not (``1e-3``, ``inf``); else ``value``."""
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def _parameter_client(c: _Client, node: str, timeout: float) -> AsyncParameterClient:
    """rclpy's parameter client of ``node``, once its services are matched.

    Raises:
        ParameterError: ``node`` is not a valid node name.  GraphUnreachable: no services within ``timeout``.
    """
    from rclpy.exceptions import InvalidServiceNameException, InvalidTopicNameException
    from rclpy.parameter_client import AsyncParameterClient

    try:
        client = AsyncParameterClient(c.node, node)
    except (InvalidServiceNameException, InvalidTopicNameException) as err:
        raise ParameterError(f"--node {node!r} is not a valid node name: {err}") from None
    if not c.spin_until(client.services_are_ready, timeout):
        raise GraphUnreachable(f"no parameter services of {node} within {timeout:g} s: is the node running, under "
                               "this name, in this ROS_DOMAIN_ID and discovery range? (`deadzone-id status` lists "
                               "the nodes that publish diagnostics)")
    return client


def _declared(c: _Client, client: AsyncParameterClient, node: str, timeout: float) -> list[str]:
    """The parameter names ``node`` declares, sorted."""
    return sorted(c.call(client.list_parameters, f"{node}/list_parameters", timeout).result.names)


def _check_declared(names: list[str], declared: list[str], node: str) -> None:
    """ParameterError naming the first of ``names`` that is not in ``declared``."""
    missing = [n for n in names if n not in declared]
    if missing:
        raise ParameterError(f"{node} has no parameter {missing[0]!r} (`deadzone-id param --node {node} list` lists "
                             f"its {len(declared)})")


def _types(c: _Client, client: AsyncParameterClient, node: str, names: list[str], timeout: float) -> list[str]:
    """The type names of ``names``' values now ("DOUBLE", "NOT_SET", ...)."""
    from rclpy.parameter import Parameter

    response = c.call(lambda: client.get_parameter_types(names), f"{node}/get_parameter_types", timeout)
    return [Parameter.Type(t).name for t in response.types]


def list_parameters(node: str, timeout: float = 10.0) -> list[str]:
    """The names of the parameters ``node`` (fully qualified, e.g. ``/feedforward_controller``) declares, sorted.

    Raises:
        GraphUnreachable: the node's parameter services did not appear or answer within ``timeout`` [s].
        ParameterError: ``node`` is not a valid node name.
    """
    with _Client("deadzone_id_param") as c:
        return _declared(c, _parameter_client(c, node, timeout), node, timeout)


def get_parameters(node: str, names: list[str], timeout: float = 10.0) -> list[tuple[str, object]]:
    """The values of ``names`` on ``node``: (name, value) in order, the value a Python bool, int, float, str or list
    (None: declared without a value).

    Raises:
        GraphUnreachable, ParameterError: as :func:`list_parameters`; ParameterError also for a name the node does
            not declare.
    """
    from rclpy.parameter import parameter_value_to_python

    with _Client("deadzone_id_param") as c:
        client = _parameter_client(c, node, timeout)
        _check_declared(names, _declared(c, client, node, timeout), node)
        response = c.call(lambda: client.get_parameters(names), f"{node}/get_parameters", timeout)
        values: list[object] = [parameter_value_to_python(v) for v in response.values]
    return [(n, v.tolist() if hasattr(v, "tolist") else list(v) if isinstance(v, tuple) else v)  # arrays as lists
            for n, v in zip(names, values)]


def set_parameter(node: str, name: str, text: str, timeout: float = 10.0) -> tuple[bool, str]:
    """Set ``name`` on ``node`` to the value of the YAML text ``text`` (typed by :func:`typed_value`).

    Returns:
        (successful, the reason when the node or rclpy refused it).

    Raises:
        GraphUnreachable: as :func:`list_parameters`.
        ParameterError: a name the node does not declare, or a text that is no parameter value.
    """
    from rclpy.parameter import Parameter

    with _Client("deadzone_id_param") as c:
        client = _parameter_client(c, node, timeout)
        _check_declared([name], _declared(c, client, node, timeout), node)
        value = typed_value(name, text, _types(c, client, node, [name], timeout)[0])
        msg = Parameter(name, value=value).to_parameter_msg()
        response = c.call(lambda: client.set_parameters([msg]), f"{node}/set_parameters", timeout)
        result = response.results[0]
        return bool(result.successful), str(result.reason)


def describe_parameters(node: str, names: list[str], timeout: float = 10.0) -> list[ParameterDescription]:
    """What ``node`` says of ``names``: type, description, read-only flag and allowed values or range.

    Raises:
        GraphUnreachable, ParameterError: as :func:`get_parameters`.
    """
    from rclpy.parameter import Parameter

    with _Client("deadzone_id_param") as c:
        client = _parameter_client(c, node, timeout)
        _check_declared(names, _declared(c, client, node, timeout), node)
        response = c.call(lambda: client.describe_parameters(names), f"{node}/describe_parameters", timeout)
        now = _types(c, client, node, names, timeout)
    out = []
    for name, d, current in zip(names, response.descriptors, now):
        ranges = [f"[{r.from_value:g}, {r.to_value:g}]" for r in (*d.floating_point_range, *d.integer_range)]
        constraints = "; ".join([t for t in (d.additional_constraints,) if t] + ranges)
        kind = (Parameter.Type(d.type).name if not d.dynamic_typing else "dynamic, not set" if current == "NOT_SET"
                else f"{current} (dynamic)")
        out.append(ParameterDescription(name=name, type=kind, description=d.description,
                                        read_only=bool(d.read_only), constraints=constraints))
    return out
