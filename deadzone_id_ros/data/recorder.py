"""Episode bag writer behind the ``recorder`` node (core, no ROS): serialized messages in, rosbag2 out.

:class:`EpisodeWriter` writes already-serialized CDR messages (as an rclpy subscription with ``raw=True`` delivers
them, so nothing is deserialized on the hot path) into one standard rosbag2 directory per episode with rosbags'
Writer, MCAP by default or sqlite3. Data loss on ``kill -9`` is bounded by :meth:`EpisodeWriter.flush`, which the
node calls every ``flush_period`` seconds: MCAP closes the current chunk and hands it to the OS, sqlite3 commits.
What a killed recorder leaves (no metadata.yaml, MCAP without summary) is read back by
:func:`deadzone_id_ros.data.bag.open_bag` through its recovery path. ``episode.yaml`` is written when an episode
starts and rewritten when it stops. A JointState with a zero header stamp, or one not after the previous stamp, is
not written (every reader would have to drop it): it is counted in episode.yaml's ``messages_skipped``.
"""

from __future__ import annotations

import re
import struct
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import check_positive
from ..errors import DataError
from ..realtime import check_realtime
from ..stamps import NS_PER_S, ns_to_s
from .bag import (
    COMMAND_TYPE,
    DEFAULT_COMMAND_TOPIC,
    DEFAULT_JOINT_STATE_TOPIC,
    DEFAULT_REFERENCE_TOPIC,
    JOINT_STATE_TYPE,
    REFERENCE_TYPE,
    STORAGE_CHOICES,
    typestore,
    write_episode_yaml,
)

if TYPE_CHECKING:
    from rosbags.interfaces import Connection

__all__ = ["EpisodeWriter", "RecorderConfig", "extra_topic_reason", "header_stamp_ns"]


def header_stamp_ns(data: bytes) -> int:
    """The header stamp [ns] of a serialized (CDR) message whose first field is a std_msgs/Header.

    Read from the bytes (4-byte encapsulation header, then int32 sec and uint32 nanosec in the encapsulation's byte
    order), so the recorder checks stamps without deserializing.

    Raises:
        DataError: fewer than 12 bytes.
    """
    if len(data) < 12:
        raise DataError(f"serialized message of {len(data)} bytes is too short for a header stamp")
    order = "<" if data[1] & 1 else ">"
    sec, nanosec = struct.unpack(order + "iI", bytes(data[4:12]))
    return sec * NS_PER_S + nanosec


_TOPIC_RE = re.compile(r"^~?/?[A-Za-z_][A-Za-z0-9_/]*$")


def _valid_topic(name: str) -> bool:
    """A topic name rclpy accepts: ``/a/b``, ``a/b`` or ``~/a``, no empty part (``//`` or a trailing ``/``)."""
    return bool(_TOPIC_RE.match(name)) and "//" not in name and not name.endswith("/")


def extra_topic_reason(entry: object) -> str | None:
    """Why ``entry`` is not a valid ``extra_topics`` entry ``"TOPIC:TYPE"``, or None when it is.

    TOPIC is a topic name (``/a/b``, ``a/b`` or ``~/a``) and TYPE a full message type name
    (``sensor_msgs/msg/JointState``) that the bag typestore (:func:`~deadzone_id_ros.data.bag.typestore`) knows.
    """
    if not isinstance(entry, str):
        return f"must be a string 'TOPIC:TYPE', got {type(entry).__name__}"
    topic, sep, typ = entry.partition(":")
    if not sep:
        return "must have the form 'TOPIC:TYPE' (e.g. '/leader/joint_states:sensor_msgs/msg/JointState')"
    if not _valid_topic(topic):
        return f"topic {topic!r} is not a valid topic name (no empty part: '//' or a trailing '/')"
    if typ not in typestore().fielddefs:
        hint = (f" (the full name is {typ.replace('/', '/msg/', 1)!r}?)"
                if typ.count("/") == 1 and typ.replace("/", "/msg/", 1) in typestore().fielddefs else "")
        return f"message type {typ!r} is not one the bag typestore knows{hint}"
    return None


