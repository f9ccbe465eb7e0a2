"""LeRobot datasets (format v2.x: meta/info.json + parquet episodes) as recordings (core of ``deadzone-id inspect``
and ``convert`` for them; no ROS).

A LeRobot dataset (huggingface/lerobot, ``LeRobotDataset`` format v2.0/v2.1) is a directory::

    meta/info.json                                   fps, robot_type, features {key: {dtype, shape, names}}, ...
    data/chunk-000/episode_000000.parquet            one row per frame: timestamp [s from the episode start],
                                                     frame_index, episode_index, observation.state (list per
                                                     joint), action (list), ...
    videos/...                                       camera streams (not read here)

It is read with pyarrow (Apache Arrow's parquet reader). The joints are the names of ``observation.state`` in
info.json (``"shoulder_pan.pos"`` -> ``shoulder_pan``; v2.0 writes ``{"motors": [...]}``). LeRobot does not record
the unit of the positions: degrees (``use_degrees=True``; SO-100 datasets of lerobot before its motor-bus rewrite) or
a range normalized to [-100, 100] (the SO-101 follower's default, which needs the arm's calibration file to become an
angle); the user states it (``--position-unit deg|rad``), and the normalized range is refused.

An inverse-dynamics model learns the joint torque from (q, dq, ddq): a dataset without effort cannot train one. The
effort is taken from a feature whose key or element names say ``load``, ``current``, ``effort`` or ``torque``
(e.g. ``observation.load`` with one value per joint, or ``shoulder_pan.load`` elements of ``observation.state``).
Its unit: a Feetech servo's ``Present_Load`` is the PWM duty in 0.1 % (:data:`~.effort_units.PRESENT_LOAD`),
``Present_Current`` the register's raw steps (:data:`CURRENT_UNIT`); either is carried into the bag's episode.yaml
(``effort_unit``), so the loader, the training report and the model artifact state it and the controller refuses a
model trained on it until a torque constant converts it to N·m (``--torque-constant JOINT:K``). A dataset whose
info.json states ``units`` {feature: "N*m"} for its effort feature (``deadzone-id export-lerobot`` writes it; LeRobot
ignores the key) is in N·m. Features of the observed arm (``observation.*``) are preferred, and an external-torque
feature is never taken for the effort.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataError
from ..stamps import NS_PER_S
from .effort_units import NEWTON_METRE, PRESENT_LOAD, normalize_unit
from .types import Recording

__all__ = ["CURRENT_UNIT", "INFO_FILE", "POSITION_UNITS", "LerobotDataset", "LerobotFeature",
           "find_lerobot_root", "format_lerobot_report", "lerobot_recordings", "lerobot_report", "not_a_bag_hint",
           "open_lerobot"]

INFO_FILE = "meta/info.json"
#: A Feetech servo's Present_Current, in the register's raw steps (the servo's manual gives the current per step).
CURRENT_UNIT = "Present_Current"
#: ``--position-unit`` choices and their factor to rad.
POSITION_UNITS = {"deg": np.pi / 180.0, "rad": 1.0}
_EFFORT_WORDS = ("load", "current", "effort", "torque")
_PARQUET_MAGIC = b"PAR1"


@dataclass(frozen=True)
class LerobotFeature:
    """One entry of info.json ``features``: key, dtype, shape and the element names (empty when none)."""

    key: str
    dtype: str
    shape: tuple[int, ...]
    names: tuple[str, ...]

    def describe(self) -> str:
        """``key dtype[shape]``, as inspect prints it."""
        return f"{self.key} {self.dtype}{list(self.shape)}"


@dataclass(frozen=True)
class LerobotDataset:
    """What a LeRobot dataset holds (:func:`open_lerobot`).

    Attributes:
        root: the dataset directory.  version: ``codebase_version``.  robot_type: as recorded ("" if none).
        fps: frames per second.  episodes: ``total_episodes``.  frames: ``total_frames``.
        features: every info.json feature, by key.  files: (F,) the parquet files read (sorted).
        joint_names: (J,) joints of ``observation.state``.  position_columns: (J,) their elements in it.
        effort_key: the feature holding effort ("" when none); effort_columns: (J,) its element per joint.
        effort_unit: :data:`~.effort_units.PRESENT_LOAD`, :data:`CURRENT_UNIT`, "N*m" (info.json ``units`` says so)
            or "unknown" ("" when no effort).
        position_unit: "rad" or "deg" where info.json ``units`` states it for observation.state (an export of
            ``deadzone-id export-lerobot``), else "" (LeRobot does not record it).
    """

    root: Path
    version: str
    robot_type: str
    fps: float
    episodes: int
    frames: int
    features: dict[str, LerobotFeature]
    files: tuple[Path, ...]
    joint_names: tuple[str, ...]
    position_columns: tuple[int, ...]
    effort_key: str = ""
    effort_columns: tuple[int, ...] = field(default_factory=tuple)
    effort_unit: str = ""
    position_unit: str = ""

    @property
    def has_effort(self) -> bool:
        """True when a feature carries effort for every joint."""
        return bool(self.effort_key)

    def summary(self) -> str:
        """One sentence: version, robot, fps, episodes, frames, joints."""
        robot = f", robot {self.robot_type}" if self.robot_type else ""
        return (f"LeRobot dataset {self.root} (format {self.version}{robot}): {self.fps:g} fps, {self.episodes} "
                f"episode(s), {self.frames} frames; joints {list(self.joint_names)}")

    def no_effort_reason(self) -> str:
        """Why it cannot train an inverse-dynamics model and what to record instead ("" when it has effort)."""
        if self.has_effort:
            return ""
        holds = ", ".join(sorted(k for k in self.features if not k.startswith("observation.images")))
        return (f"{self.summary()}; it holds {holds} (positions and goal positions) but no effort (a servo's load or "
                "current): an inverse-dynamics model learns the joint torque from (q, dq, ddq), so it cannot be "
                "trained on these data. Record the servos' Present_Load (or Present_Current) with the positions, "
                "e.g. as an observation.load feature with one value per joint (names 'shoulder_pan.load', ...) or as "
                "'<joint>.load' elements of observation.state, then inspect and convert again")


def find_lerobot_root(path: str | Path) -> Path | None:
    """The LeRobot dataset ``path`` is or lies in (a directory with meta/info.json: ``path`` itself or one of its
    parents, for a parquet file under ``data/chunk-*/``), or None."""
    p = Path(path)
    for cand in ([p] if p.is_dir() else []) + list(p.parents)[:4]:
        if (cand / INFO_FILE).is_file():
            return cand
    return None


def not_a_bag_hint(path: str | Path) -> str:
    """For a "not a bag" message: what to do when ``path`` is (in) a LeRobot dataset or a parquet file ("" else)."""
    root = find_lerobot_root(path)
    if root is not None:
        return (f"; {root} is a LeRobot dataset: `deadzone-id inspect {root}` says what it holds, and `deadzone-id "
                f"convert {path} --out BAGS --position-unit deg` writes bags of it when it carries effort")
    p = Path(path)
    if p.is_file():
        with p.open("rb") as f:
            if f.read(4) == _PARQUET_MAGIC:
                return ("; it is a parquet file: a LeRobot episode is read with its dataset (the directory with "
                        "meta/info.json)")
    return ""


def _names(spec: Any) -> tuple[str, ...]:
    """info.json ``names``: a list, or a dict with one list ({"motors": [...]}, v2.0), or None."""
    if isinstance(spec, dict):
        lists = [v for v in spec.values() if isinstance(v, list)]
        spec = lists[0] if len(lists) == 1 else None
    return tuple(str(n) for n in spec) if isinstance(spec, list) else ()


def _joint(name: str) -> tuple[str, str]:
    """``"shoulder_pan.pos"`` -> ("shoulder_pan", "pos"); a name without a suffix -> (name, "")."""
    base, dot, kind = name.rpartition(".")
    return (base, kind) if dot and base else (name, "")


def open_lerobot(path: str | Path) -> LerobotDataset:
    """Read a LeRobot dataset's meta/info.json and list its parquet files.

    Args:
        path: the dataset directory, or one parquet file in it (then only that file is read later).

    Returns:
        the dataset (:class:`LerobotDataset`).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        DataError: no meta/info.json above ``path``; info.json not JSON or missing ``fps``/``features``; no
            ``observation.state`` feature or no names for it; no parquet file (each names the file and key).
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"LeRobot dataset {p} does not exist")
    root = find_lerobot_root(p)
    if root is None:
        raise DataError(f"{p}: not a LeRobot dataset (no {INFO_FILE} in it or above it)")
    info_path = root / INFO_FILE
    try:
        info = json.loads(info_path.read_text())
        fps = float(info["fps"])
        raw = dict(info["features"])
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DataError(f"{info_path}: not valid JSON: {err}") from err
    except (KeyError, TypeError, ValueError) as err:
        raise DataError(f"{info_path}: missing or malformed key {err} (LeRobot writes fps and features)") from err
    features = {str(k): LerobotFeature(str(k), str(v.get("dtype", "?")), tuple(int(s) for s in v.get("shape") or ()),
                                       _names(v.get("names")))
                for k, v in raw.items() if isinstance(v, dict)}
    state = features.get("observation.state")
    if state is None:
        raise DataError(f"{info_path}: no observation.state feature (features: {sorted(features)})")
    if not state.names:
        raise DataError(f"{info_path}: features.observation.state has no names: the joints are unknown")
    parts = [_joint(n) for n in state.names]
    position = [i for i, (_, kind) in enumerate(parts) if kind in ("pos", "")]
    joints = tuple(parts[i][0] for i in position)
    effort_key, effort_cols, unit = _find_effort(features, joints, parts)
    units = info.get("units")  # deadzone-id export-lerobot states them (LeRobot does not read this key)
    if effort_key and isinstance(units, dict) and normalize_unit(str(units.get(effort_key, ""))) == NEWTON_METRE:
        unit = NEWTON_METRE
    stated = str(units.get("observation.state", "")) if isinstance(units, dict) else ""
    files = (p,) if p.is_file() else tuple(sorted((root / "data").glob("**/*.parquet")))
    if not files:
        raise DataError(f"{root}: no parquet file under data/ (LeRobot writes data/chunk-000/episode_000000.parquet)")
    return LerobotDataset(root, str(info.get("codebase_version", "?")), str(info.get("robot_type") or ""), fps,
                          int(info.get("total_episodes", 0)), int(info.get("total_frames", 0)), features, files,
                          joints, tuple(position), effort_key, effort_cols, unit,
                          stated if stated in POSITION_UNITS else "")


