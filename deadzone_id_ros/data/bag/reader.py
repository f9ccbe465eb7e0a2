"""Opening any bag for reading (core, no ROS): :class:`BagHandle` and :func:`open_bag` over rosbags' AnyReader.

ROS 1 bags, ROS 2 sqlite3 and MCAP bags are read through :class:`rosbags.highlevel.AnyReader`. The storage files of
a finished rosbag2 directory are opened directly (``metadata.yaml`` is only checked against them, so a QoS text that
differs from the storage's loses nothing). zstd-compressed storage files are decompressed into a temporary
directory first. A bag that rosbags cannot read as it is (no ``metadata.yaml``, an MCAP file without summary or with
a layout its indexed reader does not handle, a topic whose type definition does not parse, a bare storage file, an
MCAP file whose messages are not ROS 2 CDR: JointState in ROS 1, JSON or protobuf encoding is converted, see
:mod:`.mcap_encodings`) is rebuilt by :func:`~deadzone_id_ros.data.bag.recover.recover_files` into a temporary
directory; the handle says so.
Every temporary directory is removed when the bag is closed, also when opening fails.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import DataError
from .format import detect_format, is_zstd, mcap_has_footer, storage_files, typestore
from .layout import declared_counts, decompress_files, load_metadata, mcap_layout_problem
from .mcap_encodings import non_cdr_channels
from .recover import recover_files

if TYPE_CHECKING:
    from rosbags.highlevel import AnyReader
    from rosbags.interfaces import Connection

__all__ = ["BagHandle", "open_bag"]

_SUFFIX = {"mcap": ".mcap", "sqlite3": ".db3"}


@dataclass
class BagHandle:
    """An open bag: the rosbags AnyReader plus what was done to open it.

    Attributes:
        path: the bag as the user named it.
        format: ``"ros1"``, ``"mcap"`` or ``"sqlite3"`` (from content).
        reader: the open :class:`rosbags.highlevel.AnyReader`.
        recovered: True when the bag was damaged or in a layout rosbags cannot read, and read from a rebuilt copy.
        damaged: True when the bag itself is damaged (no metadata.yaml in a rosbag2 directory, an unfinished MCAP, a
            storage file rosbags cannot open, a chunk or page that cannot be read); False for a valid layout that was
            only rebuilt to be read (a bare storage file, MCAP without indexes, message compression).
        losses: what was lost while reading, one line each (unreadable chunks, a truncated end, fewer messages than
            declared): a user must see these in the verdict, not only among the notes.
        notes: human-readable notes about opening and reading (decompression, recovery, topics or records lost,
            message counts that disagree with ``metadata.yaml`` or the MCAP summary).
        declared: ``{topic: message count}`` as ``metadata.yaml`` or the MCAP summary declares it (may be empty).
        declared_by: where ``declared`` comes from (``"metadata.yaml"`` or ``"MCAP summary"``).
    """

    path: Path
    format: str
    reader: Any
    recovered: bool = False
    notes: list[str] = field(default_factory=list)
    damaged: bool = False
    losses: list[str] = field(default_factory=list)
    declared: dict[str, int] = field(default_factory=dict)
    declared_by: str = ""

    rebuild: Callable[[str], AnyReader] | None = field(default=None, repr=False)
    """Rebuilds the bag by streaming and returns a new open reader (None: not possible, or done already)."""

    def read_topic(self, topic: str) -> list[tuple[Connection, int, bytes]]:
        """Every ``(connection, log time [ns], raw bytes)`` of ``topic``, in log-time order.

        When rosbags' reader fails in the middle of the bag (a corrupt chunk), the bag is rebuilt once by streaming
        (the unreadable chunk loses only its own messages, named in ``notes``) and the topic is read again. A count
        that differs from ``declared`` is added to ``notes``.

        Raises:
            DataError: reading fails also after rebuilding (or a rebuild is not possible: ROS 1); names the bag, the
                topic and the index of the message that could not be read (0-based, in log-time order).
        """
        try:
            items = self._read_all(topic)
        except DataError as err:
            if self.rebuild is None:
                raise
            rebuild, self.rebuild = self.rebuild, None
            self.reader = rebuild(str(err).removeprefix(f"{self.path}: "))
            items = self._read_all(topic)
        want = self.declared.get(topic)
        if want is not None and want != len(items):
            note = f"topic {topic}: read {len(items)} message(s), but the {self.declared_by} declares {want}"
            if note not in self.notes:
                self.notes.append(note)
                if len(items) < want:
                    self.losses.append(f"topic {topic}: {want - len(items)} of {want} message(s) lost")
        return items

    def _read_all(self, topic: str) -> list[tuple[Connection, int, bytes]]:
        out: list[tuple[Connection, int, bytes]] = []
        conns = [c for c in self.reader.connections if c.topic == topic]
        if not conns:
            return out
        it = iter(self.reader.messages(connections=conns))
        while True:
            try:
                conn, t_ns, raw = next(it)
            except StopIteration:
                return out
            except Exception as err:  # noqa: BLE001 - rosbags, lz4 and zstd raise their own types; all mean the same
                raise DataError(f"{self.path}: topic {topic}: cannot read message {len(out)} (0-based, log-time "
                                f"order): {type(err).__name__}: {_first_line(err)}") from err
            out.append((conn, t_ns, raw if isinstance(raw, bytes) else bytes(raw)))


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:300] if text else ""


@contextlib.contextmanager
def open_bag(path: str | Path) -> Iterator[BagHandle]:
    """Open any bag for reading (context manager); closes everything it opened, also when opening fails halfway.

    ROS 1 bags are recognised by content whatever their suffix. zstd-compressed storage files (with or without
    ``metadata.yaml``, one or several) are decompressed into a temporary directory. A rosbag2 directory without
    ``metadata.yaml``, a bare ``.mcap``/``.db3`` file, an MCAP file without summary or in a layout rosbags' indexed
    reader misreads, a bag written with ``compression_mode: message``, and a bag with a topic whose type definition
    does not parse are recovered into a temporary directory first (see :func:`~.recover.recover_bag`); a topic that
    cannot be read is left out and named. ``BagHandle.recovered`` and ``notes`` say what was done.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        DataError: the bag cannot be read (names the bag and the reason in one line).
    """
    from rosbags.highlevel import AnyReader, AnyReaderError

    path = Path(path)
    fmt = detect_format(path)
    with contextlib.ExitStack() as stack:

        def tmpdir(prefix: str) -> Path:
            return Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix)))

        handle = BagHandle(path=path, format=fmt, reader=None)
        if fmt == "ros1":
            paths = [_with_suffix(path, ".bag", tmpdir)]
            files: list[tuple[Path, str]] = []
            message_zstd = False
        else:
            files, paths, message_zstd = _prepare_ros2(handle, tmpdir)
        try:
            reader = _open_reader(AnyReader, paths)
        except AnyReaderError as err:
            if fmt == "ros1" or handle.recovered:
                raise DataError(f"{path}: cannot read bag: {_first_line(err)}") from err
            why = f"rosbags cannot open it as it is ({_first_line(err)[:200]})"
            handle.damaged = True
            paths = [_recover(handle, files, tmpdir, message_zstd, why)]
            try:
                reader = _open_reader(AnyReader, paths)
            except AnyReaderError as err2:
                raise DataError(f"{path}: cannot read bag: {_first_line(err2)}") from err2
        stack.callback(reader.close)
        handle.reader = reader
        if fmt != "ros1" and not handle.recovered:

            def rebuild(why: str) -> AnyReader:
                handle.damaged = True  # reading failed in the middle: a chunk or page is damaged
                new = _open_reader(AnyReader, [_recover(handle, files, tmpdir, message_zstd, why)])
                stack.callback(new.close)
                return new

            handle.rebuild = rebuild
        _check_topics(handle)
        yield handle


def _open_reader(any_reader: type[AnyReader], paths: list[Path]) -> AnyReader:
    reader = any_reader(paths, default_typestore=typestore())
    reader.open()
    return reader


def _with_suffix(path: Path, suffix: str, tmpdir: Any) -> Path:
    """``path`` itself if it ends with ``suffix`` (AnyReader picks the reader by suffix), else a link that does."""
    if path.suffix == suffix:
        return path
    link = tmpdir("dzid_bag_") / (path.name + suffix)
    link.symlink_to(path.resolve())
    return link


def _prepare_ros2(handle: BagHandle, tmpdir: Any) -> tuple[list[tuple[Path, str]], list[Path], bool]:
    """Decompress, check the layout and recover where needed; returns (storage files, paths for AnyReader, message
    compression)."""
    path = handle.path
    files = [(path, handle.format)] if path.is_file() else storage_files(path)
    meta, why = (None, None) if path.is_file() else load_metadata(path)
    if why:
        handle.notes.append(why)
    if any(is_zstd(p) for p, _ in files):
        files, n = decompress_files(files, tmpdir("dzid_unzstd_"))
        handle.notes.append(f"decompressed {n} zstd-compressed storage file(s)")
    handle.declared, handle.declared_by = declared_counts(meta, files)
    message_zstd = meta is not None and str(meta.get("compression_mode", "")).lower() == "message"
    reasons = []
    if path.is_file():
        reasons.append("a bare storage file")
    elif meta is None:
        reasons.append("no usable metadata.yaml")
        handle.damaged = True
    if message_zstd:
        reasons.append("messages compressed one by one (compression_mode: message)")
    for p, kind in files:
        if kind == "mcap":
            problem = "no summary/footer (unfinished)" if not mcap_has_footer(p) else mcap_layout_problem(p)
            handle.damaged |= not mcap_has_footer(p)
            if problem:
                reasons.append(f"{p.name}: {problem}")
            profile, foreign = non_cdr_channels(p)
            if foreign:  # valid MCAP in another encoding: converted while rebuilding, not damage
                reasons.append(f"{p.name}: MCAP profile {profile!r} with message encoding(s) "
                               f"{sorted({c.message_encoding for c in foreign})} (read: ROS 2 CDR only)")
    if meta is not None:
        _check_file_list(handle, meta, files)
    if reasons:
        return files, [_recover(handle, files, tmpdir, message_zstd, "; ".join(reasons))], message_zstd
    return files, [_with_suffix(p, _SUFFIX[k], tmpdir) for p, k in files], message_zstd


def _recover(handle: BagHandle, files: list[tuple[Path, str]], tmpdir: Any, message_zstd: bool, why: str) -> Path:
    """Rebuild the bag from ``files`` by streaming (see :func:`recover_files`); one note says what and why."""
    out = tmpdir("dzid_recover_") / "bag"
    losses: list[str] = []
    text = recover_files(files, out, handle.format, label=str(handle.path), message_zstd=message_zstd, losses=losses,
                         damaged=handle.damaged)
    handle.losses += losses
    handle.damaged |= bool(losses)
    handle.notes.append(f"{text}; read by streaming because: {why}")
    handle.recovered = True
    return out


def _check_file_list(handle: BagHandle, meta: dict[str, Any], files: list[tuple[Path, str]]) -> None:
    """Note storage files that ``metadata.yaml`` names but that are missing (the rest is still read)."""
    have = {p.name for p, _ in files} | {p.name + ".zstd" for p, _ in files}
    listed = [Path(str(x)).name for x in meta.get("relative_file_paths") or []]
    missing = [name for name in listed if name not in have and not (handle.path / name).is_file()]
    if missing:
        handle.notes.append(f"metadata.yaml names storage file(s) that are missing: {missing}")


def _check_topics(handle: BagHandle) -> None:
    """Note topics that the declaration lists with messages but that the storage does not hold."""
    present = {c.topic for c in handle.reader.connections}
    for topic, n in sorted(handle.declared.items()):
        if n and topic not in present:
            handle.notes.append(f"topic {topic}: the {handle.declared_by} declares {n} message(s), none readable")
            handle.losses.append(f"topic {topic}: all {n} declared message(s) lost")
