"""Recording I/O (core, no ROS): a :class:`~deadzone_id_ros.data.types.Recording` to and from rosbag2.

:func:`write_recording` produces a standard rosbag2 directory (``metadata.yaml`` plus one ``.mcap`` or ``.db3``
file) with the topics a live recording of the ros2_control stack has:

- ``/joint_states`` sensor_msgs/msg/JointState (name, position [rad], velocity [rad/s], effort [N·m]),
- ``/effort_controller/commands`` std_msgs/msg/Float64MultiArray (one torque per joint, recording joint order),
- a reference topic trajectory_msgs/msg/JointTrajectory (one point per message, ``time_from_start`` = 0),

plus a small ``episode.yaml`` next to ``metadata.yaml`` (robot, joints, start/stop times, notes).
:func:`read_recording` reads such a bag (or one from the recorder node) back.
"""

from __future__ import annotations

import dataclasses
import warnings
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from ...config import load_yaml
from ...errors import DataError
from ...stamps import ns_to_s, stamp_to_ns
from ..types import Recording
from .encode import MessageEncoders
from .format import (
    COMMAND_TYPE,
    DEFAULT_COMMAND_TOPIC,
    DEFAULT_JOINT_STATE_TOPIC,
    DEFAULT_REFERENCE_TOPIC,
    EPISODE_FILE,
    JOINT_STATE_TYPE,
    REFERENCE_TYPE,
    STORAGE_CHOICES,
    typestore,
)
from .joint_states import read_joint_states
from .reader import BagHandle, open_bag

if TYPE_CHECKING:
    from rosbags.interfaces import Connection
    from rosbags.rosbag2 import Writer

    from ...progress_lines import ProgressBar

__all__ = ["ZeroStampWarning", "episode_yaml", "read_recording", "write_episode_yaml", "write_recording"]


class ZeroStampWarning(UserWarning):
    """Some JointStates of a bag carry a zero header stamp (left out, or receive time used when all do)."""


def episode_yaml(recording: Recording, **extra: object) -> dict[str, Any]:
    """The content of ``episode.yaml`` for ``recording``: robot, joints, start/stop times [ns and UTC], notes.

    ``extra`` keys are added on top (for example ``storage`` or ``topics``).
    """
    t = recording.state_t_ns
    start = int(t[0]) if len(t) else 0
    stop = int(t[-1]) if len(t) else 0
    meta = dict(recording.metadata)
    doc: dict[str, Any] = {
        "robot": meta.pop("robot", ""),
        "joints": list(recording.joint_names),
        "start_time_ns": start,
        "stop_time_ns": stop,
        "start_time": _iso(start),
        "stop_time": _iso(stop),
        "duration_s": ns_to_s(stop - start),
        "samples": int(len(t)),
        "notes": meta.pop("notes", ""),
    }
    doc.update(_plain(meta))
    doc.update(_plain(extra))
    return doc


def _iso(t_ns: int) -> str:
    return datetime.fromtimestamp(ns_to_s(t_ns), tz=timezone.utc).isoformat()