def _unit_of(word: str) -> str:
    return PRESENT_LOAD if "load" in word else CURRENT_UNIT if "current" in word else "unknown"


def _find_effort(features: dict[str, LerobotFeature], joints: tuple[str, ...],
                 state_parts: list[tuple[str, str]]) -> tuple[str, tuple[int, ...], str]:
    """(feature key, element per joint, unit) of the effort, or ("", (), "") when the dataset has none."""
    for i_kind in _EFFORT_WORDS:  # elements of observation.state named <joint>.<load|current|...>
        cols = {j: i for i, (j, kind) in enumerate(state_parts) if i_kind in kind.lower()}
        if joints and all(j in cols for j in joints):
            return "observation.state", tuple(cols[j] for j in joints), _unit_of(i_kind)
    # the observed arm's features first (a teleoperation export also writes the leader's, leader.effort); an
    # external-torque estimate is not the joint's effort
    for key, feat in sorted(features.items(), key=lambda kv: (not kv[0].startswith("observation."), kv[0])):
        word = next((w for w in _EFFORT_WORDS if w in key.lower().rpartition(".")[2]), None)
        if word is None or key == "action" or "external" in key.lower():
            continue
        names = [_joint(n)[0] for n in feat.names]
        if names and all(j in names for j in joints):
            return key, tuple(names.index(j) for j in joints), _unit_of(word)
        if not names and feat.shape == (len(joints),):
            return key, tuple(range(len(joints))), _unit_of(word)
    return "", (), ""


