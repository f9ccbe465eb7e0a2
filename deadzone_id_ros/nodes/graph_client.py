"""A short-lived rclpy client of a running graph, for ``deadzone-id record`` and ``deadzone-id status`` (and
``deadzone-id param``: :mod:`.param_client`).

A pip install has no ``ros2`` command line; these two calls replace ``ros2 service call /recorder/start
std_srvs/srv/Trigger`` and ``ros2 topic echo /diagnostics``. The client node lives in its own rclpy context (created
and shut down by each call, so it can be used from any program without touching rclpy's default context) and uses
the environment's ROS_DOMAIN_ID / ROS_AUTOMATIC_DISCOVERY_RANGE like any node. The formatting of what comes back
is ROS-free (:mod:`deadzone_id_ros.cli.status`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import DeadzoneIdError
from ..stamps import stamp_to_s

if TYPE_CHECKING:
    from rclpy.task import Future

__all__ = ["DiagnosticReport", "GraphUnreachable", "call_trigger", "collect_diagnostics"]


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

    def call(self, send: Callable[[], Future], what: str, timeout: float,
             withdraw: Callable[[Future], None] | None = None) -> Any:
        """The response of the request ``send()`` makes, sent again once when none came within ``timeout`` / 2 (a
        request sent while the reply reader is still matching can be lost); ``withdraw`` drops an unanswered one.

        Raises:
            GraphUnreachable: no answer to either (``what`` names the service).
        """
        for _ in range(2):
            future = send()
            if self.spin_until(future.done, timeout / 2) and future.result() is not None:
                return future.result()
            if withdraw is not None:
                withdraw(future)
        raise GraphUnreachable(f"{what} did not answer within {timeout:g} s")

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
        response = c.call(lambda: client.call_async(Trigger.Request()), f"service {service}", timeout,
                          withdraw=client.remove_pending_request)
        return bool(response.success), str(response.message)


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
