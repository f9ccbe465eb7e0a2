"""Recovery of unfinished ROS 2 bags (core, no ROS): a recorder that was killed leaves no ``metadata.yaml`` and
an MCAP file without summary/footer. The intact messages are copied unchanged with rosbags' own Writer into a
standard rosbag2 directory. Recovery is always reported (a one-line description), never silent.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import DataError
from .format import STORAGE_CHOICES, detect_format, storage_files, typestore

__all__ = ["recover_bag"]


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
                "SELECT topic_type, encoding, encoded_message_definition, type_description_hash "
                "FROM message_definitions"
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
    files = [(src, fmt)] if src.is_file() else storage_files(src)
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