def _read_table(ds: LerobotDataset, columns: Sequence[str]) -> dict[str, Any]:
    """The ``columns`` of every parquet file of ``ds``, concatenated (pyarrow), as {column: pyarrow array}.

    Raises:
        DataError: a file is not parquet or lacks a column (named with the file's columns).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = []
    for f in ds.files:
        try:
            schema = pq.read_schema(f)
        except (pa.ArrowException, OSError) as err:
            raise DataError(f"{f}: not a parquet file pyarrow can read: {err}") from err
        missing = [c for c in columns if c not in schema.names]
        if missing:
            raise DataError(f"{f}: column(s) {missing} missing (columns: {schema.names})")
        tables.append(pq.read_table(f, columns=list(columns)))
    table = pa.concat_tables(tables)
    return {c: table.column(c).combine_chunks() for c in columns}


def _matrix(ds: LerobotDataset, key: str, column: Any, cols: tuple[int, ...]) -> np.ndarray:
    """(N, J) float of the list column ``column`` (``key``) at elements ``cols``.

    Raises:
        DataError: rows of different lengths or shorter than needed (names the feature and first row).
    """
    import pyarrow as pa

    if not (pa.types.is_list(column.type) or pa.types.is_fixed_size_list(column.type)
            or pa.types.is_large_list(column.type)):
        raise DataError(f"{ds.root}: feature {key} is {column.type}, not a list per frame")
    lengths = np.asarray(column.value_lengths().fill_null(0))
    width = int(lengths.max()) if len(lengths) else 0
    bad = np.flatnonzero(lengths != width)
    if len(bad) or width <= max(cols, default=-1):
        row = int(bad[0]) if len(bad) else 0
        raise DataError(f"{ds.root}: feature {key}: frame {row} has {int(lengths[row]) if len(lengths) else 0} "
                        f"values, expected {max(width, max(cols, default=-1) + 1)}")
    values = np.asarray(column.flatten().to_numpy(zero_copy_only=False), dtype=float).reshape(len(lengths), width)
    return values[:, list(cols)]


def lerobot_recordings(ds: LerobotDataset, position_unit: str, start_time_ns: int) -> list[tuple[int, Recording]]:
    """One :class:`Recording` per episode of ``ds``: positions converted to rad, effort as recorded (its unit in the
    metadata: ``effort_unit``), no velocity (NaN: the loader differentiates q), stamps ``start_time_ns`` +
    ``timestamp``.

    Args:
        ds: the dataset (:func:`open_lerobot`); it must carry effort.
        position_unit: the unit of observation.state positions, a key of :data:`POSITION_UNITS`.
        start_time_ns: stamp of each episode's timestamp 0 [ns] (a zero stamp means "unset" in ROS).

    Returns:
        [(episode_index, recording)], by episode index.

    Raises:
        DataError: no effort (:meth:`LerobotDataset.no_effort_reason`), an unknown position unit, missing columns,
            ragged lists, an episode whose timestamps do not increase (names episode and frame).
    """
    if not ds.has_effort:
        raise DataError(ds.no_effort_reason())
    if position_unit not in POSITION_UNITS:
        raise DataError(f"position unit {position_unit!r} must be one of {list(POSITION_UNITS)}; LeRobot does not "
                        "record it (a range normalized to [-100, 100] needs the arm's calibration and is not read)")
    cols = dict.fromkeys(["timestamp", "episode_index", "observation.state", ds.effort_key])
    data = _read_table(ds, list(cols))
    t = np.asarray(data["timestamp"].to_numpy(zero_copy_only=False), dtype=float)
    episode = np.asarray(data["episode_index"].to_numpy(zero_copy_only=False), dtype=np.int64)
    q = _matrix(ds, "observation.state", data["observation.state"], ds.position_columns) * POSITION_UNITS[position_unit]
    effort = _matrix(ds, ds.effort_key, data[ds.effort_key], ds.effort_columns)
    out = []
    for e in np.unique(episode):
        rows = np.flatnonzero(episode == e)
        rows = rows[np.argsort(t[rows], kind="stable")]
        steps = np.diff(t[rows])
        if np.any(steps <= 0):
            k = int(np.flatnonzero(steps <= 0)[0])
            raise DataError(f"{ds.root}: episode {int(e)}: timestamp does not increase at frame {k + 1} "
                            f"({t[rows][k]:.4f} s then {t[rows][k + 1]:.4f} s)")
        stamps = int(start_time_ns) + np.round(t[rows] * NS_PER_S).astype(np.int64)
        meta = {"robot": ds.robot_type, "source": "lerobot", "lerobot_dataset": str(ds.root),
                "lerobot_episode": int(e), "lerobot_fps": ds.fps, "position_unit_recorded": position_unit,
                "effort_feature": ds.effort_key, "effort_unit": ds.effort_unit,
                "effort_unit_reason": f"LeRobot feature {ds.effort_key} ({_effort_kind(ds)})"}
        out.append((int(e), Recording(ds.joint_names, stamps, q[rows], np.full((len(rows), len(ds.joint_names)),
                                                                                  np.nan), effort[rows],
                                      metadata=meta)))
    return out


def _effort_kind(ds: LerobotDataset) -> str:
    return {PRESENT_LOAD: "a servo's Present_Load, PWM duty in 0.1 %",
            CURRENT_UNIT: "a servo's Present_Current, raw register steps",
            NEWTON_METRE: "joint torque, N·m as info.json units states"}.get(ds.effort_unit, "unit unknown")


def lerobot_report(ds: LerobotDataset) -> dict[str, Any]:
    """inspect's entry for a LeRobot dataset (JSON-ready): what it holds, per-joint position range, the effort and
    its unit, whether it can be trained on and what to do next (``next``) or why not (``reason``)."""
    data = _read_table(ds, ["observation.state", "episode_index"])
    state = _matrix(ds, "observation.state", data["observation.state"], ds.position_columns)
    ranges = {j: [float(state[:, k].min()), float(state[:, k].max())] if len(state) else None
              for k, j in enumerate(ds.joint_names)}
    report: dict[str, Any] = {
        "path": str(ds.root), "format": f"lerobot {ds.version}", "robot_type": ds.robot_type, "fps": ds.fps,
        "episodes": ds.episodes, "frames": ds.frames, "files": [str(f) for f in ds.files],
        "features": {k: f.describe() for k, f in ds.features.items()}, "joints": list(ds.joint_names),
        "position_range_recorded": ranges,
        "position_unit": (f"{ds.position_unit} (info.json units)" if ds.position_unit
                          else "not recorded by LeRobot: degrees, or a range normalized to [-100, 100]"),
        "effort": {"feature": ds.effort_key, "unit": ds.effort_unit, "what": _effort_kind(ds)} if ds.has_effort
        else None,
        "trainable": ds.has_effort,
    }
    if ds.has_effort:
        unit = f"--position-unit {ds.position_unit}" if ds.position_unit else "--position-unit deg (or rad)"
        report["next"] = f"deadzone-id convert {ds.root} --out BAGS {unit}, then train on BAGS/episode_*" + (
            "" if ds.effort_unit == NEWTON_METRE else f"; the effort is in {ds.effort_unit}: give --torque-constant "
            "JOINT:K (N·m per unit) to train a model the controller can run")
    else:
        report["reason"] = ds.no_effort_reason()
    return report


def format_lerobot_report(report: dict[str, Any]) -> str:
    """The text inspect prints for :func:`lerobot_report`."""
    lines = [f"LeRobot dataset {report['path']} ({report['format']}"
             + (f", robot {report['robot_type']})" if report["robot_type"] else ")"),
             f"  {report['fps']:g} fps, {report['episodes']} episode(s), {report['frames']} frames, "
             f"{len(report['files'])} parquet file(s)",
             "  features: " + ", ".join(report["features"].values()),
             f"  joints (observation.state): {', '.join(report['joints'])}",
             f"  positions: unit {report['position_unit']}; recorded ranges "
             + ", ".join(f"{j} [{r[0]:.4g}, {r[1]:.4g}]" for j, r in report["position_range_recorded"].items() if r)]
    if report["effort"]:
        e = report["effort"]
        lines.append(f"  effort: {e['feature']} ({e['what']}; unit {e['unit']})")
        lines.append(f"  trainable: yes, after converting: {report['next']}")
    else:
        lines.append("  effort: none")
        lines.append(f"  trainable: no: {re.sub(r'^.*?; it holds', 'it holds', report['reason'])}")
    return "\n".join(lines)
