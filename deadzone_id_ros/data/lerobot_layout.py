"""Writing LeRobot's dataset layout, format v2.1, with pyarrow (core, no ROS; :mod:`.lerobot_export` fills it).

The layout of huggingface/lerobot's ``LeRobotDataset`` at ``CODEBASE_VERSION = "v2.1"`` (lerobot up to 0.3.x)::

    meta/info.json              codebase_version, robot_type, total_episodes, total_frames, total_tasks,
                                total_videos, total_chunks, chunks_size, fps, splits, data_path, video_path,
                                features {key: {dtype, shape, names}}
    meta/episodes.jsonl         {"episode_index", "tasks": [text], "length"} per episode
    meta/tasks.jsonl            {"task_index", "task"} per task
    meta/episodes_stats.jsonl   {"episode_index", "stats": {key: {min, max, mean, std, count}}} per episode
    data/chunk-000/episode_000000.parquet   one row per frame

Each frame row holds one list of float32 per vector feature, ``timestamp`` (float32, [s] from the episode's first
frame, ``frame_index / fps``), ``frame_index``, ``episode_index``, ``index`` (over the dataset) and ``task_index``
(int64). Statistics are over an episode's frames per element, as LeRobot's ``compute_episode_stats`` (NaN left out).
info.json also carries ``units`` {feature: unit}, a key LeRobot does not read.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DataError

__all__ = ["CHUNKS_SIZE", "CODEBASE_VERSION", "DATA_PATH", "EPISODES_FILE", "EPISODES_STATS_FILE", "INDEX_FEATURES",
           "TASKS_FILE", "EpisodeFrames", "FeatureSpec", "write_lerobot"]

CODEBASE_VERSION = "v2.1"
CHUNKS_SIZE = 1000
DATA_PATH = "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet"
EPISODES_FILE = "meta/episodes.jsonl"
TASKS_FILE = "meta/tasks.jsonl"
EPISODES_STATS_FILE = "meta/episodes_stats.jsonl"
#: The per-frame features LeRobot adds to every dataset: (key, dtype).
INDEX_FEATURES = (("timestamp", "float32"), ("frame_index", "int64"), ("episode_index", "int64"), ("index", "int64"),
                  ("task_index", "int64"))


@dataclass(frozen=True)
class FeatureSpec:
    """A vector feature: its key, the suffix of its element names (``"<joint>.<suffix>"``) and its unit."""

    key: str
    suffix: str
    unit: str


@dataclass(frozen=True)
class EpisodeFrames:
    """One episode to write: its index, task text and {feature key: (N, J) values}."""

    index: int
    task: str
    values: Mapping[str, np.ndarray]


def _stats(values: np.ndarray) -> dict[str, list[float | None]]:
    """LeRobot's per-feature statistics of (N, D) values over the frames; ``count`` is [N]."""
    with warnings.catch_warnings():  # an all-NaN column gives NaN (JSON null), not a warning
        warnings.simplefilter("ignore", RuntimeWarning)
        out = {name: np.asarray(fn(values, axis=0), dtype=float)
               for name, fn in (("min", np.nanmin), ("max", np.nanmax), ("mean", np.nanmean), ("std", np.nanstd))}
    stats: dict[str, list[float | None]] = {k: [float(x) if np.isfinite(x) else None for x in v]
                                            for k, v in out.items()}
    stats["count"] = [float(len(values))]
    return stats


def _list_column(values: np.ndarray) -> object:
    """(N, D) float -> a pyarrow list<float32> column, one list per row."""
    import pyarrow as pa

    n, d = values.shape
    offsets = pa.array(np.arange(n + 1, dtype=np.int32) * d)
    return pa.ListArray.from_arrays(offsets, pa.array(values.astype(np.float32).ravel()))


