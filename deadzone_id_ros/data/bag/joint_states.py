"""JointState topics -> name-mapped series (core, no ROS): :class:`JointStateSeries` and :func:`read_joint_states`.

Messages are decoded in bulk (:mod:`.cdr`) where their layout allows, else by rosbags' deserializer; joints are
mapped by name in every message; messages that cannot be mapped are dropped and counted in the series' report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from ...errors import DataError
from ...stamps import stamp_to_ns
from ..types import Recording
from .cdr import FIELDS, decode_block, layout_matches_rosbags
from .format import JOINT_STATE_TYPE

if TYPE_CHECKING:
    from .reader import BagHandle

__all__ = ["Dropped", "JointStateSeries", "SeriesReport", "read_joint_states", "series_from_recording"]


class Dropped(TypedDict):
    """Messages dropped for one reason: how many, and the index of the first."""

    count: int
    first_message: int


class SeriesReport(TypedDict, total=False):
    """What decoding a joint-state topic found: messages on the topic and used, the dropped ones by reason, joint
    order changes, messages carrying each field, and (only when no message names its joints) the position range
    per unnamed joint [rad or m]."""

    messages: int
    messages_used: int
    dropped: dict[str, Dropped]
    joint_order_changes: int
    messages_with_field: dict[str, int]
    unnamed_position_range: list[float]


@dataclass
class JointStateSeries:
    """All messages of one JointState topic, mapped by joint name (raw, not resampled, in bag order).

    Joint columns follow ``joint_names`` (every name seen on the topic, first-seen order). A value a message does not
    carry (empty field, joint not named in that message) is NaN.

    Attributes:
        bag: the bag path.  topic: the topic name.
        joint_names: (J,) names.
        stamp_ns: (M,) header stamps [ns] (0 where the header stamp is zero).
        log_ns: (M,) log (receive) times [ns].
        position: (M, J) [rad].  velocity: (M, J) [rad/s].  effort: (M, J) [as recorded; N·m for ros2_control].
        index: (M,) message index on the topic (0-based, bag order) of each row.
        report: counts and warnings collected while decoding (dropped messages with the reason and first index).
    """

    bag: str
    topic: str
    joint_names: tuple[str, ...]
    stamp_ns: np.ndarray
    log_ns: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    index: np.ndarray
    report: SeriesReport = field(default_factory=lambda: SeriesReport())

    @property
    def where(self) -> str:
        """"<bag>: topic <topic>", the prefix of every message about this series."""
        return f"{self.bag}: topic {self.topic}"

    def __len__(self) -> int:
        return len(self.log_ns)


def read_joint_states(handle: BagHandle, topic: str) -> JointStateSeries:
    """Decode every message of JointState ``topic`` in an open bag into name-mapped arrays.

    Messages whose names and field counts are laid out like their neighbours are decoded in bulk with numpy (the
    layout of the first one of each block is checked against rosbags' own deserializer); any other message goes
    through rosbags' deserializer. Joints are mapped by name in every message. A message is dropped, and counted in
    ``report["dropped"]`` with the first message index, when its name list is empty, contains a duplicate name, or
    a non-empty position/velocity/effort has a different length than the name list.

    A message count that differs from what ``metadata.yaml`` or the MCAP summary declares is noted in
    ``handle.notes``.

    Raises:
        DataError: the topic is not in the bag or is not sensor_msgs/msg/JointState (names bag and topic), or a
            message cannot be read (names bag, topic and message index).
    """
    from rosbags.highlevel import AnyReaderError

    reader = handle.reader
    conns = [c for c in reader.connections if c.topic == topic]
    if not conns:
        present = sorted({c.topic for c in reader.connections})
        raise DataError(f"{handle.path}: topic {topic} not in bag; topics: {present}")
    bad = [c.msgtype for c in conns if c.msgtype != JOINT_STATE_TYPE]
    if bad:
        raise DataError(f"{handle.path}: topic {topic} has type {bad[0]}, expected {JOINT_STATE_TYPE}")
    cdr = reader.is2
    raws: list[bytes] = []
    logs: list[int] = []
    for _, t_ns, raw in handle.read_topic(topic):
        raws.append(raw)
        logs.append(t_ns)
    reader = handle.reader  # a new reader if the bag had to be rebuilt while reading
    log_ns = np.asarray(logs, dtype=np.int64)

    # bulk path: group by length, decode each group with numpy, verify the first message of each layout
    blocks: list[_Block] = []
    by_len: dict[int, list[int]] = {}
    for i, raw in enumerate(raws):
        by_len.setdefault(len(raw), []).append(i)
    slow: list[int] = []
    for idxs in by_len.values():
        pending = np.asarray(idxs)
        while len(pending):
            block = decode_block([raws[i] for i in pending.tolist()], cdr)
            if block is None or not layout_matches_rosbags(reader, raws[int(pending[0])], block, conns[0].msgtype):
                slow.extend(pending.tolist())
                break
            names, st, fv, ok = block
            blocks.append(_Block(tuple(names), pending[ok], st[ok], {f: v[ok] for f, v in fv.items()}))
            pending = pending[~ok]
    undecodable: dict[str, Dropped] = {}
    for i in slow:
        try:
            msg = reader.deserialize(raws[i], conns[0].msgtype)
        except AnyReaderError as err:  # a corrupt message: counted and dropped, never a traceback
            d = undecodable.setdefault(f"undecodable message ({err})", Dropped(count=0, first_message=int(i)))
            d["count"] += 1
            continue
        stamp = stamp_to_ns(msg.header.stamp)
        vals = {f: np.asarray(getattr(msg, f), dtype=np.float64)[None, :] for f in FIELDS}
        blocks.append(_Block(tuple(msg.name), np.asarray([i]), np.asarray([stamp], dtype=np.int64), vals))
    return _map_by_name(str(handle.path), topic, blocks, log_ns, undecodable)


@dataclass
class _Block:
    """Messages sharing one layout: names, message indices (n,), stamps (n,) [ns], {field: (n, k) values}."""

    names: tuple[str, ...]
    index: np.ndarray
    stamp: np.ndarray
    values: dict[str, np.ndarray]


def _drop_unmappable(
    blocks: list[_Block], m: int, undecodable: dict[str, Dropped]
) -> tuple[list[_Block], dict[str, Dropped], list[np.ndarray]]:
    """Split blocks into those that can be mapped by name and the dropped ones, counted per reason.

    Returns (valid blocks, {reason: {count, first_message}} sorted by first message, positions of unnamed blocks).
    """
    dropped: dict[str, Dropped] = dict(undecodable)
    valid: list[_Block] = []
    unnamed_pos: list[np.ndarray] = []
    for blk in blocks:
        reason = None
        if not blk.names:
            reason = "empty name list (field name)"
            if blk.values["position"].shape[1]:
                unnamed_pos.append(blk.values["position"])
        elif len(set(blk.names)) != len(blk.names):
            reason = "duplicate joint name (field name)"
        else:
            for f in FIELDS:
                if blk.values[f].shape[1] not in (0, len(blk.names)):
                    reason = f"field {f} has a different length than name"
                    break
        if reason is None:
            valid.append(blk)
            continue
        d = dropped.setdefault(reason, {"count": 0, "first_message": m})
        d["count"] += len(blk.index)
        d["first_message"] = min(d["first_message"], int(blk.index.min()))
    dropped = dict(sorted(dropped.items(), key=lambda kv: kv[1]["first_message"]))
    return valid, dropped, unnamed_pos


def _map_by_name(
    bag: str, topic: str, blocks: list[_Block], log_ns: np.ndarray, undecodable: dict[str, Dropped]
) -> JointStateSeries:
    m = len(log_ns)
    valid, dropped, unnamed_pos = _drop_unmappable(blocks, m, undecodable)

    # joint order: names in the order first seen, message by message
    first_seen = sorted(valid, key=lambda b: int(b.index.min()))
    order: dict[str, int] = {}
    for blk in first_seen:
        for n in blk.names:
            order.setdefault(n, len(order))
    joint_names = tuple(order)
    keep = np.zeros(m, dtype=bool)
    name_id = np.full(m, -1, dtype=np.int64)
    distinct: dict[tuple[str, ...], int] = {}
    for blk in valid:
        keep[blk.index] = True
        name_id[blk.index] = distinct.setdefault(blk.names, len(distinct))
    kept = np.nonzero(keep)[0]
    ids = name_id[kept]
    by_id = {v: k for k, v in distinct.items()}
    order_changes = sum(
        1 for a, b in zip(ids[:-1][ids[1:] != ids[:-1]].tolist(), ids[1:][ids[1:] != ids[:-1]].tolist(), strict=True)
        if set(by_id[a]) == set(by_id[b])
    )
    row_of = np.cumsum(keep) - 1
    arrays = {f: np.full((len(kept), len(joint_names)), np.nan) for f in FIELDS}
    present = {f: 0 for f in FIELDS}
    stamp = np.zeros(len(kept), dtype=np.int64)
    for blk in valid:
        rows = row_of[blk.index]
        stamp[rows] = blk.stamp
        cols = np.asarray([order[n] for n in blk.names])
        for f in FIELDS:
            v = blk.values[f]
            if v.shape[1]:
                arrays[f][rows[:, None], cols[None, :]] = v
                present[f] += len(rows)
    report = SeriesReport(messages=m, messages_used=int(len(kept)), dropped=dropped,
                          joint_order_changes=int(order_changes), messages_with_field=present)
    if unnamed_pos and len({p.shape[1] for p in unnamed_pos}) == 1:
        # diagnosis only (cannot be mapped by name): does anything move on the unnamed joints?
        report["unnamed_position_range"] = np.ptp(np.concatenate(unnamed_pos), axis=0).tolist()
    return JointStateSeries(
        bag=bag,
        topic=topic,
        joint_names=joint_names,
        stamp_ns=stamp,
        log_ns=log_ns[kept],
        position=arrays["position"],
        velocity=arrays["velocity"],
        effort=arrays["effort"],
        index=kept.astype(np.int64),
        report=report,
    )


def series_from_recording(recording: Recording, source: str = "<recording>") -> JointStateSeries:
    """Wrap a :class:`Recording`'s joint states as a :class:`JointStateSeries` (stamps are header = log time)."""
    n = len(recording.state_t_ns)
    t = np.asarray(recording.state_t_ns, dtype=np.int64)
    return JointStateSeries(
        bag=source,
        topic="/joint_states",
        joint_names=tuple(recording.joint_names),
        stamp_ns=t,
        log_ns=t,
        position=np.asarray(recording.position, float),
        velocity=np.asarray(recording.velocity, float),
        effort=np.asarray(recording.effort, float),
        index=np.arange(n, dtype=np.int64),
        report={"messages": n, "messages_used": n, "dropped": {}, "joint_order_changes": 0,
                "messages_with_field": {"position": n, "velocity": n, "effort": n}},
    )
