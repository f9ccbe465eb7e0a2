"""Several arms' recordings in one rosbag2, each under its namespace, plus extra per-joint series (core, no ROS).

A teleoperation demonstration holds two arms: ``/<ns>/joint_states``, ``/<ns>/effort_controller/commands`` and
``/<ns>/reference`` per arm (the message types of :func:`~deadzone_id_ros.data.write_recording`), plus any extra
std_msgs/msg/Float64MultiArray series (e.g. estimated and true external torques), all merged in log-time order as a
live recorder writes them, with the rosbags writer. Each arm reads back with
:func:`~deadzone_id_ros.data.read_recording` (``joint_state_topic="/<ns>/joint_states"``, ...) and ``train`` /
``compare`` take it with ``--topic /<ns>/joint_states``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ...errors import DataError
from ..types import Recording
from .encode import MessageEncoders
from .format import COMMAND_TYPE, JOINT_STATE_TYPE, REFERENCE_TYPE, STORAGE_CHOICES, typestore
from .recording import _merge_order, _recording_streams, episode_yaml, write_episode_yaml

__all__ = ["arm_topics", "write_namespaced"]


def arm_topics(namespace: str) -> dict[str, str]:
    """{"state", "command", "reference"} -> the topics of the arm under ``namespace`` (no leading or trailing /)."""
    ns = "/" + namespace.strip("/")
    return {"state": f"{ns}/joint_states", "command": f"{ns}/effort_controller/commands",
            "reference": f"{ns}/reference"}


def write_namespaced(recordings: Mapping[str, Recording], out_dir: str | Path, *, storage: str = "mcap",
                     extra: Mapping[str, tuple[np.ndarray, np.ndarray, str]] | None = None,
                     metadata: Mapping[str, object] | None = None) -> Path:
    """Write every arm of ``recordings`` {namespace: recording} and the ``extra`` series into one bag directory.

    Args:
        recordings: namespace -> that arm's recording (its joints, states, commands, reference).
        out_dir: the bag directory to create (must not exist).  storage: "mcap" or "sqlite3".
        extra: topic -> (t_ns (M,) [ns], values (M, K), namespace whose joint order K follows), written as
            Float64MultiArray.
        metadata: added to ``episode.yaml`` (which also lists every arm's joints and topics).

    Returns:
        ``out_dir``.

    Raises:
        DataError: no recording, unknown storage, ``out_dir`` exists, an array of the wrong shape (names the topic).
    """
    from rosbags.rosbag2 import StoragePlugin, Writer, WriterError

    if not recordings:
        raise DataError("write_namespaced needs at least one recording")
    if storage not in STORAGE_CHOICES:
        raise DataError(f"storage = {storage!r} must be one of {STORAGE_CHOICES}")
    out = Path(out_dir)
    ts = typestore()
    types = {"state": JOINT_STATE_TYPE, "command": COMMAND_TYPE, "reference": REFERENCE_TYPE}
    # one merged stream: key (namespace, kind) or ("", topic) for the extras
    rows: dict[str, tuple[tuple[np.ndarray, ...], np.ndarray]] = {}
    enc: dict[str, tuple[MessageEncoders, str]] = {}
    topic_type: dict[str, tuple[str, str]] = {}
    for ns, rec in recordings.items():
        topics = arm_topics(ns)
        for kind, stream in _recording_streams(rec, len(rec.joint_names)).items():
            key = topics[kind]
            rows[key] = stream
            enc[key] = (MessageEncoders(rec.joint_names), kind)
            topic_type[key] = (key, types[kind])
    for topic, (t_ns, values, ns) in (extra or {}).items():
        t_arr, v = np.asarray(t_ns, dtype=np.int64), np.asarray(values, dtype=float)
        if v.ndim != 2 or len(v) != len(t_arr):
            raise DataError(f"extra series {topic}: values must be (len(t_ns), K), got {v.shape} for {len(t_arr)} "
                            "stamps")
        if topic in rows:
            raise DataError(f"extra series {topic} clashes with an arm's topic")
        rows[topic] = ((v,), t_arr)
        enc[topic] = (MessageEncoders(recordings[ns].joint_names if ns in recordings else []), "command")
        topic_type[topic] = (topic, COMMAND_TYPE)
    try:
        writer = Writer(out, version=9, storage_plugin=StoragePlugin[storage.upper()])
    except WriterError as err:
        raise DataError(f"cannot write bag {out}: {err}") from err
    with writer:
        conns = {k: writer.add_connection(topic, msgtype, typestore=ts) for k, (topic, msgtype) in topic_type.items()}
        for key, i in _merge_order({k: v[1] for k, v in rows.items()}):
            data, t_arr = rows[key]
            encoder, kind = enc[key]
            writer.write(conns[key], int(t_arr[i]), encoder.encode(kind, int(t_arr[i]), data, i))
    first = next(iter(recordings.values()))
    doc = episode_yaml(first, storage=storage,
                       arms={ns: {"joints": list(r.joint_names), "topics": arm_topics(ns)}
                             for ns, r in recordings.items()},
                       extra_topics=sorted((extra or {}).keys()), **dict(metadata or {}))
    write_episode_yaml(out, doc)
    return out
