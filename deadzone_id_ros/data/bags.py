"""Reading any bag and writing recordings as rosbag2 (core, no ROS), built on the ``rosbags`` library.

Reading goes through rosbags' :class:`~rosbags.highlevel.AnyReader` (ROS 1 ``.bag``, ROS 2 sqlite3 and MCAP). The
format is detected from the file content, not from its name. A ROS 2 bag without ``metadata.yaml`` or an MCAP file
without its summary/footer (a recorder that was killed) is recovered: the intact messages are copied with rosbags'
own Writer into a temporary, standard rosbag2 directory which is then read as usual (:func:`recover_bag` does the
same into a directory of your choice). Recovery is always reported, never silent.

Writing (:func:`write_recording`) produces a standard rosbag2 directory (``metadata.yaml`` plus one ``.mcap`` or
``.db3`` file) with the topics a live recording of the ros2_control stack has:

- ``/joint_states`` sensor_msgs/msg/JointState (name, position [rad], velocity [rad/s], effort [N·m]),
- ``/effort_controller/commands`` std_msgs/msg/Float64MultiArray (one torque per joint, recording joint order),
- a reference topic trajectory_msgs/msg/JointTrajectory (one point per message, ``time_from_start`` = 0),

plus a small ``episode.yaml`` next to ``metadata.yaml`` (robot, joints, start/stop times, notes).

Time is an integer in nanoseconds everywhere in this module.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..errors import DataError
from .types import Recording

__all__ = [
    "BagHandle",
    "COMMAND_TYPE",
    "DEFAULT_COMMAND_TOPIC",
    "DEFAULT_JOINT_STATE_TOPIC",
    "DEFAULT_REFERENCE_TOPIC",
    "EPISODE_FILE",
    "JOINT_STATE_TYPE",
    "JointStateSeries",
    "REFERENCE_TYPE",
    "STORAGE_CHOICES",
    "detect_format",
    "episode_yaml",
    "open_bag",
    "read_joint_states",
    "read_recording",
    "recover_bag",
    "typestore",
    "write_episode_yaml",
    "write_recording",
]

DEFAULT_JOINT_STATE_TOPIC = "/joint_states"
DEFAULT_COMMAND_TOPIC = "/effort_controller/commands"
DEFAULT_REFERENCE_TOPIC = "/feedforward_controller/reference"
JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"
COMMAND_TYPE = "std_msgs/msg/Float64MultiArray"
REFERENCE_TYPE = "trajectory_msgs/msg/JointTrajectory"
STORAGE_CHOICES = ("mcap", "sqlite3")
EPISODE_FILE = "episode.yaml"

_MAGIC_ROS1 = b"#ROSBAG V2.0"
_MAGIC_MCAP = b"\x89MCAP0\r\n"
_MAGIC_SQLITE = b"SQLite format 3\x00"


def typestore() -> Any:
    """Return the rosbags typestore used for writing and as the fallback for bags without type definitions.

    ROS 2 Kilted message definitions (sensor_msgs, std_msgs, trajectory_msgs are unchanged since Humble).
    """
    from rosbags.typesys import Stores, get_typestore

    global _TYPESTORE
    if _TYPESTORE is None:
        _TYPESTORE = get_typestore(Stores.ROS2_KILTED)
    return _TYPESTORE


_TYPESTORE: Any = None


# ---------------------------------------------------------------------------------------------------------------
# Format detection and opening (with recovery)


def _magic(path: Path) -> str | None:
    try:
        with path.open("rb") as f:
            head = f.read(16)
    except OSError:
        return None
    if head.startswith(_MAGIC_ROS1):
        return "ros1"
    if head.startswith(_MAGIC_MCAP):
        return "mcap"
    if head.startswith(_MAGIC_SQLITE):
        return "sqlite3"
    return None


def _storage_files(directory: Path) -> list[tuple[Path, str]]:
    """Storage files in a rosbag2 directory, detected from content, sorted by name."""
    out = []
    for p in sorted(directory.iterdir()):
        if p.is_file() and not p.name.endswith(("-journal", "-wal", "-shm")):
            kind = _magic(p)
            if kind in ("mcap", "sqlite3"):
                out.append((p, kind))
    return out


def detect_format(path: str | Path) -> str:
    """Detect a bag's format from its content: ``"ros1"``, ``"mcap"`` or ``"sqlite3"``.

    Args:
        path: a ROS 1 bag file, a rosbag2 directory, or a single ``.mcap``/``.db3`` storage file.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        DataError: nothing in ``path`` looks like a ROS 1 bag, an MCAP file or an SQLite database.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"bag {path} does not exist")
    if path.is_file():
        kind = _magic(path)
        if kind is None:
            raise DataError(f"{path}: not a bag (neither a ROS 1 bag, an MCAP file nor an SQLite database)")
        return kind
    kinds = {k for _, k in _storage_files(path)}
    if len(kinds) == 1:
        return kinds.pop()
    if not kinds:
        raise DataError(f"{path}: directory holds no .mcap or .db3 storage file (checked by content)")
    raise DataError(f"{path}: directory mixes MCAP and SQLite storage files; cannot tell which bag it is")


