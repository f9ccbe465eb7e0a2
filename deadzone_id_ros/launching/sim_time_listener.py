"""A background listener of a graph's simulated time, in a ROS domain of the caller's choice, for waits on lockstep
runs.

:func:`deadzone_id_ros.launching.live.live_run` starts its nodes in a ROS domain of their own and follows their
simulated time through this listener, so that it can tell a slow run (simulated time advancing, however slowly) from
a stalled one. It reads the header stamps of the controller's ``/diagnostics`` (diagnostic_msgs/DiagnosticArray,
stamped with the node's clock, which under ``use_sim_time`` is sim_arm's ``/clock``), a few messages per simulated
second. It does not subscribe ``/clock`` itself: a Python subscriber taking 1 kHz /clock in the launching process
made every lockstep run stall within seconds on the 2-core machine (measured: the controller stopped receiving
/joint_states; the same runs without the subscriber finished).
"""

from __future__ import annotations

import threading

__all__ = ["SimTimeListener"]


class SimTimeListener:
    """Follows the newest header stamp on ``topic`` in ROS domain ``domain_id`` from a thread; a context manager.

    Attributes (read from any thread):
        latest_ns: the newest stamp received [ns] (simulated time under use_sim_time), or None before the first.
        messages: how many messages arrived.

    Args:
        domain_id: the ROS_DOMAIN_ID of the graph to follow (0..232).
        topic: a diagnostic_msgs/DiagnosticArray topic whose stamps follow the graph's clock.
    """

    def __init__(self, domain_id: int, topic: str = "/diagnostics") -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.signals import SignalHandlerOptions

        self.latest_ns: int | None = None
        self.messages = 0
        self._rclpy = rclpy
        self._context = rclpy.Context()
        # no rclpy signal handlers: Ctrl-C and SIGTERM stay the caller's (a KeyboardInterrupt that cleans up)
        rclpy.init(context=self._context, domain_id=int(domain_id), signal_handler_options=SignalHandlerOptions.NO)
        self._node = rclpy.create_node("deadzone_id_sim_time_listener", context=self._context)
        self._node.create_subscription(DiagnosticArray, topic, self._on_message, 10)
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self._node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._spin, name="sim-time-listener", daemon=True)
        self._thread.start()

    def _on_message(self, msg) -> None:  # noqa: ANN001 - diagnostic_msgs/DiagnosticArray
        t = int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)
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

    def __enter__(self) -> SimTimeListener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
