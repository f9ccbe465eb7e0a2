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
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import yaml

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
from .reader import open_bag

__all__ = ["episode_yaml", "read_recording", "write_episode_yaml", "write_recording"]


def episode_yaml(recording: Recording, **extra: Any) -> dict[str, Any]:
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


def _plain(d: dict[str, Any]) -> dict[str, Any]:
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


def write_episode_yaml(bag_dir: str | Path, doc: dict[str, Any]) -> Path:
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
    ts = typestore()
    try:
        writer = Writer(out, version=9, storage_plugin=StoragePlugin[storage.upper()])
    except WriterError as err:
        raise DataError(f"cannot write bag {out}: {err}") from err
    total = sum(len(s[1]) for s in streams.values())
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="msg", desc=f"writing {out.name}")
    with writer:
        conns = {
            "state": writer.add_connection(joint_state_topic, JOINT_STATE_TYPE, typestore=ts),
        }
        if "command" in streams:
            conns["command"] = writer.add_connection(command_topic, COMMAND_TYPE, typestore=ts)
        if "reference" in streams:
            conns["reference"] = writer.add_connection(reference_topic, REFERENCE_TYPE, typestore=ts)
        encoders = MessageEncoders(recording.joint_names)
        # merge the streams in time order (as a live recorder would write them)
        order = _merge_order({k: v[1] for k, v in streams.items()})
        done = 0
        for kind, i in order:
            rows, t_ns = streams[kind]
            t = int(t_ns[i])
            writer.write(conns[kind], t, encoders.encode(kind, t, rows, i))
            done += 1
            if bar is not None and done % 2000 == 0:
                bar.update(2000)
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
        j = len(names)
        rec_kw: dict[str, Any] = {}
        topics = {c.topic: c for c in h.reader.connections}
        if command_topic in topics:
            conns = [c for c in h.reader.connections if c.topic == command_topic]
            t_list, rows = [], []
            for k, (c, t, raw) in enumerate(h.reader.messages(connections=conns)):
                data = np.asarray(h.reader.deserialize(raw, c.msgtype).data, dtype=float)
                if data.shape != (j,):
                    raise DataError(
                        f"{path}: topic {command_topic} message {k} field data has {data.size} values, expected {j}"
                    )
                t_list.append(t)
                rows.append(data)
            rec_kw["command_t_ns"] = np.asarray(t_list, dtype=np.int64)
            rec_kw["command"] = np.asarray(rows).reshape(-1, j)
        if reference_topic in topics:
            conns = [c for c in h.reader.connections if c.topic == reference_topic]
            t_list = []
            qs: list[np.ndarray] = []
            dqs: list[np.ndarray] = []
            ddqs: list[np.ndarray] = []
            for k, (c, _t, raw) in enumerate(h.reader.messages(connections=conns)):
                msg = h.reader.deserialize(raw, c.msgtype)
                try:
                    cols = [list(msg.joint_names).index(n) for n in names]
                except ValueError as err:
                    raise DataError(
                        f"{path}: topic {reference_topic} message {k} field joint_names {list(msg.joint_names)} "
                        f"lacks a joint of {list(names)}"
                    ) from err
                t0 = stamp_to_ns(msg.header.stamp)
                for p in msg.points:
                    t_list.append(t0 + stamp_to_ns(p.time_from_start))
                    for dst, arr in ((qs, p.positions), (dqs, p.velocities), (ddqs, p.accelerations)):
                        a = np.asarray(arr, dtype=float)
                        dst.append(a[cols] if a.size else np.full(j, np.nan))
            rec_kw["reference_t_ns"] = np.asarray(t_list, dtype=np.int64)
            rec_kw["reference_position"] = np.asarray(qs).reshape(-1, j)
            rec_kw["reference_velocity"] = np.asarray(dqs).reshape(-1, j)
            rec_kw["reference_acceleration"] = np.asarray(ddqs).reshape(-1, j)
    meta: dict[str, Any] = {}
    ep = path / EPISODE_FILE if path.is_dir() else None
    if ep is not None and ep.is_file():
        meta = yaml.safe_load(ep.read_text()) or {}
    stamps = series.stamp_ns if np.all(series.stamp_ns > 0) else series.log_ns
    return Recording(
        joint_names=names,
        state_t_ns=stamps,
        position=series.position,
        velocity=series.velocity,
        effort=series.effort,
        metadata=meta,
        **rec_kw,
    )