@dataclass
class BagHandle:
    """An open bag: the rosbags AnyReader plus what was done to open it.

    Attributes:
        path: the bag as the user named it.
        format: ``"ros1"``, ``"mcap"`` or ``"sqlite3"`` (from content).
        reader: the open :class:`rosbags.highlevel.AnyReader`.
        recovered: True when the bag was damaged (no metadata.yaml / no MCAP summary) and read from a rebuilt copy.
        notes: human-readable notes about opening (recovery, messages lost at a truncated end).
    """

    path: Path
    format: str
    reader: Any
    recovered: bool = False
    notes: list[str] = field(default_factory=list)


@contextlib.contextmanager
def open_bag(path: str | Path) -> Iterator[BagHandle]:
    """Open any bag for reading (context manager); closes everything it opened, also when opening fails halfway.

    ROS 1 bags are recognised by content whatever their suffix. A rosbag2 directory without ``metadata.yaml``, a
    bare ``.mcap``/``.db3`` file, and an MCAP file without summary are recovered into a temporary directory first
    (see :func:`recover_bag`); ``BagHandle.recovered`` and ``notes`` say so.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        DataError: the bag cannot be read (names the bag and the reason from rosbags).
    """
    from rosbags.highlevel import AnyReader, AnyReaderError

    path = Path(path)
    fmt = detect_format(path)
    with contextlib.ExitStack() as stack:
        handle_path = path
        recovered = False
        notes: list[str] = []
        if fmt == "ros1":
            if path.suffix != ".bag":  # AnyReader picks ROS 1 vs ROS 2 by suffix; we detected ROS 1 by content
                tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dzid_bag_")))
                handle_path = tmp / (path.name + ".bag")
                handle_path.symlink_to(path.resolve())
        else:
            needs_recovery = path.is_file() or not (path / "metadata.yaml").is_file()
            if not needs_recovery and fmt == "mcap":
                needs_recovery = any(not _mcap_has_footer(p) for p, _ in _storage_files(path))
            if needs_recovery:
                tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dzid_recover_")))
                handle_path = tmp / "bag"
                rep = recover_bag(path, handle_path, storage=fmt)
                recovered = True
                notes.append(rep)
        try:
            reader = AnyReader([handle_path], default_typestore=typestore())
            reader.open()
        except AnyReaderError as err:
            raise DataError(f"{path}: cannot read bag: {err}") from err
        stack.callback(reader.close)
        yield BagHandle(path=path, format=fmt, reader=reader, recovered=recovered, notes=notes)


