"""CSV time series -> rosbag2 of sensor_msgs/JointState (core of ``deadzone-id convert``; no ROS).

Non-ROS logs (for example the DFKI double-pendulum CSVs: ``time, pos_meas1, vel_meas1, tau_meas1, ...``) are
turned into the same kind of bag a live recording gives, so they go through the same data path. The user names the
columns: one time column and, per joint, ``NAME:pos=COL[,vel=COL][,effort=COL][,command=COL]``. A field without a
column is written as an empty array (JointState's convention for "not available"); ``command`` columns (all joints
or none) become ``/effort_controller/commands``.
"""

from __future__ import annotations

import os
import re
import shutil
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError
from ..stamps import NS_PER_S
from .bag import write_recording
from .csv_table import CsvDialect, check_time, read_table, sniff_dialect
from .types import Recording

__all__ = ["JointColumns", "TIME_UNITS", "convert_csv", "parse_joint_spec", "read_csv_recording", "time_resets"]

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
    delimiter: str | None = None,
    decimal: str | None = None,
) -> Recording:
    """Read a CSV with a header row into a :class:`Recording`.

    Args:
        path: the CSV file (one header row; a UTF-8 byte-order mark is ignored).
        time_column: column of sample times in ``time_unit``; relative times (first value < 1e8 s) are shifted to
            start at ``start_time_ns`` (default: the file's modification time, whole seconds) because a zero
            header stamp means "unset" in ROS.
        joints: column mapping per joint.
        time_unit: ``s``, ``ms``, ``us`` or ``ns``.
        metadata: goes to ``episode.yaml`` (source file and columns are added).
        delimiter, decimal: the separator (``,`` ``;`` tab) and decimal mark (``.`` ``,``); None detects them
            (:func:`~deadzone_id_ros.data.csv_table.sniff_dialect`).

    Returns:
        Recording with state arrays (N, J); velocity/effort columns that were not given are NaN (written as empty
        fields); ``command`` when every joint has a command column.

    Raises:
        FileNotFoundError: no such file.
        DataError: missing columns (lists the header), a non-numeric value (names file, line and column), no rows,
            duplicate joint names, command columns for only some joints, unknown time unit, a time column that is
            not in ``time_unit`` (epoch milliseconds read as seconds, an implausible sample rate; names the line,
            column and the ``--time-unit`` that fits).
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
    has_cmd = [j.command is not None for j in joints]
    if any(has_cmd) and not all(has_cmd):
        raise DataError(f"{path}: command columns given for some joints only "
                        f"({[j.name for j in joints if j.command]}); give command= for every joint or none")
    wanted = list(dict.fromkeys([time_column] + [c for j in joints for c in (j.pos, j.vel, j.effort, j.command) if c]))
    dialect = sniff_dialect(path, delimiter, decimal)
    _, data = read_table(path, dialect, wanted)
    if data.shape[0] == 0:
        raise DataError(f"{path}: no data rows after the header")
    idx = {c: k for k, c in enumerate(wanted)}

    def cols(key: str) -> np.ndarray:
        out = np.full((data.shape[0], len(joints)), np.nan)
        for k, j in enumerate(joints):
            c = getattr(j, key)
            if c:
                out[:, k] = data[:, idx[c]]
        return out

    t = data[:, idx[time_column]]
    check_time(path, t, time_column, time_unit, {u: k / NS_PER_S for u, k in TIME_UNITS.items()})
    t_ns = _time_ns(path, t, TIME_UNITS[time_unit], start_time_ns)
    meta = dict(metadata or {})
    meta.setdefault("source_csv", str(path))
    meta.setdefault("columns", {"time": time_column, **{j.name: {k: getattr(j, k) for k in _KEYS if getattr(j, k)}
                                                        for j in joints}})
    if dialect != CsvDialect():
        meta.setdefault("csv_dialect", {"delimiter": dialect.delimiter, "decimal": dialect.decimal})
    kw: dict[str, Any] = {}
    if all(has_cmd):
        kw = {"command_t_ns": t_ns.copy(), "command": cols("command")}
    return Recording(tuple(names), t_ns, cols("pos"), cols("vel"), cols("effort"), metadata=meta, **kw)


def _time_ns(path: Path, t: np.ndarray, ns_per_unit: float, start_time_ns: int | None) -> np.ndarray:
    """Sample times t (N,) [unit] -> int64 stamps [ns]; relative times start at ``start_time_ns``.

    Offsets from the first time are rounded to whole nanoseconds before the (integer) start is added, so epoch
    stamps keep nanosecond resolution (a float at 1e18 ns does not)."""
    rel = np.round((t - t[0]) * ns_per_unit).astype(np.int64)
    first = float(t[0]) * ns_per_unit
    if first < 1e8 * NS_PER_S:
        if start_time_ns is None:
            start_time_ns = int(os.stat(path).st_mtime) * NS_PER_S
        return int(start_time_ns) + int(round(first)) + rel
    return int(round(first)) + rel


def time_resets(path: Path, t_ns: np.ndarray, time_column: str, max_back_s: float = 0.1) -> list[str]:
    """Warnings for every place where the time column jumps back by more than ``max_back_s`` [s] (a reset, two
    logs appended), naming the line; the data set builder splits episodes there (``max_gap_s``)."""
    step = np.diff(t_ns)
    return [f"{path}: line {k + 3} column {time_column}: time jumps back by {-step[k] / NS_PER_S:.3f} s (a reset or "
            "logs appended); the bag keeps the file order and the data set splits there"
            for k in np.nonzero(step < -max_back_s * NS_PER_S)[0]]


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
    delimiter: str | None = None,
    decimal: str | None = None,
) -> tuple[Path, Recording]:
    """Convert a CSV (see :func:`read_csv_recording`) to a rosbag2 directory ``out_dir``; returns (path, recording).

    Everything is checked before writing; the bag is written to a temporary sibling and renamed at the end, so a
    failure leaves nothing behind. A time column that jumps back (a reset) is warned about with the line
    (:func:`time_resets`); the bag keeps the file order (log times increase) so the reset stays visible.

    Raises:
        FileNotFoundError, DataError: as :func:`read_csv_recording` and
            :func:`~deadzone_id_ros.data.bag.write_recording`.
    """
    rec = read_csv_recording(csv_path, time_column, joints, time_unit, start_time_ns, metadata, delimiter, decimal)
    for w in time_resets(Path(csv_path), rec.state_t_ns, time_column):
        warnings.warn(w, stacklevel=2)
    out = Path(out_dir)
    if out.exists():
        raise DataError(f"cannot write bag {out}: it exists (choose another --out)")
    # log times keep the file order (a reset stays a reset); header stamps are the file's times
    step = np.diff(rec.state_t_ns)
    log_ns = np.concatenate([[rec.state_t_ns[0]], rec.state_t_ns[0] + np.cumsum(np.where(step > 0, step, 1))])
    if rec.command_t_ns is not None:
        rec.command_t_ns = log_ns.copy()
    # written under a hidden directory and moved into place when complete; the bag itself carries its final name there,
    # because rosbag2 names its storage file after the bag directory (metadata.yaml lists that name)
    tmp = out.parent / f".{out.name}.partial-{os.getpid()}"
    try:
        tmp.mkdir(parents=True)
        write_recording(rec, tmp / out.name, storage=storage, joint_state_topic=joint_state_topic,
                        state_log_ns=log_ns)
        (tmp / out.name).rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return out, rec
