"""A short-lived rclpy client of a running graph, for ``deadzone-id record``, ``status`` and ``param``.

A pip install has no ``ros2`` command line; these calls replace ``ros2 service call /recorder/start
std_srvs/srv/Trigger``, ``ros2 topic echo /diagnostics`` and ``ros2 param list|get|set|describe`` (the last through
rclpy's own :class:`rclpy.parameter_client.AsyncParameterClient`, values typed from YAML text as ``ros2 param set``
types them). The client node lives in its own rclpy context (created
and shut down by each call, so it can be used from any program without touching rclpy's default context) and uses
the environment's ROS_DOMAIN_ID / ROS_AUTOMATIC_DISCOVERY_RANGE like any node. The formatting of what comes back
is ROS-free (:mod:`deadzone_id_ros.cli.status`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import DeadzoneIdError
from ..stamps import stamp_to_s

if TYPE_CHECKING:
    from rclpy.parameter_client import AsyncParameterClient
    from rclpy.task import Future

R = TypeVar("R")

__all__ = ["DiagnosticReport", "GraphUnreachable", "ParameterDescription", "call_trigger", "collect_diagnostics",
           "describe_parameters", "get_parameters", "list_parameters", "set_parameter"]


class GraphUnreachable(DeadzoneIdError):
    """No answer from the graph within the timeout (service not found, no message on a topic)."""


@dataclass(frozen=True)
class DiagnosticReport:
    """One DiagnosticStatus, as plain data.

    Attributes:
        node: the status's ``hardware_id`` (this project's nodes put their fully qualified name there), else its name.
        name: status name.  level: "OK", "WARN", "ERROR" or "STALE".  message: status message.
        values: (key, value) pairs in order.  stamp: the array's header stamp [s] (node clock).
    """

    node: str
    name: str
    level: str
    message: str
    values: tuple[tuple[str, str], ...]
    stamp: float


_LEVELS = {0: "OK", 1: "WARN", 2: "ERROR", 3: "STALE"}


def _level(value: bytes | int) -> str:
    """DiagnosticStatus.level (a one-byte ``bytes`` in rclpy) as its name."""
    number = value[0] if isinstance(value, (bytes, bytearray)) else int(value)
    return _LEVELS.get(number, str(number))


class _Client:
    """An rclpy context with one node and an executor; closed on exit."""

    def __init__(self, name: str) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        self.rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_until(self, done, timeout: float) -> bool:  # noqa: ANN001 - a () -> bool
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if done():
                return True
            self.executor.spin_once(timeout_sec=0.02)
        return bool(done())

    def __enter__(self) -> _Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.executor.shutdown(timeout_sec=0.5)
        self.node.destroy_node()
        self.rclpy.try_shutdown(context=self.context)


def call_trigger(service: str, timeout: float = 10.0) -> tuple[bool, str]:
    """Call a std_srvs/Trigger ``service`` (e.g. ``/recorder/start``).

    Args:
        service: the fully qualified service name.
        timeout: seconds to wait for the service to appear and for each of two attempts to answer [s] (> 0).

    Returns:
        (success, message) of the response.

    Raises:
        GraphUnreachable: the service did not appear, or did not answer, within ``timeout``.
    """
    from std_srvs.srv import Trigger

    with _Client("deadzone_id_cli") as c:
        client: Any = c.node.create_client(Trigger, service)
        if not c.spin_until(client.service_is_ready, timeout):
            raise GraphUnreachable(f"service {service} (std_srvs/Trigger) not found within {timeout:g} s: is the "
                                   "recorder running, in this ROS_DOMAIN_ID and discovery range?")
        for _ in range(2):  # a request sent while the reader is still matching can be lost: withdraw, send again
            future = client.call_async(Trigger.Request())
            if c.spin_until(future.done, timeout / 2):
                response: Any = future.result()
                return bool(response.success), str(response.message)
            client.remove_pending_request(future)
        raise GraphUnreachable(f"service {service} did not answer within {timeout:g} s")


def collect_diagnostics(topic: str = "/diagnostics", timeout: float = 5.0,
                        settle: float = 1.5) -> list[DiagnosticReport]:
    """Listen to ``topic`` (diagnostic_msgs/DiagnosticArray) and return the latest status of each node.

    Args:
        topic: the diagnostics topic.
        timeout: wait at most this long for a first message [s].
        settle: after the first message, keep listening this long so every publishing node is heard [s].

    Returns:
        the latest :class:`DiagnosticReport` per (node, status name), sorted by node and name.

    Raises:
        GraphUnreachable: no message within ``timeout``.
    """
    from diagnostic_msgs.msg import DiagnosticArray

    latest: dict[tuple[str, str], DiagnosticReport] = {}

    def on_msg(msg: DiagnosticArray) -> None:
        stamp = stamp_to_s(msg.header.stamp)
        for st in msg.status:
            node = st.hardware_id or st.name
            latest[(node, st.name)] = DiagnosticReport(
                node=node, name=st.name, level=_level(st.level), message=st.message,
                values=tuple((kv.key, kv.value) for kv in st.values), stamp=stamp)

    with _Client("deadzone_id_status") as c:
        c.node.create_subscription(DiagnosticArray, topic, on_msg, 10)
        if not c.spin_until(lambda: bool(latest), timeout):
            raise GraphUnreachable(f"no DiagnosticArray on {topic} within {timeout:g} s: no node is publishing "
                                   "diagnostics (is the controller running, in this ROS_DOMAIN_ID and discovery "
                                   "range?)")
        c.spin_until(lambda: False, settle)
    return [latest[k] for k in sorted(latest)]


@dataclass(frozen=True)
class ParameterDescription:
    """What a node says of one of its parameters (rcl_interfaces/ParameterDescriptor), as plain data.

    Attributes:
        name: the parameter.  type: its type's name ("STRING", "DOUBLE_ARRAY", ...; "NOT_SET": not declared).
        description: the node's text.  read_only: True when it cannot change at run time.
        constraints: the allowed values or range as text ("one of: a, b", "[lo, hi]"), "" when none.
    """

    name: str
    type: str
    description: str
    read_only: bool
    constraints: str


def _parameter_client(c: _Client, node: str, timeout: float) -> AsyncParameterClient:
    """rclpy's parameter client of ``node``, once its services are matched; GraphUnreachable after ``timeout``."""
    from rclpy.parameter_client import AsyncParameterClient

    client = AsyncParameterClient(c.node, node)
    if not c.spin_until(client.services_are_ready, timeout):
        raise GraphUnreachable(f"no parameter services of {node} within {timeout:g} s: is the node running, under "
                               "this name, in this ROS_DOMAIN_ID and discovery range? (`deadzone-id status` lists "
                               "the nodes that publish diagnostics)")
    return client


