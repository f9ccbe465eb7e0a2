"""Bag formats and the message types of a recording (core, no ROS): content-based format detection, the typestore.

The format of a bag is detected from the file content (magic bytes), never from its name: ``"ros1"`` (a ROS 1
``.bag``), ``"mcap"`` or ``"sqlite3"`` (ROS 2 storage files, alone or inside a rosbag2 directory).
"""

from __future__ import annotations

import os
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
    "detect_format",
    "mcap_has_footer",
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


def storage_files(directory: Path) -> list[tuple[Path, str]]:
    """``(path, "mcap" | "sqlite3")`` of every storage file in a rosbag2 directory (by content), sorted by name.

    SQLite side files (``-journal``, ``-wal``, ``-shm``) are skipped.
    """
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
    kinds = {k for _, k in storage_files(path)}
    if len(kinds) == 1:
        return kinds.pop()
    if not kinds:
        raise DataError(f"{path}: directory holds no .mcap or .db3 storage file (checked by content)")
    raise DataError(f"{path}: directory mixes MCAP and SQLite storage files; cannot tell which bag it is")


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
