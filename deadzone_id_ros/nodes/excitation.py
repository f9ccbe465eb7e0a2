"""excitation: publishes a seeded excitation trajectory (trajectory_msgs/JointTrajectory) for data collection.

Thin rclpy adapter around :func:`deadzone_id_ros.control.generate_excitation` (Fourier series per joint with hold
and slow phases, within the URDF limits). With ``center_from_start`` it waits for the first ``/joint_states`` and
centres the motion on that position (joints mapped by name). The trajectory starts ``start_delay`` seconds later
(the controller moves smoothly from its current reference to the first point, which is at rest) and is published
on ``/feedforward_controller/reference`` as overlapping windows: every ``publish_period`` a JointTrajectory whose
header.stamp is the trajectory start and whose points (position, velocity, acceleration, every ``sample_period``)
cover the next ``horizon`` seconds. After the end, the last window is published once more and the node idles; when
its clock passes the end of the motion it logs "excitation: motion finished" once (what a live run waits for) and,
with ``exit_when_finished``, exits with status 0 (a launch that marks it ``on_exit: shutdown`` then ends).

Parameters: config/excitation.yaml (:class:`ExcitationConfig` + :class:`ExcitationNodeConfig`, the latter and the file
loader in :mod:`deadzone_id_ros.control.excitation_params`). Time comes from the
node clock (``use_sim_time`` respected), the same clock as the controller's stamps; under simulated time the start
time is fixed only after the first /clock message (:class:`._common.SimClockWatch`), never at time 0.
"""

from __future__ import annotations

import sys

import numpy as np
from builtin_interfaces.msg import Duration, Time
from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..control import ExcitationConfig, TrajectoryPoints, generate_excitation
from ..control.excitation_params import ExcitationNodeConfig
from ..stamps import ns_to_s, ns_to_stamp, s_to_ns
from ._common import SimClockWatch, declare_dataclass_parameters, run_node

__all__ = ["ExcitationNode", "REFERENCE_TOPIC", "main", "reference_message", "window_rows"]

REFERENCE_TOPIC = "/feedforward_controller/reference"


def window_rows(t: np.ndarray, rel: float, sample_period: float, horizon: float) -> range:
    """The rows of a trajectory with times ``t`` (K,) [s] that one reference window at ``rel`` [s] publishes: from
    the point before ``rel - sample_period`` to ``rel + horizon`` [s], at least two."""
    lo = max(int(np.searchsorted(t, rel - sample_period)) - 1, 0)
    hi = max(int(np.searchsorted(t, rel + horizon, side="right")), lo + 2)
    return range(lo, min(hi, len(t)))


def reference_message(points: TrajectoryPoints, t0_ns: int, rows: range | None = None) -> JointTrajectory:
    """The JointTrajectory of ``points`` (all of them, or ``rows``) starting at ``t0_ns`` [ns] (its header stamp;
    each point's time_from_start is its time in ``points``), with velocities and accelerations where ``points``
    has them: the message the controller's ``~/reference`` takes."""
    msg = JointTrajectory()
    sec, nanosec = ns_to_stamp(t0_ns)
    msg.header.stamp = Time(sec=sec, nanosec=nanosec)
    msg.joint_names = list(points.joint_names)
    velocity, acceleration = points.velocity, points.acceleration
    for k in rows if rows is not None else range(len(points.t)):
        p = JointTrajectoryPoint()
        p.positions = points.position[k].tolist()
        if velocity is not None:
            p.velocities = velocity[k].tolist()
        if acceleration is not None:
            p.accelerations = acceleration[k].tolist()
        sec, nanosec = ns_to_stamp(s_to_ns(points.t[k]))
        p.time_from_start = Duration(sec=sec, nanosec=nanosec)
        msg.points.append(p)
    return msg


