"""recorder: records /joint_states, /effort_controller/commands, the reference and any further topics (parameter
``extra_topics``, e.g. a second arm's in launch/teleop_record.launch.yaml) into rosbag2 episodes.

Subscriptions take the serialized messages (``raw=True``) and hand the CDR bytes straight to
:class:`deadzone_id_ros.data.recorder.EpisodeWriter` (rosbags' Writer; MCAP default, sqlite3 on request), so the
node keeps up with 1 kHz JointState plus 1 kHz commands without deserializing. Messages are taken in batches, in
order of arrival (:attr:`RecorderNode.spin_batch_period`). Log time = when the message reached this process, however
late the node takes it: DDS reception time on the system clock, or with ``use_sim_time`` the last /clock that
arrived before it (the node's own deep /clock subscription, so none is skipped; a missing /clock is warned about).
Services (std_srvs/Trigger): ``~/start``, ``~/stop``, ``~/split`` (stop + start without losing a message). Each
episode is its own bag directory under ``output_dir`` with a standard metadata.yaml and an episode.yaml.
SIGINT/SIGTERM close the open episode cleanly, after taking in what had reached the process before
(:meth:`RecorderNode.drain`); a ``kill -9`` loses at most ``flush_period`` seconds, and what was written opens
through the recovery path of :func:`deadzone_id_ros.data.bag.open_bag`.

Parameters: config/recorder.yaml (see :class:`deadzone_id_ros.data.recorder.RecorderConfig`).
"""

from __future__ import annotations

import functools
import importlib
import shutil
import struct
import sys
import time
from pathlib import Path
from typing import Any

from geometry_msgs.msg import WrenchStamped
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.subscription import MessageInfo
from rosgraph_msgs.msg import Clock as ClockMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool, Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from ..data.bag import JOINT_STATE_TYPE, typestore
from ..data.recorder import EpisodeWriter, RecorderConfig
from ..errors import ConfigError, DeadzoneIdError
from ..realtime import RealtimeConfig
from ..stamps import ns_to_s
from ._common import SimClockWatch, declare_dataclass_parameters, run_node, spin_until_shutdown

__all__ = ["RecorderNode", "main", "ros_message_class"]

# rosgraph_msgs/Clock in CDR: builtin_interfaces/Time (int32 sec, uint32 nanosec), after the 4-byte encapsulation
# header whose second byte says the byte order (1: little endian)
_CLOCK_CDR = {True: struct.Struct("<iI"), False: struct.Struct(">iI")}

_ROS_TYPES = {
    "sensor_msgs/msg/JointState": JointState,
    "std_msgs/msg/Float64MultiArray": Float64MultiArray,
    "trajectory_msgs/msg/JointTrajectory": JointTrajectory,
    "std_msgs/msg/Bool": Bool,
    "geometry_msgs/msg/WrenchStamped": WrenchStamped,
}


def ros_message_class(typ: str, where: str) -> type:
    """The rclpy message class of the full type name ``typ`` (``pkg/msg/Name``), for a raw subscription.

    Raises:
        ConfigError: the message package is not installed or has no such message; names ``where`` (the parameter).
    """
    if typ in _ROS_TYPES:
        return _ROS_TYPES[typ]
    package, _, name = typ.partition("/msg/")
    try:
        return getattr(importlib.import_module(f"{package}.msg"), name)
    except (ImportError, AttributeError) as err:
        raise ConfigError(f"{where}: message type {typ!r} cannot be subscribed to: the Python module {package}.msg "
                          f"of this ROS installation has no {name} ({err})") from err