def _mcap_has_footer(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() < 8 + 37:
                return False
            f.seek(-8, os.SEEK_END)
            return f.read(8) == _MAGIC_MCAP
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------------------------
# Recovery


@dataclass
class _RawConnection:
    topic: str
    msgtype: str
    msgdef: str | None
    digest: str | None


def _iter_mcap_raw(path: Path, notes: list[str]) -> Iterator[tuple[_RawConnection, int, bytes]]:
    """Stream every intact message of an MCAP file, stopping cleanly at a truncated end."""
    from mcap.exceptions import McapError
    from mcap.records import Channel, Message, Schema
    from mcap.stream_reader import StreamReader

    schemas: dict[int, Schema] = {}
    channels: dict[int, _RawConnection] = {}
    count = 0
    with path.open("rb") as f:
        reader = StreamReader(f, record_size_limit=1 << 31)
        try:
            for rec in reader.records:
                if isinstance(rec, Schema):
                    schemas[rec.id] = rec
                elif isinstance(rec, Channel):
                    sch = schemas.get(rec.schema_id)
                    msgdef = sch.data.decode() if sch is not None and sch.encoding == "ros2msg" else None
                    channels[rec.id] = _RawConnection(
                        rec.topic, sch.name if sch is not None else "", msgdef, None
                    )
                elif isinstance(rec, Message):
                    conn = channels.get(rec.channel_id)
                    if conn is not None:
                        count += 1
                        yield conn, rec.log_time, rec.data
        except (McapError, EOFError, ValueError, OSError) as err:  # truncated by a kill: keep what was intact
            notes.append(f"{path.name}: MCAP ends early ({type(err).__name__}: {err}); kept {count} intact message(s)")


def _iter_sqlite_raw(path: Path, tmpdir: Path, notes: list[str]) -> Iterator[tuple[_RawConnection, int, bytes]]:
    """Stream every committed message of an SQLite rosbag2 storage file (read from a private copy)."""
    copy = tmpdir / path.name
    shutil.copyfile(path, copy)
    for suffix in ("-journal", "-wal"):
        side = path.with_name(path.name + suffix)
        if side.exists():  # a hot journal is rolled back when the copy is opened: only committed data remains
            shutil.copyfile(side, copy.with_name(copy.name + suffix))
    conn = sqlite3.connect(str(copy))
    try:
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as err:
            raise DataError(f"{path}: unreadable SQLite database: {err}") from err
        if "topics" not in tables or "messages" not in tables:
            raise DataError(f"{path}: SQLite file has no rosbag2 'topics'/'messages' tables (tables: {sorted(tables)})")
        defs: dict[str, tuple[str, str]] = {}
        if "message_definitions" in tables:
            for typ, enc, text, digest in conn.execute(
                "SELECT topic_type, encoding, encoded_message_definition, type_description_hash FROM message_definitions"
            ):
                if enc == "ros2msg" and text:
                    defs[typ] = (text, digest)
        topics: dict[int, _RawConnection] = {}
        for tid, name, typ in conn.execute("SELECT id, name, type FROM topics"):
            msgdef, digest = defs.get(typ, (None, None))
            topics[tid] = _RawConnection(name, typ, msgdef, digest)
        count = 0
        try:
            for tid, ts, data in conn.execute("SELECT topic_id, timestamp, data FROM messages ORDER BY timestamp, id"):
                if tid in topics:
                    count += 1
                    yield topics[tid], int(ts), bytes(data)
        except sqlite3.DatabaseError as err:  # a damaged page: keep what was read, and say so
            notes.append(f"{path.name}: SQLite read stopped ({err}) after {count} message(s)")
        notes.append(f"{path.name}: read {count} committed message(s) from SQLite without metadata")
    finally:
        conn.close()


def recover_bag(src: str | Path, dst: str | Path, storage: str | None = None) -> str:
    """Rebuild a readable, standard rosbag2 directory ``dst`` from a damaged ROS 2 bag ``src``.

    Handles a rosbag2 directory without ``metadata.yaml`` (recorder killed), an MCAP file without summary/footer
    (intact chunks are kept, a truncated last chunk is lost) and a bare ``.mcap``/``.db3`` file. Messages are copied
    unchanged with rosbags' Writer, with the message definitions stored in the source (or from the Kilted typestore
    when the source has none).

    Args:
        src: the damaged bag directory or storage file.
        dst: the new bag directory (must not exist).
        storage: ``"mcap"`` or ``"sqlite3"`` for the output; default: the source's format.

    Returns:
        a one-line description of what was recovered (message counts, topics skipped, truncation).

    Raises:
        FileNotFoundError: ``src`` does not exist.
        DataError: ``src`` holds no MCAP or SQLite storage, or a topic's type is unknown and has no definition.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer

    src, dst = Path(src), Path(dst)
    fmt = detect_format(src)
    if fmt == "ros1":
        raise DataError(f"{src}: is a ROS 1 bag; recovery is for ROS 2 bags only")
    files = [(src, fmt)] if src.is_file() else _storage_files(src)
    out_fmt = storage or fmt
    if out_fmt not in STORAGE_CHOICES:
        raise DataError(f"recover_bag: storage = {storage!r} must be one of {STORAGE_CHOICES}")
    notes: list[str] = []
    skipped: set[str] = set()
    counts = 0
    ts = typestore()
    with tempfile.TemporaryDirectory(prefix="dzid_sqlite_") as tmp:
        writer = Writer(dst, version=9, storage_plugin=StoragePlugin[out_fmt.upper()])
        writer.open()
        try:
            conns: dict[tuple[str, str], Any] = {}
            for path, kind in files:
                it = _iter_mcap_raw(path, notes) if kind == "mcap" else _iter_sqlite_raw(path, Path(tmp), notes)
                for raw_conn, t_ns, data in it:
                    key = (raw_conn.topic, raw_conn.msgtype)
                    if key not in conns:
                        conns[key] = _add_recovered_connection(writer, raw_conn, ts, skipped)
                    if conns[key] is not None:
                        writer.write(conns[key], t_ns, data)
                        counts += 1
        except BaseException:
            writer.close()
            raise
        writer.close()
    msg = f"recovered {counts} message(s) from damaged bag {src} ({'; '.join(notes) or 'no notes'})"
    if skipped:
        msg += f"; skipped topics with unknown types: {sorted(skipped)}"
    return msg


def _add_recovered_connection(writer: Any, raw: _RawConnection, ts: Any, skipped: set[str]) -> Any:
    from rosbags.rosbag2 import WriterError
    from rosbags.typesys import TypesysError

    try:
        if raw.msgdef:
            digest = raw.digest or _digest_of(raw.msgtype, raw.msgdef)
            return writer.add_connection(raw.topic, raw.msgtype, msgdef=raw.msgdef, rihs01=digest)
        if raw.msgtype in ts.fielddefs:
            return writer.add_connection(raw.topic, raw.msgtype, typestore=ts)
    except (WriterError, TypesysError, KeyError, ValueError):  # a bad definition loses that topic only: reported
        pass
    skipped.add(f"{raw.topic} ({raw.msgtype})")
    return None


def _digest_of(msgtype: str, msgdef: str) -> str:
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.EMPTY)
    types: dict[str, Any] = {}
    sep = "=" * 80 + "\n"
    parts = msgdef.split(sep)
    types.update(get_types_from_msg(parts[0], msgtype))
    for part in parts[1:]:
        head, _, body = part.partition("\n")
        types.update(get_types_from_msg(body, head.removeprefix("MSG: ").strip()))
    store.register(types)
    return store.hash_rihs01(msgtype)


# ---------------------------------------------------------------------------------------------------------------
# JointState extraction


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
    report: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.log_ns)


_FIELDS = ("position", "velocity", "effort")


def _joint_state_layout(raw: bytes | memoryview, cdr: bool) -> tuple[list[str], dict[str, tuple[int, int]], int] | None:
    """Byte layout of one serialized JointState: (names, {field: (offset, count)}, end of the name block).

    ``cdr`` True: ROS 2 CDR (little endian, 4-byte encapsulation header, offsets aligned to the element size);
    False: ROS 1 serialization (no alignment). Returns None for anything unexpected (the caller then falls back to
    rosbags' deserializer).
    """
    b = bytes(raw)
    try:
        if cdr:
            if b[:2] != b"\x00\x01":  # CDR_LE only; anything else goes the slow path
                return None
            base, pos = 4, 12
        else:
            base, pos = 0, 12

        def align(p: int, n: int) -> int:
            if not cdr:
                return p
            r = (p - base) % n
            return p + (n - r if r else 0)

        def u32(p: int) -> int:
            return int.from_bytes(b[p : p + 4], "little")

        pos = align(pos, 4)
        flen = u32(pos)
        pos += 4 + flen
        pos = align(pos, 4)
        n = u32(pos)
        pos += 4
        names = []
        for _ in range(n):
            pos = align(pos, 4)
            slen = u32(pos)
            pos += 4
            s = b[pos : pos + slen]
            names.append((s[:-1] if cdr else s).decode())
            pos += slen
        names_end = pos
        fields: dict[str, tuple[int, int]] = {}
        for name in _FIELDS:
            pos = align(pos, 4)
            cnt = u32(pos)
            pos += 4
            if cnt:
                pos = align(pos, 8)
            fields[name] = (pos, cnt)
            pos += 8 * cnt
        if pos != len(b) and not (cdr and len(b) - pos < 4):  # CDR may pad the end to 4 bytes
            return None
        return names, fields, names_end
    except (IndexError, UnicodeDecodeError):
        return None


def _decode_block(
    raws: list[bytes], cdr: bool
) -> tuple[list[str], np.ndarray, dict[str, np.ndarray], np.ndarray] | None:
    """Vectorized decode of equally long serialized JointState messages.

    Returns (names, stamp_ns (n,), {field: (n, k) values}, ok (n,) bool) where ``ok`` marks the messages whose
    structural bytes (frame_id, names, counts, padding: everything except seq, stamp and float data) equal the first
    message's, i.e. that share its layout; None if the first message is not understood.
    """
    layout = _joint_state_layout(raws[0], cdr)
    if layout is None:
        return None
    names, fields, _ = layout
    length = len(raws[0])
    arr = np.frombuffer(b"".join(raws), dtype=np.uint8).reshape(len(raws), length)
    structural = np.ones(length, dtype=bool)
    structural[4:12] = False  # header stamp (sec, nanosec) after the CDR encapsulation header / the ROS 1 seq
    if not cdr:
        structural[0:4] = False  # ROS 1 header seq
    for off, cnt in fields.values():
        structural[off : off + 8 * cnt] = False
    cols = np.nonzero(structural)[0]
    sub = arr[:, cols]
    ok = np.all(sub == sub[0], axis=1)
    sec = arr[:, 4:8].copy().view("<i4" if cdr else "<u4")[:, 0].astype(np.int64)
    nsec = arr[:, 8:12].copy().view("<u4")[:, 0].astype(np.int64)
    values = {name: arr[:, off : off + 8 * cnt].copy().view("<f8") for name, (off, cnt) in fields.items()}
    return names, sec * 1_000_000_000 + nsec, values, ok


def read_joint_states(handle: BagHandle, topic: str) -> JointStateSeries:
    """Decode every message of JointState ``topic`` in an open bag into name-mapped arrays.

    Messages whose names and field counts are laid out like their neighbours are decoded in bulk with numpy (the
    layout of the first one of each block is checked against rosbags' own deserializer); any other message goes
    through rosbags' deserializer. Joints are mapped by name in every message. A message is dropped, and counted in
    ``report["dropped"]`` with the first message index, when its name list is empty, contains a duplicate name, or
    a non-empty position/velocity/effort has a different length than the name list.

    Raises:
        DataError: the topic is not in the bag or is not sensor_msgs/msg/JointState; names bag and topic.
    """
    from rosbags.highlevel import AnyReaderError

    reader = handle.reader
    conns = [c for c in reader.connections if c.topic == topic]
    if not conns:
        raise DataError(f"{handle.path}: topic {topic} not in bag; topics: {sorted({c.topic for c in reader.connections})}")
    bad = [c.msgtype for c in conns if c.msgtype != JOINT_STATE_TYPE]
    if bad:
        raise DataError(f"{handle.path}: topic {topic} has type {bad[0]}, expected {JOINT_STATE_TYPE}")
    cdr = reader.is2
    raws: list[bytes] = []
    logs: list[int] = []
    for _, t_ns, raw in reader.messages(connections=conns):
        raws.append(raw if isinstance(raw, bytes) else bytes(raw))
        logs.append(t_ns)
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
            block = _decode_block([raws[i] for i in pending.tolist()], cdr)
            if block is None or not _layout_matches_rosbags(reader, raws[int(pending[0])], block, conns[0].msgtype):
                slow.extend(pending.tolist())
                break
            names, st, fv, ok = block
            blocks.append(_Block(tuple(names), pending[ok], st[ok], {f: v[ok] for f, v in fv.items()}))
            pending = pending[~ok]
    undecodable: dict[str, Any] = {}
    for i in slow:
        try:
            msg = reader.deserialize(raws[i], conns[0].msgtype)
        except AnyReaderError as err:  # a corrupt message: counted and dropped, never a traceback
            d = undecodable.setdefault(f"undecodable message ({err})", {"count": 0, "first_message": i})
            d["count"] += 1
            continue
        stamp = int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)
        vals = {f: np.asarray(getattr(msg, f), dtype=np.float64)[None, :] for f in _FIELDS}
        blocks.append(_Block(tuple(msg.name), np.asarray([i]), np.asarray([stamp], dtype=np.int64), vals))
    return _map_by_name(str(handle.path), topic, blocks, log_ns, undecodable)


@dataclass
class _Block:
    """Messages sharing one layout: names, message indices (n,), stamps (n,) [ns], {field: (n, k) values}."""

    names: tuple[str, ...]
    index: np.ndarray
    stamp: np.ndarray
    values: dict[str, np.ndarray]


def _layout_matches_rosbags(reader: Any, raw: bytes, block: tuple, msgtype: str) -> bool:
    names, st, fv, _ = block
    try:
        msg = reader.deserialize(raw, msgtype)
    except Exception:  # noqa: BLE001 - a message rosbags cannot read is handled (and reported) by the slow path
        return False
    if list(msg.name) != names:
        return False
    if int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec) != int(st[0]):
        return False
    for f in _FIELDS:
        ref = np.asarray(getattr(msg, f), dtype=np.float64)
        got = fv[f][0]
        if ref.shape != got.shape or not np.array_equal(ref, got, equal_nan=True):
            return False
    return True


def _map_by_name(
    bag: str, topic: str, blocks: list[_Block], log_ns: np.ndarray, undecodable: dict[str, Any]
) -> JointStateSeries:
    m = len(log_ns)
    dropped: dict[str, dict[str, Any]] = dict(undecodable)
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
            for f in _FIELDS:
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
        1 for a, b in zip(ids[:-1][ids[1:] != ids[:-1]].tolist(), ids[1:][ids[1:] != ids[:-1]].tolist())
        if set(by_id[a]) == set(by_id[b])
    )
    row_of = np.cumsum(keep) - 1
    arrays = {f: np.full((len(kept), len(joint_names)), np.nan) for f in _FIELDS}
    present = {f: 0 for f in _FIELDS}
    stamp = np.zeros(len(kept), dtype=np.int64)
    for blk in valid:
        rows = row_of[blk.index]
        stamp[rows] = blk.stamp
        cols = np.asarray([order[n] for n in blk.names])
        for f in _FIELDS:
            v = blk.values[f]
            if v.shape[1]:
                arrays[f][rows[:, None], cols[None, :]] = v
                present[f] += len(rows)
    report: dict[str, Any] = {
        "messages": m,
        "messages_used": int(len(kept)),
        "dropped": dropped,
        "joint_order_changes": int(order_changes),
        "messages_with_field": present,
    }
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


# ---------------------------------------------------------------------------------------------------------------
# Writing a Recording


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
        "duration_s": (stop - start) * 1e-9,
        "samples": int(len(t)),
        "notes": meta.pop("notes", ""),
    }
    doc.update(_plain(meta))
    doc.update(_plain(extra))
    return doc


def _iso(t_ns: int) -> str:
    return datetime.fromtimestamp(t_ns * 1e-9, tz=timezone.utc).isoformat()


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


def _field(values: np.ndarray) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    return np.zeros(0) if arr.size == 0 or np.all(np.isnan(arr)) else arr


class MessageEncoders:
    """Serialize the three recorded message types to CDR with the rosbags typestore (shared by writer and recorder).

    Args:
        joint_names: (J,) joint names written into JointState.name and JointTrajectory.joint_names.
    """

    def __init__(self, joint_names: Sequence[str]) -> None:
        ts = typestore()
        self.ts = ts
        self.names = list(joint_names)
        self.Time = ts.types["builtin_interfaces/msg/Time"]
        self.Duration = ts.types["builtin_interfaces/msg/Duration"]
        self.Header = ts.types["std_msgs/msg/Header"]
        self.JointState = ts.types[JOINT_STATE_TYPE]
        self.F64 = ts.types[COMMAND_TYPE]
        self.Layout = ts.types["std_msgs/msg/MultiArrayLayout"]
        self.Traj = ts.types[REFERENCE_TYPE]
        self.Point = ts.types["trajectory_msgs/msg/JointTrajectoryPoint"]

    def header(self, t_ns: int) -> Any:
        """std_msgs/Header with stamp ``t_ns`` [ns] and an empty frame_id."""
        return self.Header(stamp=self.Time(sec=t_ns // 1_000_000_000, nanosec=t_ns % 1_000_000_000), frame_id="")

    def joint_state(self, t_ns: int, q: np.ndarray, dq: np.ndarray, tau: np.ndarray) -> bytes:
        """CDR bytes of a JointState: q (J,) [rad], dq (J,) [rad/s], tau (J,) [N·m].

        A field that is empty or NaN for every joint is written empty (JointState's "not available").
        """
        msg = self.JointState(
            header=self.header(t_ns),
            name=self.names,
            position=_field(q),
            velocity=_field(dq),
            effort=_field(tau),
        )
        return bytes(self.ts.serialize_cdr(msg, JOINT_STATE_TYPE))

    def command(self, tau: np.ndarray) -> bytes:
        """CDR bytes of a Float64MultiArray carrying tau (J,) [N·m] (empty layout, as ros2_control expects)."""
        msg = self.F64(layout=self.Layout(dim=[], data_offset=0), data=np.asarray(tau, dtype=np.float64))
        return bytes(self.ts.serialize_cdr(msg, COMMAND_TYPE))

    def reference(self, t_ns: int, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> bytes:
        """CDR bytes of a one-point JointTrajectory (time_from_start 0) with q/dq/ddq (J,) [rad, rad/s, rad/s²]."""
        point = self.Point(
            positions=np.asarray(q, dtype=np.float64),
            velocities=np.asarray(dq, dtype=np.float64),
            accelerations=np.asarray(ddq, dtype=np.float64),
            effort=np.zeros(0),
            time_from_start=self.Duration(sec=0, nanosec=0),
        )
        msg = self.Traj(header=self.header(t_ns), joint_names=self.names, points=[point])
        return bytes(self.ts.serialize_cdr(msg, REFERENCE_TYPE))

    def encode(self, kind: str, t_ns: int, rows: tuple[np.ndarray, ...], i: int) -> bytes:
        """Encode row ``i`` of a stream ``kind`` (``state``, ``command`` or ``reference``)."""
        if kind == "state":
            return self.joint_state(t_ns, rows[0][i], rows[1][i], rows[2][i])
        if kind == "command":
            return self.command(rows[0][i])
        return self.reference(t_ns, rows[0][i], rows[1][i], rows[2][i])


# ---------------------------------------------------------------------------------------------------------------
# Reading a Recording back


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
            t_list, qs, dqs, ddqs = [], [], [], []
            for k, (c, _t, raw) in enumerate(h.reader.messages(connections=conns)):
                msg = h.reader.deserialize(raw, c.msgtype)
                try:
                    cols = [list(msg.joint_names).index(n) for n in names]
                except ValueError as err:
                    raise DataError(
                        f"{path}: topic {reference_topic} message {k} field joint_names {list(msg.joint_names)} "
                        f"lacks a joint of {list(names)}"
                    ) from err
                t0 = int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)
                for p in msg.points:
                    t_list.append(t0 + int(p.time_from_start.sec) * 1_000_000_000 + int(p.time_from_start.nanosec))
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