def _plain(d: dict[str, object]) -> dict[str, Any]:
    """Make a metadata dict YAML-safe (numpy scalars/arrays -> Python)."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, np.ndarray):
            v = v.tolist()
        elif isinstance(v, np.generic):
            v = v.item()
        elif isinstance(v, dict):
            v = _plain(v)
        elif isinstance(v, (tuple, list)):
            v = [x.item() if isinstance(x, np.generic) else x for x in v]
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            v = _plain(dataclasses.asdict(v))
        out[str(k)] = v
    return out


def write_episode_yaml(bag_dir: str | Path, doc: dict[str, object]) -> Path:
    """Write ``doc`` as ``bag_dir/episode.yaml`` atomically (temporary file + rename); returns the path."""
    path = Path(bag_dir) / EPISODE_FILE
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text(yaml.safe_dump(doc, sort_keys=False))
    tmp.replace(path)
    return path


def write_recording(
    recording: Recording,
    out_dir: str | Path,
    storage: str = "mcap",
    joint_state_topic: str = DEFAULT_JOINT_STATE_TOPIC,
    command_topic: str = DEFAULT_COMMAND_TOPIC,
    reference_topic: str = DEFAULT_REFERENCE_TOPIC,
    progress: bool = False,
    state_log_ns: np.ndarray | None = None,
) -> Path:
    """Write ``recording`` as a standard rosbag2 directory ``out_dir`` plus ``out_dir/episode.yaml``.

    Topics: ``joint_state_topic`` (sensor_msgs/msg/JointState, header stamp = log time = ``state_t_ns``),
    ``command_topic`` (std_msgs/msg/Float64MultiArray, torques in ``joint_names`` order, log time =
    ``command_t_ns``) and ``reference_topic`` (trajectory_msgs/msg/JointTrajectory with one point: positions,
    velocities, accelerations; header stamp = ``reference_t_ns``). Topics whose data is None are not written.

    Args:
        recording: the data (shapes as documented on :class:`Recording`).
        out_dir: the bag directory to create (must not exist).
        storage: ``"mcap"`` (default) or ``"sqlite3"``.
        progress: show a tqdm progress bar.
        state_log_ns: (N,) log times [ns] of the JointState messages when they differ from the header stamps (a
            converted log whose time resets keeps its file order this way); default ``state_t_ns``.

    Returns:
        ``out_dir``.

    Raises:
        DataError: unknown storage, ``out_dir`` exists, or command/reference arrays of the wrong shape.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer, WriterError

    if storage not in STORAGE_CHOICES:
        raise DataError(f"storage = {storage!r} must be one of {STORAGE_CHOICES}")
    out = Path(out_dir)
    j = len(recording.joint_names)
    streams = _recording_streams(recording, j)
    if state_log_ns is not None and np.shape(state_log_ns) != np.shape(recording.state_t_ns):
        raise DataError(f"state_log_ns must have shape {np.shape(recording.state_t_ns)}, got {np.shape(state_log_ns)}")
    try:
        writer = Writer(out, version=9, storage_plugin=StoragePlugin[storage.upper()])
    except WriterError as err:
        raise DataError(f"cannot write bag {out}: {err}") from err
    total = sum(len(s[1]) for s in streams.values())
    bar: ProgressBar | None = None
    if progress:  # a bar on a terminal, a line per tenth in a log file
        from ...progress_lines import progress_bar

        bar = progress_bar(total, f"writing {out.name}", "msg")
    with writer:
        topics = {"state": joint_state_topic, "command": command_topic, "reference": reference_topic}
        done = _write_messages(writer, recording, streams, topics, state_log_ns, bar)
    if bar is not None:
        bar.update(done % 2000)
        bar.close()
    write_episode_yaml(
        out,
        episode_yaml(
            recording,
            storage=storage,
            topics={"joint_states": joint_state_topic, "commands": command_topic, "reference": reference_topic},
        ),
    )
    return out


def _write_messages(writer: Writer, recording: Recording, streams: dict[str, tuple[tuple[np.ndarray, ...], np.ndarray]],
                    topics: dict[str, str], state_log_ns: np.ndarray | None, bar: ProgressBar | None) -> int:
    """Write every message of ``streams`` (kind -> (rows, stamps [ns])) to the open rosbags ``writer``, the kinds
    ("state", "command", "reference") on their ``topics``, merged in log-time order as a live recorder writes them
    (``state_log_ns`` [ns] for the states when given); ``bar`` (a progress bar or None) advances every 2000 messages.

    Returns:
        the number of messages written.
    """
    ts = typestore()
    types = {"state": JOINT_STATE_TYPE, "command": COMMAND_TYPE, "reference": REFERENCE_TYPE}
    conns: dict[str, Connection] = {kind: writer.add_connection(topics[kind], types[kind], typestore=ts)
             for kind in ("state", "command", "reference") if kind in streams}
    encoders = MessageEncoders(recording.joint_names)
    log_times = {k: v[1] for k, v in streams.items()}
    if state_log_ns is not None:
        log_times["state"] = np.asarray(state_log_ns, dtype=np.int64)
    done = 0
    for kind, i in _merge_order(log_times):
        rows, t_ns = streams[kind]
        writer.write(conns[kind], int(log_times[kind][i]), encoders.encode(kind, int(t_ns[i]), rows, i))
        done += 1
        if bar is not None and done % 2000 == 0:
            bar.update(2000)
    return done


