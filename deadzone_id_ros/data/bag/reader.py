"""Opening any bag for reading (core, no ROS): :class:`BagHandle` and :func:`open_bag` over rosbags' AnyReader.

ROS 1 bags, ROS 2 sqlite3 and MCAP bags are read through :class:`rosbags.highlevel.AnyReader`. A damaged ROS 2 bag
(no ``metadata.yaml``, an MCAP file without summary, a bare storage file) is first rebuilt by
:func:`~deadzone_id_ros.data.bag.recover.recover_bag` into a temporary directory; the handle says so.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import DataError
from .format import detect_format, mcap_has_footer, storage_files, typestore
from .recover import recover_bag

__all__ = ["BagHandle", "open_bag"]


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
                needs_recovery = any(not mcap_has_footer(p) for p, _ in storage_files(path))
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
