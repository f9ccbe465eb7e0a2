"""The bare rclpy ping-pong partner of bench/bench_controller.py: echo each /joint_states message on /bench_echo.

Same QoS as feedforward_controller (subscription depth 10, publisher depth 10, reliable, volatile), same executor
(rclpy's SingleThreadedExecutor, as nodes._common.make_executor), no other work: the floor of one DDS round trip
between two Python processes. Run as ``python bench/_echo.py``; stops on SIGINT.
"""

from __future__ import annotations

import signal

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import JointState


def main() -> None:
    rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    node = Node("bench_echo")
    pub = node.create_publisher(JointState, "/bench_echo", 10)
    node.create_subscription(JointState, "/joint_states", pub.publish, 10)
    ex = SingleThreadedExecutor()
    ex.add_node(node)
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        ex.spin_once(timeout_sec=0.05)
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