def _recording_streams(rec: Recording, j: int) -> dict[str, tuple[tuple[np.ndarray, ...], np.ndarray]]:
    streams: dict[str, tuple[tuple[np.ndarray, ...], np.ndarray]] = {
        "state": ((rec.position, rec.velocity, rec.effort), np.asarray(rec.state_t_ns, dtype=np.int64)),
    }
    if rec.command is not None:
        if rec.command_t_ns is None or np.shape(rec.command) != (len(rec.command_t_ns), j):
            raise DataError(
                f"Recording.command must have shape (len(command_t_ns), {j}), got {np.shape(rec.command)}"
            )
        streams["command"] = ((np.asarray(rec.command, float),), np.asarray(rec.command_t_ns, dtype=np.int64))
    if rec.reference_position is not None:
        if rec.reference_t_ns is None:
            raise DataError("Recording.reference_position is set but reference_t_ns is None")
        k = len(rec.reference_t_ns)
        parts = []
        for name in ("reference_position", "reference_velocity", "reference_acceleration"):
            arr = getattr(rec, name)
            if arr is None:
                parts.append(np.zeros((k, 0)))
            elif np.shape(arr) != (k, j):
                raise DataError(f"Recording.{name} must have shape ({k}, {j}), got {np.shape(arr)}")
            else:
                parts.append(np.asarray(arr, float))
        streams["reference"] = (tuple(parts), np.asarray(rec.reference_t_ns, dtype=np.int64))
    return streams


def _merge_order(times: dict[str, np.ndarray]) -> list[tuple[str, int]]:
    kinds = list(times)
    all_t = np.concatenate([times[k] for k in kinds])
    kind_ix = np.concatenate([np.full(len(times[k]), n) for n, k in enumerate(kinds)])
    row_ix = np.concatenate([np.arange(len(times[k])) for k in kinds])
    order = np.lexsort((kind_ix, all_t))
    return [(kinds[kind_ix[o]], int(row_ix[o])) for o in order]


def read_recording(
    path: str | Path,
    joint_state_topic: str = DEFAULT_JOINT_STATE_TOPIC,
    command_topic: str = DEFAULT_COMMAND_TOPIC,
    reference_topic: str = DEFAULT_REFERENCE_TOPIC,
) -> Recording:
    """Read a bag written by :func:`write_recording` or the recorder node back into a :class:`Recording`.

    Joints follow the JointState names (mapped by name); commands are assumed to be in that order (the controller's
    joint list, as in ``episode.yaml``); reference points are mapped by ``joint_names``. ``episode.yaml`` (if any)
    becomes ``metadata``. Missing command/reference topics give None.

    Time base: the JointState header stamps. States stamped zero but received at another time are left out and counted
    (``Recording.zero_stamp_states``, with a :class:`ZeroStampWarning`); only when every state is stamped zero is
    the receive (log) time used, and ``Recording.state_time_base`` says "log".

    Raises:
        FileNotFoundError: no such bag.
        DataError: no JointState topic, NaN-free positions missing, a command of the wrong length (names the bag,
            topic, message index and field).
    """
    path = Path(path)
    with open_bag(path) as h:
        series = read_joint_states(h, joint_state_topic)
        if not len(series):
            raise DataError(f"{path}: topic {joint_state_topic} has no usable messages")
        names = series.joint_names
        rec_kw: dict[str, Any] = {}
        topics = {c.topic: c for c in h.reader.connections}
        if command_topic in topics:
            rec_kw.update(_read_commands(h, command_topic, len(names)))
        if reference_topic in topics:
            rec_kw.update(_read_reference(h, path, reference_topic, names))
    meta: dict[str, Any] = {}
    ep = path / EPISODE_FILE if path.is_dir() else None
    if ep is not None and ep.is_file():
        meta = load_yaml(ep.read_text()) or {}
    keep, stamps, base, zero = _state_time_base(series.stamp_ns, series.log_ns, path, joint_state_topic)
    return Recording(
        joint_names=names,
        state_t_ns=stamps[keep],
        position=series.position[keep],
        velocity=series.velocity[keep],
        effort=series.effort[keep],
        metadata=meta,
        state_time_base=base,
        zero_stamp_states=int(zero.sum()),
        **rec_kw,
    )


def _read_commands(h: BagHandle, topic: str, j: int) -> dict[str, np.ndarray]:
    """``command_t_ns`` (K,) [ns, log time] and ``command`` (K, J) [N·m] from the Float64MultiArray ``topic`` of the
    open bag ``h``.

    Raises:
        DataError: a message whose data does not have ``j`` values (names the bag, topic and message index).
    """
    t_ns, command = read_float_arrays(h, topic, j)
    return {"command_t_ns": t_ns, "command": command}


