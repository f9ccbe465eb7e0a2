"""Bag formats and the message types of a recording (core, no ROS): content-based format detection, the typestore.

The format of a bag is detected from the file content (magic bytes), never from its name: ``"ros1"`` (a ROS 1
``.bag``), ``"mcap"`` or ``"sqlite3"`` (ROS 2 storage files, alone or inside a rosbag2 directory). A storage file
compressed as a whole with zstd (rosbag2 ``compression_mode: file``, e.g. ``bag_0.mcap.zstd``) is recognised by the
format of its decompressed head; :func:`is_zstd` tells it apart.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from ...errors import DataError

__all__ = [
    "COMMAND_TYPE",
    "DEFAULT_COMMAND_TOPIC",
    "DEFAULT_JOINT_STATE_TOPIC",
    "DEFAULT_REFERENCE_TOPIC",
    "EPISODE_FILE",
    "JOINT_STATE_TYPE",
    "REFERENCE_TYPE",
    "STORAGE_CHOICES",
    "ZSTD_MAGIC",
    "detect_format",
    "is_zstd",
    "mcap_has_footer",
    "zstd_module",
    "storage_files",
    "typestore",
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
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


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


def _kind_of_head(head: bytes) -> str | None:
    if head.startswith(_MAGIC_ROS1):
        return "ros1"
    if head.startswith(_MAGIC_MCAP):
        return "mcap"
    if head.startswith(_MAGIC_SQLITE):
        return "sqlite3"
    return None


def zstd_module() -> Any:
    """The zstd module rosbags itself uses: ``compression.zstd`` (Python >= 3.14) or ``backports.zstd``."""
    if sys.version_info >= (3, 14):
        from compression import zstd  # type: ignore[import-not-found]
    else:
        from backports import zstd
    return zstd


def is_zstd(path: Path) -> bool:
    """True if ``path`` is a zstd frame (a rosbag2 storage file compressed as a whole)."""
    try:
        with path.open("rb") as f:
            return f.read(4) == ZSTD_MAGIC
    except OSError:
        return False


def _magic(path: Path) -> str | None:
    zstd = zstd_module()
    try:
        with path.open("rb") as f:
            head = f.read(16)
        if head.startswith(ZSTD_MAGIC):  # a whole-file compressed storage file: the format of what it holds
            with zstd.open(path, "rb") as z:
                head = z.read(16)
    except (OSError, EOFError, zstd.ZstdError):  # unreadable, or a broken zstd frame: not a bag file
        return None
    return _kind_of_head(head)


def storage_files(directory: Path) -> list[tuple[Path, str]]:
    """``(path, "mcap" | "sqlite3")`` of every storage file in a rosbag2 directory (by content), sorted by name.

    SQLite side files (``-journal``, ``-wal``, ``-shm``) are skipped. A zstd-compressed storage file is listed with
    the format it holds (see :func:`is_zstd`).

    Raises:
        DataError: a zstd-compressed file cannot be decompressed (names the file).
    """
    out = []
    for p in sorted(directory.iterdir()):
        if p.is_file() and not p.name.endswith(("-journal", "-wal", "-shm")):
            kind = _magic(p)
            if kind is None and is_zstd(p):
                raise DataError(f"{p}: zstd-compressed file whose content cannot be decompressed "
                                "(corrupt or truncated)")
            if kind in ("mcap", "sqlite3"):
                out.append((p, kind))
    return out


def detect_format(path: str | Path) -> str:
    """Detect a bag's format from its content: ``"ros1"``, ``"mcap"`` or ``"sqlite3"``.

    Args:
        path: a ROS 1 bag file, a rosbag2 directory, or a single ``.mcap``/``.db3`` storage file.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        DataError: nothing in ``path`` looks like a ROS 1 bag, an MCAP file or an SQLite database, or a
            zstd-compressed storage file cannot be decompressed.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"bag {path} does not exist")
    if path.is_file():
        kind = _magic(path)
        if kind is None and is_zstd(path):
            raise DataError(f"{path}: zstd-compressed file whose content cannot be decompressed "
                            "(corrupt or truncated)")
        if kind is None:
            raise DataError(f"{path}: not a bag (neither a ROS 1 bag, an MCAP file nor an SQLite database)"
                            f"{_lerobot_hint(path)}")
        return kind
    kinds = {k for _, k in storage_files(path)}
    if len(kinds) == 1:
        return kinds.pop()
    if not kinds:
        raise DataError(f"{path}: directory holds no .mcap or .db3 storage file (checked by content)"
                        f"{_lerobot_hint(path)}")
    raise DataError(f"{path}: directory mixes MCAP and SQLite storage files; cannot tell which bag it is")


def _lerobot_hint(path: Path) -> str:
    """What to do with a LeRobot dataset (or a parquet file) given as a bag ("" for anything else)."""
    from ..lerobot import not_a_bag_hint

    return not_a_bag_hint(path)


def mcap_has_footer(path: Path) -> bool:
    """True if the MCAP file ends with its closing magic (a killed recorder leaves no summary/footer)."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() < 8 + 37:
                return False
            f.seek(-8, os.SEEK_END)
            return f.read(8) == _MAGIC_MCAP
    except OSError:
        return False