@dataclass(frozen=True)
class RecorderConfig:
    """Parameters of the recorder node (config/recorder.yaml).

    Attributes:
        output_dir: directory that receives one bag directory per episode (created if missing).
        storage: ``"mcap"`` (default) or ``"sqlite3"``.
        joint_state_topic / command_topic / reference_topic: recorded topics (sensor_msgs/JointState,
            std_msgs/Float64MultiArray, trajectory_msgs/JointTrajectory); an empty reference_topic is not recorded.
        external_torque_topic / contact_topic / wrench_topic: the controller's force sensing (sensor_msgs/JointState
            with the external torque in effort, std_msgs/Bool, geometry_msgs/WrenchStamped), so demonstrations carry
            forces; "" = not recorded.  band_topic: the estimate's dead-zone interval (sensor_msgs/JointState, its
            half width in effort: 0 where the estimate is exact, else the static-friction band of a stuck joint), so
            a recording says where its forces are only known within the band; "" = not recorded.
        flush_period: seconds between flushes to disk (> 0, <= 10): the most data a ``kill -9`` can lose.
        autostart: start an episode when the node starts (else wait for ~/start).
        episode_prefix: episode directory name prefix (letters, digits, ``_``, ``-``).
        robot: robot name for episode.yaml.
        notes: free text for episode.yaml.
        queue_depth: subscription queue depth (reliable QoS), large enough to absorb scheduling hiccups at 1 kHz.
        drop_zero_stamp_states: do not record a JointState whose header stamp is zero (e.g. the simulator's state
            before the first command in lockstep; on every JointState topic, extras too), so that every recorded
            state has a header-stamp time base. Each such message is counted in episode.yaml (``zero_stamp_states``,
            all topics together; ``messages_skipped`` per topic) whether dropped or not. On by default;
            turn it off for a driver that never stamps its messages (it would otherwise record no state).
        extra_topics: further topics to record, each ``"TOPIC:TYPE"`` with TYPE a full message type name the bag
            typestore knows (ROS 2 Kilted: ``sensor_msgs/msg/JointState``, ``std_msgs/msg/Float64MultiArray``, ...),
            e.g. a second arm's ``/leader/joint_states:sensor_msgs/msg/JointState``. A JointState topic among them
            gets the stamp checks of ``joint_state_topic``, each topic against its own previous stamp; every topic
            (main or extra) at most once. Default: none. On a command line each entry is quoted (rcl's YAML
            parser refuses an unquoted ``a:b`` in a list): ``-p "extra_topics:=['/a:sensor_msgs/msg/JointState']"``.
        thread_priority, lock_memory, cpu_affinity: real-time scheduling of the recorder's threads
            (:mod:`deadzone_id_ros.realtime`; 0 / false / empty: normal scheduling). A recorder at normal priority
            beside a controller and a simulator at real-time priority on a busy 2-core machine fell seconds behind
            and lost states it had been sent; ``record.launch.yaml`` runs it at priority 48.
    """

    output_dir: str = "recordings"
    storage: str = "mcap"
    joint_state_topic: str = DEFAULT_JOINT_STATE_TOPIC
    command_topic: str = DEFAULT_COMMAND_TOPIC
    reference_topic: str = DEFAULT_REFERENCE_TOPIC
    external_torque_topic: str = "/feedforward_controller/external_torque"
    contact_topic: str = "/feedforward_controller/contact"
    wrench_topic: str = "/feedforward_controller/external_wrench"
    band_topic: str = "/feedforward_controller/external_torque_band"
    flush_period: float = 1.0
    autostart: bool = False
    episode_prefix: str = "episode"
    robot: str = ""
    notes: str = ""
    queue_depth: int = 1000
    drop_zero_stamp_states: bool = True
    extra_topics: tuple[str, ...] = ()
    thread_priority: int = 0
    lock_memory: bool = False
    cpu_affinity: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.output_dir:
            raise ValueError("RecorderConfig.output_dir must not be empty")
        if self.storage not in STORAGE_CHOICES:
            raise ValueError(f"RecorderConfig.storage = {self.storage!r} must be one of {STORAGE_CHOICES}")
        for name in ("joint_state_topic", "command_topic"):
            if not _valid_topic(getattr(self, name)):
                raise ValueError(f"RecorderConfig.{name} = {getattr(self, name)!r} is not a valid topic name")
        for name in ("reference_topic", "external_torque_topic", "contact_topic", "wrench_topic", "band_topic"):
            if getattr(self, name) and not _valid_topic(getattr(self, name)):
                raise ValueError(f"RecorderConfig.{name} = {getattr(self, name)!r} is not a valid topic name")
        if not (isinstance(self.flush_period, (int, float)) and 0 < self.flush_period <= 10):
            raise ValueError(f"RecorderConfig.flush_period = {self.flush_period!r} must be in (0, 10] s")
        if not re.fullmatch(r"[A-Za-z0-9_-]+", self.episode_prefix or ""):
            raise ValueError(f"RecorderConfig.episode_prefix = {self.episode_prefix!r} must be letters, digits, _ or -")
        if not isinstance(self.drop_zero_stamp_states, bool):
            raise ValueError(f"RecorderConfig.drop_zero_stamp_states = {self.drop_zero_stamp_states!r} must be true or "
                             "false")
        check_positive("RecorderConfig.queue_depth", self.queue_depth, integer=True)
        self._check_extra_topics()
        check_realtime(self.thread_priority, self.lock_memory, self.cpu_affinity)

    def _check_extra_topics(self) -> None:
        if not isinstance(self.extra_topics, (tuple, list)):
            raise ValueError(f"RecorderConfig.extra_topics = {self.extra_topics!r} must be a list of 'TOPIC:TYPE'")
        seen = set(self._main_topics())
        for i, entry in enumerate(self.extra_topics):
            reason = extra_topic_reason(entry)
            topic = str(entry).partition(":")[0]
            if reason is None and topic in seen:
                reason = f"topic {topic!r} is recorded already (a main topic or an earlier entry)"
            if reason is not None:
                raise ValueError(f"RecorderConfig.extra_topics[{i}] = {entry!r}: {reason}")
            seen.add(topic)

    def _main_topics(self) -> dict[str, str]:
        out = {self.joint_state_topic: JOINT_STATE_TYPE, self.command_topic: COMMAND_TYPE}
        if self.reference_topic:
            out[self.reference_topic] = REFERENCE_TYPE
        for topic, typ in ((self.external_torque_topic, JOINT_STATE_TYPE), (self.contact_topic, "std_msgs/msg/Bool"),
                           (self.wrench_topic, "geometry_msgs/msg/WrenchStamped"), (self.band_topic, JOINT_STATE_TYPE)):
            if topic:
                out[topic] = typ
        return out

    def topics(self) -> dict[str, str]:
        """{topic: message type} of every recorded topic: the main ones, then ``extra_topics`` in their order."""
        out = self._main_topics()
        for entry in self.extra_topics:
            topic, _, typ = entry.partition(":")
            out[topic] = typ
        return out


