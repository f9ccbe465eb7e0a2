"""A background listener of ``/clock`` in a ROS domain of the caller's choice, for waits on lockstep runs.

:func:`deadzone_id_ros.launching.live.live_run` starts its nodes in a ROS domain of their own and follows their
simulated time through this listener, so that it can tell a slow run (simulated time advancing, however slowly) from
a stalled one. The subscription is best effort: it never holds the simulator back (a reliable /clock publisher
matches it).
"""

from __future__ import annotations

import threading

__all__ = ["ClockListener"]


class ClockListener:
    """Follows ``/clock`` (rosgraph_msgs/Clock) in ROS domain ``domain_id`` from a thread; a context manager.

    Attributes (read from any thread):
        latest_ns: the newest simulated time received [ns], or None before the first message.
        messages: how many /clock messages arrived.

    Args:
        domain_id: the ROS_DOMAIN_ID of the graph to follow (0..232).
        topic: the clock topic.
    """

    def __init__(self, domain_id: int, topic: str = "/clock") -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import qos_profile_sensor_data
        from rclpy.signals import SignalHandlerOptions
        from rosgraph_msgs.msg import Clock

        self.latest_ns: int | None = None
        self.messages = 0
        self._rclpy = rclpy
        self._context = rclpy.Context()
        # no rclpy signal handlers: Ctrl-C and SIGTERM stay the caller's (a KeyboardInterrupt that cleans up)
        rclpy.init(context=self._context, domain_id=int(domain_id), signal_handler_options=SignalHandlerOptions.NO)
        self._node = rclpy.create_node("deadzone_id_clock_listener", context=self._context)
        self._node.create_subscription(Clock, topic, self._on_clock, qos_profile_sensor_data)
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self._node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, name="clock-listener", daemon=True)
        self._thread.start()

    def _on_clock(self, msg) -> None:  # noqa: ANN001 - rosgraph_msgs/Clock
        t = int(msg.clock.sec) * 1_000_000_000 + int(msg.clock.nanosec)
        self.messages += 1
        if self.latest_ns is None or t > self.latest_ns:
            self.latest_ns = t

    def _spin(self) -> None:
        from rclpy.executors import ExternalShutdownException

        while not self._stop.is_set():
            try:
                self._executor.spin_once(timeout_sec=0.05)
            except ExternalShutdownException:
                return

    def close(self) -> None:
        """Stop the thread and leave the ROS domain (safe to call twice)."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._thread.join(2.0)
        self._executor.shutdown(timeout_sec=0.5)
        self._node.destroy_node()
        self._rclpy.try_shutdown(context=self._context)

    def __enter__(self) -> ClockListener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