def write_lerobot(root: str | Path, fps: float, robot_type: str, joints: Sequence[str], specs: Sequence[FeatureSpec],
                  episodes: Sequence[EpisodeFrames], extra_info: Mapping[str, object] | None = None) -> Path:
    """Write ``episodes`` as a LeRobot v2.1 dataset at ``root`` (module docstring: the layout).

    Args:
        root: the directory to create (must not exist).  fps: frames per second (written as an integer when it is
            one).  robot_type: info.json ``robot_type``.  joints: (J,) element names' prefixes.
        specs: the vector features, in column order.  episodes: their frames, indices 0..E-1 in order, each with
            every key of ``specs`` as (N, J) values.  extra_info: more info.json keys (LeRobot ignores them).

    Returns:
        ``root``.

    Raises:
        DataError: ``root`` exists; an episode out of order, lacking a feature or with values of the wrong shape.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = Path(root)
    if root.exists():
        raise DataError(f"cannot write {root}: it exists")
    tasks = list(dict.fromkeys(e.task for e in episodes))
    j = len(joints)
    meta_rows: list[str] = []
    stats_rows: list[str] = []
    index = 0
    for k, ep in enumerate(episodes):
        if ep.index != k:
            raise DataError(f"episode {ep.index} given as the {k}th: episodes must be numbered 0, 1, ... in order")
        n = len(ep.values[specs[0].key]) if specs else 0
        for spec in specs:
            v = ep.values.get(spec.key)
            if v is None or np.shape(v) != (n, j):
                raise DataError(f"episode {k}: feature {spec.key} must be ({n}, {j}) values, got "
                                f"{None if v is None else np.shape(v)}")
        cols: dict[str, object] = {s.key: _list_column(np.asarray(ep.values[s.key], dtype=float)) for s in specs}
        frame = np.arange(n, dtype=np.int64)
        ints = {"frame_index": frame, "episode_index": np.full(n, k, dtype=np.int64), "index": index + frame,
                "task_index": np.full(n, tasks.index(ep.task), dtype=np.int64)}
        cols["timestamp"] = pa.array((frame / fps).astype(np.float32))
        cols.update({name: pa.array(v) for name, v in ints.items()})
        path = root / DATA_PATH.format(episode_chunk=k // CHUNKS_SIZE, episode_index=k)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table(cols), path)
        stats = {s.key: _stats(np.asarray(ep.values[s.key], dtype=float)) for s in specs}
        stats["timestamp"] = _stats((frame / fps).astype(np.float32)[:, None])
        stats.update({name: _stats(v[:, None].astype(float)) for name, v in ints.items()})
        meta_rows.append(json.dumps({"episode_index": k, "tasks": [ep.task], "length": n}))
        stats_rows.append(json.dumps({"episode_index": k, "stats": stats}))
        index += n
    features: dict[str, object] = {s.key: {"dtype": "float32", "shape": [j], "names": [f"{x}.{s.suffix}"
                                                                                        for x in joints]}
                                   for s in specs}
    features.update({key: {"dtype": dtype, "shape": [1], "names": None} for key, dtype in INDEX_FEATURES})
    info = {
        "codebase_version": CODEBASE_VERSION, "robot_type": robot_type, "total_episodes": len(episodes),
        "total_frames": index, "total_tasks": len(tasks), "total_videos": 0,
        "total_chunks": (len(episodes) + CHUNKS_SIZE - 1) // CHUNKS_SIZE, "chunks_size": CHUNKS_SIZE,
        "fps": int(fps) if float(fps).is_integer() else float(fps), "splits": {"train": f"0:{len(episodes)}"},
        "data_path": DATA_PATH, "video_path": None, "features": features,
        "units": {**{s.key: s.unit for s in specs}, "timestamp": "s"}, **dict(extra_info or {}),
    }
    meta = root / "meta"
    meta.mkdir(parents=True, exist_ok=True)
    (meta / "info.json").write_text(json.dumps(info, indent=4) + "\n")
    (root / EPISODES_FILE).write_text("".join(r + "\n" for r in meta_rows))
    (root / TASKS_FILE).write_text("".join(json.dumps({"task_index": i, "task": t}) + "\n" for i, t in
                                           enumerate(tasks)))
    (root / EPISODES_STATS_FILE).write_text("".join(r + "\n" for r in stats_rows))
    return root
