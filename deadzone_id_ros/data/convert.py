"""CSV time series -> rosbag2 of sensor_msgs/JointState (core of ``deadzone-id convert``; no ROS).

Non-ROS logs (for example the DFKI double-pendulum CSVs: ``time, pos_meas1, vel_meas1, tau_meas1, ...``) are
turned into the same kind of bag a live recording gives, so they go through the same data path. The user names the
columns: one time column and, per joint, ``NAME:pos=COL[,vel=COL][,effort=COL][,command=COL]``. A field without a
column is written as an empty array (JointState's convention for "not available"); ``command`` columns (all joints
or none) become ``/effort_controller/commands``.
"""

from __future__ import annotations

import csv
import os
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DataError
from ..stamps import NS_PER_S
from .bag import write_recording
from .types import Recording

__all__ = ["JointColumns", "TIME_UNITS", "convert_csv", "parse_joint_spec", "read_csv_recording"]

TIME_UNITS = {"s": float(NS_PER_S), "ms": 1e6, "us": 1e3, "ns": 1.0}
_KEYS = ("pos", "vel", "effort", "command")


@dataclass(frozen=True)
class JointColumns:
    """CSV columns of one joint.

    Attributes:
        name: joint name written into JointState.name.
        pos: position column [rad] (required).
        vel: velocity column [rad/s], or None (then JointState.velocity is empty).
        effort: effort column [N·m or as logged], or None (then JointState.effort is empty).
        command: commanded torque column [N·m], or None.
    """

    name: str
    pos: str
    vel: str | None = None
    effort: str | None = None
    command: str | None = None

    def __post_init__(self) -> None:
        if not self.name or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.name):
            raise ValueError(f"JointColumns.name = {self.name!r} must be a ROS name (letters, digits, underscores)")
        if not self.pos:
            raise ValueError(f"JointColumns.pos of joint {self.name} must name a column")


def parse_joint_spec(spec: str) -> JointColumns:
    """Parse ``NAME:pos=COL[,vel=COL][,effort=COL][,command=COL]``.

    Raises:
        DataError: malformed spec, unknown key, repeated key or missing ``pos`` (names the spec).
    """
    name, sep, rest = spec.partition(":")
    if not sep or not name or not rest:
        raise DataError(f"joint spec {spec!r}: expected NAME:pos=COL[,vel=COL][,effort=COL][,command=COL]")
    cols: dict[str, str] = {}
    for item in rest.split(","):
        key, eq, col = item.partition("=")
        key, col = key.strip(), col.strip()
        if not eq or not col:
            raise DataError(f"joint spec {spec!r}: item {item!r} must be KEY=COLUMN")
        if key not in _KEYS:
            raise DataError(f"joint spec {spec!r}: unknown key {key!r}; keys: {list(_KEYS)}")
        if key in cols:
            raise DataError(f"joint spec {spec!r}: key {key!r} given twice")
        cols[key] = col
    if "pos" not in cols:
        raise DataError(f"joint spec {spec!r}: pos=COLUMN is required")
    try:
        return JointColumns(name=name.strip(), **cols)
    except ValueError as err:
        raise DataError(f"joint spec {spec!r}: {err}") from err