class ExcitationNode(Node):
    """rclpy adapter publishing the excitation as JointTrajectory windows.

    Raises:
        ConfigError: a parameter value is invalid (names the parameter).
        RobotDescriptionError, FileNotFoundError: the URDF cannot be read or lacks a joint.
    """

    #: [s] /clock (1 kHz from a simulator) and /joint_states are taken in batches (:func:`._common.take_pending`):
    #: the node needs the newest time every publish_period, not a wake-up per simulated millisecond
    spin_batch_period = 0.01

    def __init__(self, **kwargs) -> None:
        super().__init__("excitation", **kwargs)
        self.config: ExcitationConfig = declare_dataclass_parameters(
            self, ExcitationConfig, read_only=("joint_names", "urdf_path")
        )
        self.node_config: ExcitationNodeConfig = declare_dataclass_parameters(self, ExcitationNodeConfig)
        self.points: TrajectoryPoints | None = None
        self._t0_ns = 0
        self._finished = False  # the last window is out
        self._motion_done = False  # the node clock has passed the end of the motion
        self.done = False  # exit_when_finished and the motion is finished: main() stops spinning
        self._pending_start: tuple[np.ndarray | None] | None = None  # a start waiting for the subscribers
        self._waiting_logged = False
        self._pub = self.create_publisher(JointTrajectory, REFERENCE_TOPIC, 10)
        self._state_sub = None
        self.clock_watch = SimClockWatch(self)
        if not self.clock_watch.ready:
            self.get_logger().info("excitation: waiting for the first /clock message (use_sim_time) before starting")
        if self.config.center_from_start:
            self._state_sub = self.create_subscription(JointState, "/joint_states", self._on_joint_state, 10)
            self.get_logger().info("excitation: waiting for /joint_states to centre the motion")
        else:
            self.clock_watch.when_ready(lambda now_ns: self._start(None, now_ns))
        self._timer = self.create_timer(self.node_config.publish_period, self._on_timer)

    def _on_joint_state(self, msg: JointState) -> None:
        if self.points is not None or self._state_sub is None:
            return
        names = list(msg.name)
        missing = [j for j in self.config.joint_names if j not in names]
        if missing or len(msg.position) != len(names):
            self.get_logger().error(
                f"/joint_states lacks joint(s) {missing} or positions (names {names}); cannot start",
                throttle_duration_sec=2.0,
            )
            return
        start = np.array([msg.position[names.index(j)] for j in self.config.joint_names])
        if self._state_sub is not None:
            self.destroy_subscription(self._state_sub)
        self._state_sub = None
        self.clock_watch.when_ready(lambda now_ns: self._start(start, now_ns))

    def _subscribers_ready(self) -> bool:
        """True once the reference topic has ``wait_for_subscribers`` subscribers (logged once while it waits)."""
        want, have = self.node_config.wait_for_subscribers, self._pub.get_subscription_count()
        if have >= want:
            return True
        if not self._waiting_logged:
            self._waiting_logged = True
            self.get_logger().info(f"excitation: waiting for {want} subscriber(s) of {REFERENCE_TOPIC} (have {have}) "
                                   "before starting")
        return False

    def _start(self, start: np.ndarray | None, clock_ready_ns: int) -> None:
        """Generate the trajectory, then fix its start at the node clock's time *after* generating + ``start_delay``.

        ``clock_ready_ns`` [ns] is when the clock became ready (the first /clock under simulated time); the start is
        not taken from it: generating a long excitation takes a noticeable wall time, and a simulator in lockstep
        runs its clock several times faster than the wall, so a start fixed before generating lay seconds in the
        past when the first window went out, and the controller joined the trajectory seconds into it (issue 22
        item 9). Taken after, the first window starts at the trajectory's beginning.
        """
        del clock_ready_ns
        if not self._subscribers_ready():  # the timer tries again until they are matched
            self._pending_start = (start,)
            return
        self._pending_start = None
        self.points = generate_excitation(self.config, start=None if start is None else start.tolist())
        now_ns = self.get_clock().now().nanoseconds
        self._t0_ns = now_ns + s_to_ns(self.node_config.start_delay)
        self.get_logger().info(
            f"excitation: seed {self.config.seed}, {self.config.duration:g} s, centre "
            f"{np.round(self.points.position[0], 4).tolist()} rad, starting in {self.node_config.start_delay:g} s"
        )
        self._publish_window(now_ns)

    def _publish_window(self, now_ns: int) -> None:
        pts = self.points
        assert pts is not None
        if pts.velocity is None or pts.acceleration is None:
            raise ValueError("excitation trajectory without velocity/acceleration")
        rows = window_rows(pts.t, ns_to_s(now_ns - self._t0_ns), self.config.sample_period, self.node_config.horizon)
        self._pub.publish(reference_message(pts, self._t0_ns, rows))
        if rows.stop >= len(pts.t) and not self._finished:
            self._finished = True
            self.get_logger().info("excitation: last window published; the controller holds the final position")

    def _on_timer(self) -> None:
        if self.points is None and self._pending_start is not None:
            self._start(self._pending_start[0], self.get_clock().now().nanoseconds)
        if self.points is None or self._motion_done:
            return
        now_ns = self.get_clock().now().nanoseconds
        if not self._finished:
            self._publish_window(now_ns)
        elif now_ns >= self._t0_ns + s_to_ns(float(self.points.t[-1])):
            self._motion_done = True
            self.get_logger().info(f"excitation: motion finished (node time {ns_to_s(now_ns):.3f} s)"
                                   + ("; exiting (exit_when_finished)" if self.node_config.exit_when_finished else ""))
            self.done = self.node_config.exit_when_finished


def main(args=None) -> int:
    """Run the excitation node until SIGINT/SIGTERM (or, with ``exit_when_finished``, the end of the motion).
    Returns 0, or 2 on a configuration error (message, no traceback)."""
    return run_node("excitation", ExcitationNode, args, until=lambda node: node.done)


if __name__ == "__main__":
    sys.exit(main())