class EpisodeWriter:
    """Writes episodes (one rosbag2 directory each) from serialized messages.

    Args:
        config: the recorder configuration (topics, storage, output directory).
        topics: {topic name as recorded: message type}; default ``config.topics()``. Names here are the resolved
            names (the node passes the fully qualified ones).
    """

    def __init__(self, config: RecorderConfig, topics: dict[str, str] | None = None) -> None:
        self.config = config
        self.topics = dict(topics or config.topics())
        self.output_dir = Path(config.output_dir)
        self._writer: Any = None
        self._conns: dict[str, Connection] = {}
        self.path: Path | None = None
        self.counts: dict[str, int] = {}
        self.start_ns: int | None = None
        self.wall_start_ns: int | None = None
        self.last_ns: int | None = None
        self.joint_names: list[str] = []
        self.skipped: dict[str, int] = {}
        self._last_stamp: dict[str, int] = {}  # per JointState topic: the last header stamp written [ns]
        self.zero_stamp_states = 0  # JointStates with a zero header stamp seen in the open episode
        self._episode = 0

    @property
    def recording(self) -> bool:
        """True while an episode is open."""
        return self._writer is not None

    def start(self, now_ns: int, wall_ns: int | None = None) -> Path:
        """Open a new episode bag ``output_dir/<prefix>_<UTC time>_<n>`` and write a first episode.yaml.

        Args:
            now_ns: the recording clock at the start [ns] (the node clock: simulated time under use_sim_time).
            wall_ns: the wall-clock time [ns since epoch] that names the episode (default: now). The name never
                comes from ``now_ns``, which under simulated time starts near 0 (``episode_19700101_...``).

        Raises:
            DataError: an episode is already open, or the bag cannot be created (names the path).
        """
        from rosbags.rosbag2 import StoragePlugin, Writer, WriterError

        if self.recording:
            raise DataError(f"already recording to {self.path}")
        self.output_dir.mkdir(parents=True, exist_ok=True)
        wall_ns = time.time_ns() if wall_ns is None else wall_ns
        stamp = datetime.fromtimestamp(ns_to_s(wall_ns), tz=timezone.utc).strftime("%Y%m%d_%H%M%S")
        while True:
            path = self.output_dir / f"{self.config.episode_prefix}_{stamp}_{self._episode:03d}"
            self._episode += 1
            if not path.exists():
                break
        ts = typestore()
        try:
            writer = Writer(path, version=9, storage_plugin=StoragePlugin[self.config.storage.upper()])
            writer.open()
            self._conns = {topic: writer.add_connection(topic, typ, typestore=ts) for topic, typ in self.topics.items()}
        except (WriterError, OSError) as err:
            raise DataError(f"cannot create episode bag {path}: {err}") from err
        self._writer, self.path = writer, path
        self.counts = {t: 0 for t in self.topics}
        self.skipped, self._last_stamp = {}, {}
        self.zero_stamp_states = 0
        self.start_ns, self.last_ns, self.wall_start_ns = now_ns, None, wall_ns
        self.flush()
        write_episode_yaml(path, self._episode_doc(stop_ns=None))
        return path

    def set_start_time(self, now_ns: int) -> None:
        """Fix the open episode's start time [ns, recording clock] later than :meth:`start` (a recorder on simulated
        time opens its bag at once but learns the time only from the first /clock); rewrites episode.yaml.

        Raises:
            DataError: no episode is open.
        """
        if self._writer is None or self.path is None:
            raise DataError("not recording")
        self.start_ns = now_ns
        write_episode_yaml(self.path, self._episode_doc(stop_ns=None))

    def write(self, topic: str, t_ns: int, data: bytes) -> None:
        """Append one serialized message (CDR bytes) of ``topic`` with log time ``t_ns`` [ns]; ignored when idle.

        A JointState whose header stamp is zero (unless ``drop_zero_stamp_states`` is off, for a driver that never
        stamps), or not after the previous one written (a repeated stamp), is not written: it is counted in
        ``skipped`` (and episode.yaml's ``messages_skipped``) with the reason. Zero stamps are also counted in
        ``zero_stamp_states`` whether written or not.
        """
        if self._writer is None:
            return
        if self.topics[topic] == JOINT_STATE_TYPE:
            stamp = header_stamp_ns(data)
            reason = None
            if stamp == 0:
                self.zero_stamp_states += 1
                if self.config.drop_zero_stamp_states:
                    reason = "zero header stamp"
            elif topic in self._last_stamp and stamp <= self._last_stamp[topic]:
                reason = "header stamp not after the previous one"
            if reason is not None:
                key = f"{topic}: {reason}"
                self.skipped[key] = self.skipped.get(key, 0) + 1
                return
            if stamp != 0:
                self._last_stamp[topic] = stamp
        self._writer.write(self._conns[topic], t_ns, data)
        self.counts[topic] += 1
        self.last_ns = t_ns

    def write_joint_state(self, topic: str, t_ns: int, data: bytes) -> bool:
        """Append one serialized JointState (:meth:`write`'s stamp rules); returns True if it was written."""
        before = self.counts.get(topic, 0)
        self.write(topic, t_ns, data)
        return self.counts.get(topic, 0) > before

    def set_joint_names(self, names: list[str]) -> None:
        """Joint names for episode.yaml (from the first JointState of the episode)."""
        self.joint_names = list(names)

    def flush(self) -> None:
        """Hand everything written so far to the operating system (bounded loss if the process is killed).

        MCAP: close the current chunk (rosbags' McapWriter.close_chunk) and flush the file; sqlite3: commit.
        """
        w = self._writer
        if w is None or w.storage is None:
            return
        storage = w.storage
        if self.config.storage == "mcap":
            if storage.chunk.bio.tell():
                storage.close_chunk()
            storage.bio.flush()
        else:
            storage.conn.commit()

    def stop(self, now_ns: int) -> tuple[Path, dict[str, int]]:
        """Close the episode: rosbags writes the MCAP summary / sqlite metadata and metadata.yaml; rewrite
        episode.yaml with the stop time and message counts. Returns (bag path, counts per topic).

        Raises:
            DataError: no episode is open.
        """
        if self._writer is None or self.path is None:
            raise DataError("not recording")
        writer, self._writer = self._writer, None
        writer.close()
        write_episode_yaml(self.path, self._episode_doc(stop_ns=now_ns))
        return self.path, dict(self.counts)

    def _episode_doc(self, stop_ns: int | None) -> dict[str, Any]:
        def iso(t: int | None) -> str | None:
            return None if t is None else datetime.fromtimestamp(ns_to_s(t), tz=timezone.utc).isoformat()

        return {
            "robot": self.config.robot,
            "joints": self.joint_names,
            "start_time_ns": self.start_ns,
            "stop_time_ns": stop_ns,
            "start_time": iso(self.start_ns),
            "wall_start_time": iso(self.wall_start_ns),
            "stop_time": iso(stop_ns),
            "notes": self.config.notes,
            "storage": self.config.storage,
            "topics": dict(self.topics),
            "message_counts": dict(self.counts),
            "messages_skipped": dict(self.skipped),
            "zero_stamp_states": self.zero_stamp_states,
            "zero_stamp_states_dropped": bool(self.config.drop_zero_stamp_states),
            "complete": stop_ns is not None,
        }