def read_csv_recording(
    path: str | Path,
    time_column: str,
    joints: Sequence[JointColumns],
    time_unit: str = "s",
    start_time_ns: int | None = None,
    metadata: dict | None = None,
) -> Recording:
    """Read a CSV with a header row into a :class:`Recording`.

    Args:
        path: the CSV file (comma separated, one header row).
        time_column: column of sample times in ``time_unit``; relative times (first value < 1e8 s) are shifted to
            start at ``start_time_ns`` (default: the file's modification time, whole seconds) because a zero
            header stamp means "unset" in ROS.
        joints: column mapping per joint.
        time_unit: ``s``, ``ms``, ``us`` or ``ns``.
        metadata: goes to ``episode.yaml`` (source file and columns are added).

    Returns:
        Recording with state arrays (N, J); velocity/effort columns that were not given are NaN (written as empty
        fields); ``command`` when every joint has a command column.

    Raises:
        FileNotFoundError: no such file.
        DataError: missing columns (lists the header), a non-numeric value (names file, line and column), no rows,
            duplicate joint names, command columns for only some joints, unknown time unit.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"CSV file {path} does not exist")
    if time_unit not in TIME_UNITS:
        raise DataError(f"time unit {time_unit!r} must be one of {list(TIME_UNITS)}")
    if not joints:
        raise DataError(f"{path}: no joint columns given (--joint NAME:pos=COL,...)")
    names = [j.name for j in joints]
    if len(set(names)) != len(names):
        raise DataError(f"{path}: joint names repeat: {names}")
    with path.open(newline="") as f:
        header = next(csv.reader(f), None)
    if not header:
        raise DataError(f"{path}: empty file, expected a header row")
    header = [h.strip() for h in header]
    wanted = [time_column] + [c for j in joints for c in (j.pos, j.vel, j.effort, j.command) if c]
    missing = [c for c in dict.fromkeys(wanted) if c not in header]
    if missing:
        raise DataError(f"{path}: column(s) {missing} not in header {header}")
    col_of = {c: header.index(c) for c in wanted}
    data = _load_numeric(path, header, sorted(set(col_of.values())))
    if data.shape[0] == 0:
        raise DataError(f"{path}: no data rows after the header")
    idx = {c: sorted(set(col_of.values())).index(i) for c, i in col_of.items()}

    def cols(key: str) -> np.ndarray:
        out = np.full((data.shape[0], len(joints)), np.nan)
        for k, j in enumerate(joints):
            c = getattr(j, key)
            if c:
                out[:, k] = data[:, idx[c]]
        return out

    t_ns = _time_ns(path, data[:, idx[time_column]] * TIME_UNITS[time_unit], time_column, start_time_ns)
    has_cmd = [j.command is not None for j in joints]
    if any(has_cmd) and not all(has_cmd):
        raise DataError(
            f"{path}: command columns given for some joints only ({[j.name for j in joints if j.command]}); "
            "give command= for every joint or none"
        )
    meta = dict(metadata or {})
    meta.setdefault("source_csv", str(path))
    meta.setdefault("columns", {"time": time_column, **{j.name: {k: getattr(j, k) for k in _KEYS if getattr(j, k)}
                                                        for j in joints}})
    kw = {}
    if all(has_cmd):
        kw = {"command_t_ns": t_ns.copy(), "command": cols("command")}
    return Recording(tuple(names), t_ns, cols("pos"), cols("vel"), cols("effort"), metadata=meta, **kw)


def _time_ns(path: Path, t: np.ndarray, time_column: str, start_time_ns: int | None) -> np.ndarray:
    """Sample times t (N,) [ns, float] -> int64 stamps [ns]; relative times start at ``start_time_ns``."""
    if not np.all(np.isfinite(t)):
        bad = int(np.argmax(~np.isfinite(t)))
        raise DataError(f"{path}: line {bad + 2} column {time_column}: time is not finite")
    if t[0] < 1e8 * NS_PER_S:
        if start_time_ns is None:
            start_time_ns = int(os.stat(path).st_mtime) * NS_PER_S
        t = t + start_time_ns
    return np.round(t).astype(np.int64)


def _load_numeric(path: Path, header: list[str], usecols: list[int]) -> np.ndarray:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "input contained no data": reported as DataError below
            data = np.loadtxt(path, delimiter=",", skiprows=1, usecols=usecols, ndmin=2, dtype=np.float64)
    except ValueError as err:
        # find the offending line and column for the message
        with path.open(newline="") as f:
            reader = csv.reader(f)
            next(reader)
            for line, row in enumerate(reader, start=2):
                for i in usecols:
                    try:
                        float(row[i])
                    except (ValueError, IndexError):
                        value = row[i] if i < len(row) else "<missing>"
                        raise DataError(
                            f"{path}: line {line} column {header[i]}: value {value!r} is not a number"
                        ) from err
        raise DataError(f"{path}: cannot parse numbers: {err}") from err
    return data


def convert_csv(
    csv_path: str | Path,
    out_dir: str | Path,
    time_column: str,
    joints: Sequence[JointColumns],
    time_unit: str = "s",
    storage: str = "mcap",
    start_time_ns: int | None = None,
    joint_state_topic: str = "/joint_states",
    metadata: dict | None = None,
) -> tuple[Path, Recording]:
    """Convert a CSV (see :func:`read_csv_recording`) to a rosbag2 directory ``out_dir``; returns (path, recording).

    Raises:
        FileNotFoundError, DataError: as :func:`read_csv_recording` and
            :func:`~deadzone_id_ros.data.bag.write_recording`.
    """
    rec = read_csv_recording(csv_path, time_column, joints, time_unit, start_time_ns, metadata)
    out = write_recording(rec, out_dir, storage=storage, joint_state_topic=joint_state_topic)
    return out, rec