def read_float_arrays(h: BagHandle, topic: str, j: int, expected: str = "") -> tuple[np.ndarray, np.ndarray]:
    """(K,) log times [ns] and (K, j) values of the std_msgs/Float64MultiArray ``topic`` of the open bag ``h`` (a
    command, or a per-joint series such as an external torque), in the bag's order.

    Raises:
        DataError: a message whose data does not have ``j`` values (names the bag, topic and message index, and
            ``expected``: what the j values are, e.g. the arm's joints).
    """
    t_list, rows = [], []
    for k, (c, t, raw) in enumerate(h.read_topic(topic)):
        data = np.asarray(h.reader.deserialize(raw, c.msgtype).data, dtype=float)
        if data.shape != (j,):
            raise DataError(f"{h.path}: topic {topic} message {k} field data has {data.size} values, expected {j}"
                            f"{expected}")
        t_list.append(t)
        rows.append(data)
    return np.asarray(t_list, dtype=np.int64), np.asarray(rows).reshape(-1, j)


def _read_reference(h: BagHandle, path: Path, topic: str, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """``reference_t_ns`` (K,) [ns] and ``reference_position`` / ``_velocity`` / ``_acceleration`` (K, J) [rad,
    rad/s, rad/s²] from the JointTrajectory ``topic`` of the open bag ``h``: every point, stamped header stamp +
    ``time_from_start``, mapped to ``names`` by joint name (an empty field gives NaN).

    Raises:
        DataError: a message whose joint_names lack one of ``names``.
    """
    j = len(names)
    t_list = []
    qs: list[np.ndarray] = []
    dqs: list[np.ndarray] = []
    ddqs: list[np.ndarray] = []
    for k, (c, _t, raw) in enumerate(h.read_topic(topic)):
        msg = h.reader.deserialize(raw, c.msgtype)
        try:
            cols = [list(msg.joint_names).index(n) for n in names]
        except ValueError as err:
            raise DataError(
                f"{path}: topic {topic} message {k} field joint_names {list(msg.joint_names)} "
                f"lacks a joint of {list(names)}"
            ) from err
        t0 = stamp_to_ns(msg.header.stamp)
        for p in msg.points:
            t_list.append(t0 + stamp_to_ns(p.time_from_start))
            for dst, arr in ((qs, p.positions), (dqs, p.velocities), (ddqs, p.accelerations)):
                a = np.asarray(arr, dtype=float)
                dst.append(a[cols] if a.size else np.full(j, np.nan))
    return {
        "reference_t_ns": np.asarray(t_list, dtype=np.int64),
        "reference_position": np.asarray(qs).reshape(-1, j),
        "reference_velocity": np.asarray(dqs).reshape(-1, j),
        "reference_acceleration": np.asarray(ddqs).reshape(-1, j),
    }


def _state_time_base(
    stamp_ns: np.ndarray, log_ns: np.ndarray, path: Path, topic: str
) -> tuple[np.ndarray, np.ndarray, str, np.ndarray]:
    """Which JointStates to keep and their time base, from their header stamps and log times (N,) [ns].

    Returns:
        (keep (N,) bool, stamps (N,) [ns], "header" or "log", zero (N,) bool: the states not stamped).

    Warns:
        ZeroStampWarning: some states are not stamped (attributed to the caller of :func:`read_recording`).
    """
    # A zero stamp received at another time is "not stamped"; one written at log time 0 too (a bag whose clock starts
    # at 0, as write_recording of an offline simulation) is a real stamp.
    zero = (stamp_ns <= 0) & (log_ns != stamp_ns)
    if zero.all():  # a driver that never stamps: receive time is all there is
        keep, stamps, base = np.ones(len(zero), dtype=bool), log_ns, "log"
    else:  # header stamps; states stamped zero (e.g. before the first command in lockstep) are left out
        keep, stamps, base = ~zero, stamp_ns, "header"
    if zero.any():
        warnings.warn(f"{path}: topic {topic}: {int(zero.sum())} of {len(zero)} message(s) have a zero "
                      f"header stamp; " + ("using receive time for all of them" if base == "log" else
                                           "left out, header stamps used for the rest"), ZeroStampWarning,
                      stacklevel=3)
    return keep, stamps, base, zero