class RecorderNode(Node):
    """rclpy adapter around :class:`EpisodeWriter`.

    Raises:
        ConfigError: a parameter value is invalid (names the parameter).
        DataError: autostart could not create the first episode bag.
    """

    #: [s] messages are taken in batches, in order of arrival (:func:`._common.take_pending`): one wake-up per batch
    #: rather than per message of 1 kHz /joint_states, commands and /clock. A command's log time is still the node
    #: clock as of its arrival. Measured (4 s lockstep run, 2 cores): taken one by one, the recorder used more CPU
    #: than the simulator, and at SCHED_FIFO 48 its wake-ups slowed the lockstep loop by half.
    spin_batch_period = 0.01

    def __init__(self, **kwargs) -> None:
        super().__init__("recorder", **kwargs)
        self.config = declare_dataclass_parameters(
            self, RecorderConfig,
            read_only=("output_dir", "storage", "joint_state_topic", "command_topic", "reference_topic",
                       "external_torque_topic", "contact_topic", "wrench_topic", "band_topic", "extra_topics",
                       "queue_depth",
                       "thread_priority", "lock_memory", "cpu_affinity"),
        )
        cfg = self.config
        self.realtime_config = RealtimeConfig(cfg.thread_priority, cfg.lock_memory, cfg.cpu_affinity)  # run_node
        topics = {self.resolve_topic_name(t): typ for t, typ in cfg.topics().items()}
        if len(topics) < len(cfg.topics()):
            raise ConfigError(f"recorder: two recorded topics resolve to the same name: {list(cfg.topics())} -> "
                              f"{list(topics)}")
        classes = {topic: ros_message_class(typ, f"recorder: parameter extra_topics, {topic}")
                   for topic, typ in topics.items()}
        self.writer = EpisodeWriter(cfg, topics)
        self._joint_state_topic = self.resolve_topic_name(cfg.joint_state_topic)
        self._have_names = False
        self._drain_from_ns: int | None = None  # while draining: system time [ns] when the drain started
        self._drained = 0  # messages taken in by the drain that had arrived before it started
        self._drain_take = 0.0  # time.monotonic() [s] of the drain's last such message
        qos = QoSProfile(depth=cfg.queue_depth, reliability=ReliabilityPolicy.RELIABLE)
        self._sim_time = bool(self.get_parameter("use_sim_time").value)
        self._clock_ns: int | None = None  # use_sim_time: the last /clock taken [ns]
        if self._sim_time:  # every /clock, in arrival order with the recorded topics (rclpy's time source keeps 1)
            self.create_subscription(ClockMsg, "/clock", self._on_clock, qos, raw=True)
        self._recorded_subs = {topic: self.create_subscription(classes[topic], topic, self._callback(topic), qos,
                                                               raw=True) for topic in topics}
        self._heard: set[str] = set()  # recorded topics whose subscription has matched a publisher
        # steady clock: a paused /clock must not hide a publisher that appears
        self._match_timer = self.create_timer(0.1, self._log_matches, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.create_service(Trigger, "~/start", self._trigger(self._start))
        self.create_service(Trigger, "~/stop", self._trigger(self._stop))
        self.create_service(Trigger, "~/split", self._trigger(self._split))
        # flush on the steady clock: with use_sim_time and a paused /clock the data must still reach the disk
        self.create_timer(cfg.flush_period, self.writer.flush, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(
            f"recorder: {cfg.storage} episodes in {cfg.output_dir}, topics {list(topics)}, flush every "
            f"{cfg.flush_period:g} s; services ~/start ~/stop ~/split"
        )
        self.clock_watch = SimClockWatch(self)  # warns when use_sim_time is set and no /clock arrives
        # autostart opens the bag at once, also before /clock (measured: opening it once 1 kHz traffic flows blocked
        # the reliable publishers long enough to stall the demo's lockstep graph); the episode's start time is then
        # fixed at the first /clock (see _start), and states stamped 0 before it are not written (item 4)
        if cfg.autostart:
            self._start()

    def _now_ns(self) -> int:
        return self.get_clock().now().nanoseconds

    def _log_matches(self) -> None:
        """Log once per recorded topic when its subscription first matches a publisher (DDS discovery between two
        processes can take seconds on a busy machine: an episode started before then misses that topic's first
        messages, so the log says from when each topic can be recorded). Stops polling once every topic is heard."""
        new = sorted(t for t, sub in self._recorded_subs.items()
                     if t not in self._heard and sub.get_publisher_count() > 0)
        if new:
            self._heard.update(new)
            waiting = sorted(set(self._recorded_subs) - self._heard)
            self.get_logger().info(f"publisher matched on {', '.join(new)}"
                                   + (f" (none yet on {', '.join(waiting)})" if waiting else ""))
        if len(self._heard) == len(self._recorded_subs):
            self._match_timer.cancel()

    def _on_clock(self, data: bytes, _info: MessageInfo) -> None:
        sec, nanosec = _CLOCK_CDR[bool(data[1] & 1)].unpack_from(data, 4)
        self._clock_ns = sec * 1_000_000_000 + nanosec

    def _log_time(self, info: MessageInfo) -> int:
        """Log time [ns] of a message that reached this process with ``info``: the last /clock taken before it
        (``use_sim_time``; messages are taken in order of arrival), else its DDS reception time (system clock); the
        node clock now when neither is known."""
        if self._sim_time:
            return self._clock_ns if self._clock_ns is not None else self._now_ns()
        return int(info.get("received_timestamp") or 0) or self._now_ns()

    def _callback(self, topic: str):
        write, write_state = self.writer.write, self.writer.write_joint_state
        log_time = self._log_time

        def count(info: MessageInfo) -> None:
            if self._drain_from_ns is not None and int(info.get("received_timestamp") or 0) <= self._drain_from_ns:
                self._drained += 1
                self._drain_take = time.monotonic()

        if topic != self._joint_state_topic:
            def on_message(data: bytes, info: MessageInfo) -> None:
                write(topic, log_time(info), data)
                count(info)

            return on_message

        def on_joint_state(data: bytes, info: MessageInfo) -> None:
            if not self._have_names and self.writer.recording:
                self._have_names = True
                msg: Any = typestore().deserialize_cdr(data, JOINT_STATE_TYPE)  # a sensor_msgs/JointState
                self.writer.set_joint_names(list(msg.name))
            write_state(topic, log_time(info), data)
            count(info)

        return on_joint_state

    def drain(self, limit: float = 2.0, idle: float = 0.1) -> int:
        """Take in the messages that reached this process before the call and still wait in the subscriptions' queues;
        returns how many were taken.

        Called on SIGINT/SIGTERM before the episode is closed. A recorder that runs behind (a busy machine: measured,
        a live run's last 12 ms of reference) would otherwise close with messages that had arrived and were never
        written. Spins until no such message (DDS reception time before the call) has been taken for ``idle`` [s]
        (later ones taken meanwhile are written too), or for at most ``limit`` [s]: below the 5 s a launcher waits
        after SIGINT before SIGTERM. A SIGINT or SIGTERM meanwhile (a second Ctrl-C) ends the drain, not the process.
        """
        from rclpy.executors import SingleThreadedExecutor

        self._drained, self._drain_take, self._drain_from_ns = 0, time.monotonic(), time.time_ns()
        executor = SingleThreadedExecutor(context=self.context)
        deadline = time.monotonic() + limit
        try:  # the loop of every node's main: a SIGINT or SIGTERM meanwhile only ends it
            spin_until_shutdown(self, executor, period=0.02, batch_period=self.spin_batch_period,
                                until=lambda: time.monotonic() - self._drain_take >= idle
                                or time.monotonic() >= deadline)
        finally:
            self._drain_from_ns = None
            executor.shutdown(timeout_sec=0.0)
        return self._drained

    def _start(self) -> str:
        path = self.writer.start(self._now_ns())
        self._have_names = False
        if not self.clock_watch.ready:  # simulated time, no /clock yet: time 0 is not the start
            self.clock_watch.when_ready(functools.partial(self._fix_start, path))
            self.get_logger().info(f"recording episode {path} (start time fixed at the first /clock)")
        else:
            self.get_logger().info(f"recording episode {path}")
        return str(path)

    def _fix_start(self, path: Path, now_ns: int) -> None:
        if self.writer.recording and self.writer.path == path and self.writer.start_ns == 0:
            self.writer.set_start_time(now_ns)
            self.get_logger().info(f"episode {path.name}: start time {ns_to_s(now_ns):.3f} s (the first /clock)")

    def _stop(self) -> str:
        path, counts = self.writer.stop(self._now_ns())
        text = f"closed episode {path}: " + ", ".join(f"{t} {n}" for t, n in counts.items())
        if self.writer.skipped:
            text += "; not written: " + ", ".join(f"{n} ({why})" for why, n in self.writer.skipped.items())
        elif self.writer.zero_stamp_states:
            text += f"; recorded {self.writer.zero_stamp_states} joint state(s) with a zero header stamp"
        self.get_logger().info(text)
        return text

    def _split(self) -> str:
        closed = self._stop() if self.writer.recording else "no open episode"
        return f"{closed}; now recording {self._start()}"

    @staticmethod
    def _trigger(action):
        """A std_srvs/Trigger callback running ``action() -> message``; a DeadzoneIdError becomes success=False."""

        def serve(request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
            try:
                response.message = action()
                response.success = True
            except DeadzoneIdError as err:
                response.success, response.message = False, str(err)
            return response

        return serve

    def close(self) -> None:
        """Take in what had arrived (:meth:`drain`; skipped once the context has shut down), then close the open
        episode, if any (called on shutdown). The episode is closed whatever happens in the drain. An episode that
        holds no message at all (the graph stopped before anything arrived: a failed start) is removed, and the log
        says so: a failed start leaves no empty episode behind."""
        if not self.writer.recording:
            return
        try:
            if self.context.ok():
                self.drain()
        except Exception as err:  # noqa: BLE001 - the episode must still be closed; the reason goes to the log
            self.get_logger().warning(f"taking in the last messages stopped: {err!r}")
        finally:
            if self.writer.recording:  # a ~/stop served during the drain closed it already
                path = self.writer.path
                self._stop()
                if path is not None and not any(self.writer.counts.values()):
                    shutil.rmtree(path, ignore_errors=True)
                    self.get_logger().info(f"removed episode {path}: it holds no message (the graph stopped before "
                                           "anything was recorded)")


def main(args=None) -> int:
    """Run the recorder until SIGINT/SIGTERM, then close the open episode. Returns 0, or 2 on a configuration error."""
    return run_node("recorder", RecorderNode, args, on_exit=lambda node: node.close())


if __name__ == "__main__":
    sys.exit(main())