def _answer(c: _Client, future: Future[R], what: str, timeout: float) -> R:
    """The response of ``future``; GraphUnreachable when it does not come within ``timeout``."""
    result = future.result() if c.spin_until(future.done, timeout) else None
    if result is None:
        raise GraphUnreachable(f"{what} did not answer within {timeout:g} s")
    return result


def _declared(c: _Client, client: AsyncParameterClient, node: str, timeout: float) -> list[str]:
    """The parameter names ``node`` declares, sorted."""
    return sorted(_answer(c, client.list_parameters(), f"{node}/list_parameters", timeout).result.names)


def list_parameters(node: str, timeout: float = 10.0) -> list[str]:
    """The names of the parameters ``node`` (fully qualified, e.g. ``/feedforward_controller``) declares, sorted.

    Raises:
        GraphUnreachable: the node's parameter services did not appear or answer within ``timeout`` [s].
    """
    with _Client("deadzone_id_param") as c:
        return _declared(c, _parameter_client(c, node, timeout), node, timeout)


def get_parameters(node: str, names: list[str], timeout: float = 10.0) -> list[tuple[str, object]]:
    """The values of ``names`` on ``node``: (name, value) in order, the value a Python bool, int, float, str or list
    (None: declared without a value).

    Raises:
        GraphUnreachable: as :func:`list_parameters`.
        KeyError: a name the node does not declare (the message names it).
    """
    from rclpy.parameter import parameter_value_to_python

    with _Client("deadzone_id_param") as c:
        client = _parameter_client(c, node, timeout)
        _check_declared(names, _declared(c, client, node, timeout), node)
        response = _answer(c, client.get_parameters(list(names)), f"{node}/get_parameters", timeout)
        values: list[object] = [parameter_value_to_python(v) for v in response.values]
    return [(n, v.tolist() if hasattr(v, "tolist") else list(v) if isinstance(v, tuple) else v)  # arrays as lists
            for n, v in zip(names, values)]


def _check_declared(names: list[str], declared: list[str], node: str) -> None:
    """KeyError naming the first of ``names`` that is not in ``declared``."""
    missing = [n for n in names if n not in declared]
    if missing:
        raise KeyError(f"{node} has no parameter {missing[0]!r} (`deadzone-id param --node {node} list` lists "
                       f"its {len(declared)})")


def set_parameter(node: str, name: str, text: str, timeout: float = 10.0) -> tuple[bool, str]:
    """Set ``name`` on ``node`` to the value ``text`` (YAML: ``1`` an integer, ``1.5`` a float, ``[1.0, 2.0]`` a
    list, ``measured`` a string; typed as ``ros2 param set`` types it).

    Returns:
        (successful, the node's reason when it refused).

    Raises:
        GraphUnreachable: as :func:`list_parameters`.
        KeyError: a name the node does not declare.
    """
    from rcl_interfaces.msg import Parameter as ParameterMsg
    from rclpy.parameter import get_parameter_value

    with _Client("deadzone_id_param") as c:
        client = _parameter_client(c, node, timeout)
        _check_declared([name], _declared(c, client, node, timeout), node)
        msg = ParameterMsg(name=name, value=get_parameter_value(text))
        response = _answer(c, client.set_parameters([msg]), f"{node}/set_parameters", timeout)
        result = response.results[0]
        return bool(result.successful), str(result.reason)


def describe_parameters(node: str, names: list[str], timeout: float = 10.0) -> list[ParameterDescription]:
    """What ``node`` says of ``names``: type (a dynamically typed parameter's: its value's now, marked "dynamic"),
    description, read-only flag and allowed values or range.

    Raises:
        GraphUnreachable: as :func:`list_parameters`.
        KeyError: a name the node does not declare.
    """
    from rclpy.parameter import Parameter

    with _Client("deadzone_id_param") as c:
        client = _parameter_client(c, node, timeout)
        _check_declared(names, _declared(c, client, node, timeout), node)
        response = _answer(c, client.describe_parameters(list(names)), f"{node}/describe_parameters", timeout)
        types = _answer(c, client.get_parameter_types(list(names)), f"{node}/get_parameter_types", timeout).types
    out = []
    for name, d, now in zip(names, response.descriptors, types):
        ranges = [f"[{r.from_value:g}, {r.to_value:g}]" for r in (*d.floating_point_range, *d.integer_range)]
        constraints = "; ".join([t for t in (d.additional_constraints,) if t] + ranges)
        kind = (Parameter.Type(d.type).name if not d.dynamic_typing else "dynamic, not set"
                if now == Parameter.Type.NOT_SET.value else f"{Parameter.Type(now).name} (dynamic)")
        out.append(ParameterDescription(name=name, type=kind, description=d.description,
                                        read_only=bool(d.read_only), constraints=constraints))
    return out
